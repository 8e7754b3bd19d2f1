"""Keep evaluation text out of LM and word-vector training: find and cut held-out sentences inside raw documents.

A held-out sentence is a dev or test sentence of at least `MIN_TOKENS` tokens of any registered
labeled dataset of the language (NER or PoS: `LABELED_TASKS`) that is present locally. Both sides are
split the same way, into runs of word characters and single other characters (`rawtext.tokens.TOKEN`), so
`besuchen.` in raw text meets the treebank's `besuchen` `.`; a CoNLL-U sentence is taken from its
`# text =` line, its surface form (the token lines split `zum` into `zu dem`). Matching is exact on those
units and runs over every unit position of a document, not just whole lines; a cut drops the sentence's
characters and joins what is left of the document with one space. For a
language written without spaces (the raw set's `segmentation: characters`, Chinese) the tokens are
the characters: a held-out sentence of at least `MIN_CHARACTERS` characters is cut wherever its
characters occur in a row (spaces ignored), and the rest of the text is kept as it was.
"""

import logging
from collections.abc import Iterable
from pathlib import Path

from flairsuite.corpora.labeled import read_split, read_splits, split_files
from flairsuite.corpora.own import is_folder_argument, own_corpus
from flairsuite.corpora.readers import read_lines
from flairsuite.corpora.registry import DatasetSpec, dataset, language_segmentation, names
from flairsuite.corpora.tasks import LABELED_TASKS
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.files.yaml_file import parse_yaml
from flairsuite.rawtext.tokens import TOKEN

log = logging.getLogger("flairsuite")

MIN_TOKENS = 5
MIN_CHARACTERS = 10  # the character form: shorter sequences recur by chance in a large text
HELDOUT_SPLITS = ("dev", "test")
TEXT_LINE = "# text = "  # a CoNLL-U sentence's surface text


def surface_sentences(spec: DatasetSpec, path: Path) -> list[tuple[str, ...]]:
    """The sentences of a labeled file as texts to find in raw text: CoNLL-U's `# text =` lines (one token each, the
    surface form), else the file's tokens."""
    if spec.format is not None and spec.format.kind == "conllu":
        texts = [(line[len(TEXT_LINE):],) for _, line in read_lines(path) if line.startswith(TEXT_LINE)]
        if texts:
            return texts
    return [tuple(s.tokens) for s in read_split(spec, path).sentences]


def word_units(sentence: Iterable[str]) -> tuple[str, ...]:
    """A sentence's tokens (or text) as the units matching compares: `TOKEN` over the tokens joined by spaces."""
    return tuple(TOKEN.findall(" ".join(sentence)))


def heldout_sentences(language: str, root: Path) -> tuple[list[tuple[str, ...]], list[Path]]:
    """Every local NER or PoS dev/test sentence of `language` (its tokens, or a CoNLL-U sentence's text), and their files.

    For a language written with spaces, sentences of fewer than `MIN_TOKENS` whitespace tokens are left out here; for
    one without (Chinese), `SentenceIndex` leaves out those under `MIN_CHARACTERS` characters."""
    sentences: list[tuple[str, ...]] = []
    files: list[Path] = []
    characters = language_segmentation(language) == "characters"
    for name in names():
        spec = dataset(name)
        if spec.task not in LABELED_TASKS or spec.language != language:
            continue
        for split in HELDOUT_SPLITS:
            path = spec.locate(spec.splits[split], root) if split in spec.splits else None
            if path is None:
                continue
            files.append(path)
            # words: at least MIN_TOKENS tokens as written (not units: "101.589,40 €" is 6 units, and found in many a text);
            # characters (text without spaces): SentenceIndex counts characters
            sentences.extend(sentence for sentence in surface_sentences(spec, path) if characters or len(" ".join(sentence).split()) >= MIN_TOKENS)
    log.info("%d held-out sentences from %d labeled dev/test files", len(sentences), len(files))
    return sentences, files


def own_entry(argument: str) -> dict:
    """An `--exclude` argument written as an experiment's own-corpus entry, a YAML mapping such as
    `{path: data/letters/, format: webanno}` (for a corpus that is not in the column format); a bad one: a one-line error."""
    entry = parse_yaml(argument, "--exclude")
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        raise FlairsuiteError(f"--exclude {argument}: a corpus written as a mapping needs its path, e.g. {{path: data/letters/, format: webanno}}")
    return entry


def _own_spec(argument: str) -> DatasetSpec:
    """The own corpus an --exclude argument names (a folder, or an entry as a mapping); a bad one: a one-line error that
    names the argument (errors at a file's line pass as they are)."""
    entry = own_entry(argument) if argument.lstrip().startswith("{") else {"path": argument}
    try:
        return own_corpus(entry, Path.cwd(), needed=HELDOUT_SPLITS)
    except InputError:
        raise
    except FlairsuiteError as err:
        raise FlairsuiteError(f"--exclude {argument}: {err}") from None


def excluded_sentences(corpora: Iterable[str], root: Path) -> tuple[list[tuple[str, ...]], list[Path]]:
    """The dev and test sentences of each of `corpora` (`--exclude`: a registered NER or PoS dataset of any language, an
    own corpus folder read as an experiment's `path:` entry, or such an entry as a YAML mapping with its `format` and
    other keys; its dev possibly a share of train), and the files they come from.

    All of them are cut out, whatever their length: the user named them."""
    sentences: list[tuple[str, ...]] = []
    files: list[Path] = []
    for name in corpora:
        if name.lstrip().startswith("{") or is_folder_argument(name):
            spec = _own_spec(name)
        elif name in names() and dataset(name).task in LABELED_TASKS:
            spec = dataset(name)
        else:
            raise FlairsuiteError(f"--exclude {name}: neither a labeled dataset of the registry nor a corpus folder")
        sampled_dev = "dev" not in spec.splits and spec.dev_fraction is not None  # dev is a fixed share of train
        on_disk = [split for split in HELDOUT_SPLITS if split in spec.splits]
        for split, data in read_splits(spec, root, [*on_disk, *(["dev"] if sampled_dev else [])]).items():
            if spec.format is not None and spec.format.kind == "conllu" and split in spec.splits and data.files == 1:
                sentences.extend(surface_sentences(spec, data.path))
            else:
                sentences.extend(tuple(sentence.tokens) for sentence in data.sentences)
        for paths in split_files(spec, root, [*on_disk, *(["train"] if sampled_dev else [])]).values():
            files.extend(paths)
    log.info("%d sentences of %d excluded dev/test files", len(sentences), len(files))
    return sentences, files


class SentenceIndex:
    """Finds held-out token sequences inside documents, keyed by their first `prefix` tokens (MIN_TOKENS; characters: MIN_CHARACTERS)."""

    def __init__(self, sentences: Iterable[tuple[str, ...]], by_character: bool = False) -> None:
        self.by_character = by_character
        self.prefix = MIN_CHARACTERS if by_character else MIN_TOKENS
        if by_character:
            sentences = (tuple(c for c in "".join(sentence) if not c.isspace()) for sentence in sentences)
        else:
            sentences = (word_units(sentence) for sentence in sentences)
        self.by_prefix: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for sentence in set(sentences):
            if len(sentence) >= self.prefix:
                self.by_prefix.setdefault(sentence[: self.prefix], []).append(sentence)
        for candidates in self.by_prefix.values():
            candidates.sort(key=len, reverse=True)
        self.first_tokens = {prefix[0] for prefix in self.by_prefix}

    def __len__(self) -> int:
        return sum(len(c) for c in self.by_prefix.values())

    def _match(self, tokens: list[str], start: int) -> int:
        """Length of the longest held-out sentence starting at `tokens[start]`, else 0."""
        for candidate in self.by_prefix.get(tuple(tokens[start : start + self.prefix]), ()):
            if tuple(tokens[start : start + len(candidate)]) == candidate:
                return len(candidate)
        return 0

    def _cuts(self, tokens: list[str]) -> list[tuple[int, int]]:
        """(start, stop) token ranges of the held-out sentences found in `tokens`, left to right, longest first."""
        cuts, position = [], 0
        while position < len(tokens):
            length = self._match(tokens, position) if tokens[position] in self.first_tokens else 0
            if length:
                cuts.append((position, position + length))
                position += length
            else:
                position += 1
        return cuts

    def remove(self, text: str) -> tuple[str, int]:
        """`text` without any held-out sentence, and how many were cut (words: the pieces left joined by one space)."""
        if not self.by_prefix:
            return text, 0
        if self.by_character:
            at = [i for i, char in enumerate(text) if not char.isspace()]
            cuts = self._cuts([text[i] for i in at])
            kept, last = [], 0
            for start, stop in cuts:
                kept.append(text[last : at[start]])
                last = at[stop - 1] + 1
            left = "".join(kept) + text[last:]
            return (left if left.strip() else "", len(cuts)) if cuts else (text, 0)  # nothing but spaces left: an empty document
        units = list(TOKEN.finditer(text))
        cuts = self._cuts([unit.group() for unit in units])
        if not cuts:
            return text, 0
        pieces, last = [], 0
        for start, stop in cuts:
            pieces.append(text[last : units[start].start()])
            last = units[stop - 1].end()
        pieces.append(text[last:])
        return " ".join(piece.strip() for piece in pieces if piece.strip()), len(cuts)
