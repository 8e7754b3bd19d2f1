"""The labeled sentences of one experiment corpus, held compactly: token texts, spacing, gold tags; the fixed train subsample.

Flair `Sentence` objects cost ~630 bytes a token (1.37 GB for LER's 2.18 M tokens, `benchmarks/tagging_memory.py`),
yet a run trains from cached arrays and needs Flair sentences only for the batch a live embedding (`char`, a
fine-tuned BERT) embeds and while a cache array is computed: `LabeledSplit.flair_sentences` builds them on demand.
"""

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flair.data import Sentence

from flairsuite.corpora.break_marks import break_marks, mark_breaks
from flairsuite.corpora.labeled import kept, missing_type_warnings, read_splits
from flairsuite.corpora.loading import to_flair
from flairsuite.corpora.long_sentences import split_note
from flairsuite.corpora.readers import TaggedSentence, document_starts
from flairsuite.corpora.registry import SPLITS, DatasetSpec, dataset
from flairsuite.errors import FlairsuiteError

log = logging.getLogger("flairsuite")

SUBSAMPLE_SEED = 1  # the train subsample is fixed: the same sentences for every run, seed and tagger


@dataclass(frozen=True)
class LabeledSplit:
    """One split: each sentence's token texts, whether whitespace follows each token (a byte 0/1 a token) and gold tags
    (BIO for NER). A word or tag that recurs is one string object, stored once. `starts`: the sentences (other than
    the first) that begin a document, for document context: after a `-DOCSTART-` line, the first of another file of
    the split, or after a gap in a sample; without any, the split is one document in file order. `breaks`: per sentence
    that holds any, the indices of its line-end break marks (`flairsuite.corpora.break_marks`; only a corpus read with
    `line_break` has them), which the character LMs read joined."""

    texts: list[tuple[str, ...]]
    spaces: list[bytes]
    tags: list[list[str]]
    starts: frozenset[int] = frozenset()
    breaks: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, sentences: Sequence[TaggedSentence]) -> "LabeledSplit":
        """The split of the reader's sentences."""
        strings: dict[str, str] = {}  # each distinct string's first object, for this split only
        marks = {i: tuple(found) for i, s in enumerate(sentences) if s.line_ends and (found := break_marks(s.tokens, s.line_ends))}
        return cls(
            [tuple(strings.setdefault(token, token) for token in s.tokens) for s in sentences],
            [bytes(1 if space else 0 for space in s.whitespace_after) for s in sentences],
            [[strings.setdefault(tag, tag) for tag in s.tags] for s in sentences],
            frozenset(document_starts(sentences)),
            marks,
        )

    def __len__(self) -> int:
        return len(self.texts)

    def __add__(self, other: "LabeledSplit") -> "LabeledSplit":
        starts = self.starts | {len(self)} | {len(self) + i for i in other.starts}  # two splits are two documents at least
        breaks = {**self.breaks, **{len(self) + i: marks for i, marks in other.breaks.items()}}
        return LabeledSplit(self.texts + other.texts, self.spaces + other.spaces, self.tags + other.tags, frozenset(starts), breaks)

    @property
    def tokens(self) -> int:
        """Number of tokens."""
        return sum(len(tags) for tags in self.tags)

    def tagged(self, index: int) -> TaggedSentence:
        """Sentence `index` as the reader gave it (without line numbers; its break marks as the flagged tokens)."""
        return TaggedSentence(list(self.texts[index]), list(self.tags[index]), [], [bool(b) for b in self.spaces[index]],
                              line_ends=list(self.breaks.get(index, ())))

    def flair_sentence(self, index: int) -> Sentence:
        """Sentence `index`, unlabeled: the tokens, spacing and line-end break marks that embeddings read."""
        sentence = Sentence(list(self.texts[index]))
        for token, space in zip(sentence.tokens, self.spaces[index]):
            token.whitespace_after = space
        return mark_breaks(sentence, self.breaks.get(index, ()))

    def flair_sentences(self, indices: Optional[Sequence[int]] = None, context_chars: int = 0) -> list[Sentence]:
        """Unlabeled Flair sentences `indices` (default: all). With `context_chars`, each linked (Flair's
        `_previous_sentence`, `_next_sentence`) to the neighbouring sentences of its document that hold the first
        `context_chars` characters on each side (as tokenized text), built for this call; the links end at the ends
        of its document."""
        chosen = range(len(self)) if indices is None else indices
        if not context_chars:
            return [self.flair_sentence(i) for i in chosen]
        built: dict[int, Sentence] = {}

        def sentence(index: int) -> Sentence:
            if index not in built:
                built[index] = self.flair_sentence(index)
                built[index]._has_context = True  # linked here: Flair's own linking leaves it alone
            return built[index]

        for i in chosen:
            for step in (-1, 1):
                j, length = i, 0
                while length < context_chars and (j + step if step > 0 else j) not in self.starts and 0 <= j + step < len(self):
                    self.link(sentence(j), sentence(j + step), step)
                    j += step
                    length += sum(map(len, self.texts[j])) + len(self.texts[j])
        return [sentence(i) for i in chosen]

    @staticmethod
    def link(sentence: Sentence, neighbour: Sentence, step: int) -> None:
        """Make `neighbour` the next (`step` 1) or previous (-1) sentence of `sentence`, and the reverse."""
        if step > 0:
            sentence._next_sentence, neighbour._previous_sentence = neighbour, sentence
        else:
            sentence._previous_sentence, neighbour._next_sentence = neighbour, sentence

    def labeled_sentences(self, spec: DatasetSpec) -> list[Sentence]:
        """All sentences as Flair sentences carrying the gold labels (`to_flair`), for Flair's own trainer and evaluation."""
        return [to_flair(self.tagged(i), spec) for i in range(len(self))]


def subsample_note(fraction: Optional[float]) -> Optional[str]:
    """How a subsampled train split is described in metrics and table footnotes."""
    return None if fraction is None else f"{fraction * 100:g}% of train (fixed sample, seed {SUBSAMPLE_SEED}); full dev and test"


def subsample(count: int, fraction: float) -> list[int]:
    """The sentence indices of the fixed subsample: round(count x fraction) sentences, in corpus order."""
    chosen = random.Random(SUBSAMPLE_SEED).sample(range(count), max(1, round(count * fraction)))
    return sorted(chosen)


def load_labeled(name: str, options: dict[str, str], fraction: Optional[float], root: Path) -> dict[str, LabeledSplit]:
    """Train, dev and test of registered dataset `name` with `options` (see `labeled_splits`)."""
    return labeled_splits(dataset(name, **options), fraction, root)


def labeled_splits(spec: DatasetSpec, fraction: Optional[float], root: Path, names: Sequence[str] = SPLITS) -> dict[str, LabeledSplit]:
    """Train, dev and test of a registered dataset or own corpus; all three must be there (a tagger needs dev for selection).
    `names`: only these splits (a transfer source's), each of them there.

    An own corpus's dev may be a share of train (`dev_fraction`); the subsample `fraction` is taken from the rest of train.
    """
    data = read_splits(spec, root, names)
    for split in names:
        if not data[split].sentences:
            raise FlairsuiteError(f"{data[split].path}: the {split} split of {spec.name} holds no sentences")
    for warning in missing_type_warnings(data, spec.task == "ner"):
        log.warning(warning)
    if note := split_note(spec.name, spec.max_tokens, [part.repairs for part in data.values()]):
        log.warning(note)
    splits = {}
    for split in names:
        sentences = data[split].sentences
        if split == "train" and fraction is not None:
            sentences = kept(sentences, subsample(len(sentences), fraction))
        splits[split] = LabeledSplit.of(sentences)
    return splits
