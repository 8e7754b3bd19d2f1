"""Turn registered datasets and own corpora into Flair `Corpus` objects, never inventing a missing split."""

from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from flair.data import Corpus, Sentence
from flair.datasets import FlairDatapointDataset

from flairsuite.corpora.break_marks import break_marks, mark_breaks
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.readers import TaggedSentence, document_starts
from flairsuite.corpora.registry import SPLITS, DatasetSpec, dataset
from flairsuite.corpora.tags import bio_spans


def to_flair(sentence: TaggedSentence, spec: DatasetSpec) -> Sentence:
    """A Flair sentence carrying span labels (NER) or token labels (PoS) under `spec.label_type`, and its line-end break
    marks (`break_marks`)."""
    flair_sentence = with_breaks(Sentence(sentence.tokens), sentence)
    for token, whitespace in zip(flair_sentence.tokens, sentence.whitespace_after):
        token.whitespace_after = 1 if whitespace else 0
    if spec.task == "ner":
        for start, end, entity_type in bio_spans(sentence.tags):
            flair_sentence[start:end].add_label(spec.label_type, entity_type)
    else:
        for token, tag in zip(flair_sentence.tokens, sentence.tags):
            token.add_label(spec.label_type, tag)
    return flair_sentence


def with_breaks(flair_sentence: Sentence, sentence: TaggedSentence) -> Sentence:
    """`flair_sentence` (made of the tokens of `sentence`) with the line-end break marks among the tokens `sentence` has
    flagged labelled (`break_marks.mark_breaks`): what the character LMs read joined."""
    return mark_breaks(flair_sentence, break_marks(sentence.tokens, sentence.line_ends)) if sentence.line_ends else flair_sentence


def linked(sentences: list[Sentence], read: Sequence[TaggedSentence]) -> list[Sentence]:
    """`sentences` (Flair's, one per sentence of `read`) linked in order within each document (Flair's
    `set_context_for_sentences`), for embeddings that read document context."""
    starts = [0, *document_starts(read), len(sentences)]
    for start, end in zip(starts, starts[1:]):
        Sentence.set_context_for_sentences(sentences[start:end])
    return sentences


def load_corpus(
    name: str, root: Path, splits: Optional[Sequence[str]] = None, **options: Optional[str]
) -> Corpus:
    """The Flair `Corpus` of dataset `name` (options such as granularity='coarse' or level='inner').

    Splits that are not requested stay empty: Flair's sampling of missing splits is turned off.
    """
    return flair_corpus(dataset(name, **options), root, splits)


def flair_corpus(spec: DatasetSpec, root: Path, splits: Optional[Sequence[str]] = None) -> Corpus:
    """The Flair `Corpus` of `spec`, a registered dataset or an own corpus (`own.own_corpus`; its dev may be a share of train)."""
    data = read_splits(spec, root, splits)
    parts = {
        split: FlairDatapointDataset(linked([to_flair(s, spec) for s in data[split].sentences], data[split].sentences)) if split in data else None
        for split in SPLITS
    }
    return Corpus(**parts, name=spec.name, sample_missing_splits=False)
