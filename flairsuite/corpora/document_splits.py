"""Splits the suite makes itself: an own corpus without train/dev/test files, split with a fixed seed and recorded.

The rules (`split_documents`, `split_sentences`):

- The documents (a folder's files, by their path in the folder; an INCEpTION export's documents, by name) are put
  in name order, then shuffled by `random.Random(SPLIT_SEED)`: the first round(n x 0.1) of them (at least 1) are dev,
  the next as many test, the rest train; each split keeps name order. The split depends on the names and the seed
  only, never on the order in which files are listed.
- At least `MIN_DOCUMENTS` (3) documents are split by document, so no document has sentences on two sides. One or two
  documents are split by sentence: of their sentences (in name order, as read, before long ones are cut), round(n x 0.1)
  (at least 1) are dev and as many test, drawn with the same seed; train keeps the rest. Fewer than 3 sentences: an error.
- The record (`SplitRecord`) says which document, or how many sentences, went where: `corpora stats` and `check` print
  its `line()`, and `as_record()` is the plain data a run keeps (`own.corpus_record`: fingerprint and metrics.json).
  `SplitCorpusSpec` is the DatasetSpec of such a corpus, carrying the record (and how an export was read).
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from flairsuite.corpora.inception_project import ExportReading
from flairsuite.corpora.registry import SPLITS, DatasetSpec
from flairsuite.errors import FlairsuiteError

SPLIT_SEED = 1
SHARES = {"train": 0.8, "dev": 0.1, "test": 0.1}
MIN_DOCUMENTS = 3  # fewer documents are split by sentence


def held_out(count: int) -> int:
    """How many of `count` documents (or sentences) dev takes, and test as many: round(count x 0.1), at least 1."""
    return max(1, int(count * SHARES["dev"] + 0.5))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class SplitRecord:
    """Where each document (unit `document`) or how many sentences (unit `sentence`) of an unsplit corpus went."""

    unit: str  # document or sentence
    seed: int
    documents: dict[str, tuple[str, ...]]  # split -> its documents in name order; unit sentence: every split lists all
    sentences: dict[str, int] = field(default_factory=dict)  # unit sentence: split -> how many sentences

    def line(self) -> str:
        """`split: 8 train / 1 dev / 1 test documents (seed 1): dev = brief-07.tsv, test = brief-03.tsv`."""
        if self.unit == "document":
            counts = " / ".join(f"{len(self.documents[split])} {split}" for split in SPLITS)
            return f"split: {counts} documents (seed {self.seed}): dev = {', '.join(self.documents['dev'])}, test = {', '.join(self.documents['test'])}"
        counts = " / ".join(f"{self.sentences[split]} {split}" for split in SPLITS)
        documents = self.documents["train"]
        return (f"split: {counts} sentences (seed {self.seed}) of {_plural(len(documents), 'document')} ({', '.join(documents)}): "
                f"fewer than {MIN_DOCUMENTS} documents are split by sentence")

    def label(self, split: str) -> str:
        """What the split is, for the file column of `corpora stats` and `check`: `8 documents`, `letters.tsv (10% of sentences)`."""
        if self.unit == "document":
            return _plural(len(self.documents[split]), "document")
        documents = self.documents[split]
        share = f"{SHARES[split] * 100:g}% of sentences"
        return f"{documents[0]} ({share})" if len(documents) == 1 else f"{_plural(len(documents), 'document')} ({share})"

    def as_record(self) -> dict[str, Any]:
        """The split as plain data (JSON): rule, seed, shares and the documents (or sentence counts) of each split."""
        record: dict[str, Any] = {"by": self.unit, "seed": self.seed, "shares": [SHARES[split] for split in SPLITS]}
        if self.unit == "document":
            return {**record, **{split: list(self.documents[split]) for split in SPLITS}}
        return {**record, "documents": list(self.documents["train"]), "sentences": dict(self.sentences)}


def split_documents(names: Sequence[str], seed: int = SPLIT_SEED) -> SplitRecord:
    """At least MIN_DOCUMENTS documents split by document (module docstring)."""
    ordered = sorted(names)
    if len(ordered) < MIN_DOCUMENTS:
        raise ValueError(f"{len(ordered)} documents: too few to split by document")
    shuffled = list(ordered)
    random.Random(seed).shuffle(shuffled)
    size = held_out(len(ordered))
    dev, test = set(shuffled[:size]), set(shuffled[size : 2 * size])
    chosen = {"dev": dev, "test": test, "train": set(ordered) - dev - test}
    return SplitRecord("document", seed, {split: tuple(name for name in ordered if name in chosen[split]) for split in SPLITS})


def sentence_indices(count: int, seed: int = SPLIT_SEED) -> dict[str, list[int]]:
    """split -> the indices (ascending) of its sentences among `count`, split by sentence (module docstring)."""
    size = held_out(count)
    drawn = random.Random(seed).sample(range(count), 2 * size)
    dev, test = sorted(drawn[:size]), sorted(drawn[size:])
    taken = set(drawn)
    return {"train": [i for i in range(count) if i not in taken], "dev": dev, "test": test}


def split_sentences(names: Sequence[str], count: int, where: str, seed: int = SPLIT_SEED) -> SplitRecord:
    """One or two documents of `count` sentences in all, split by sentence; fewer than 3 sentences: an error naming `where`."""
    if count < 3:
        raise FlairsuiteError(f"{where}: {_plural(count, 'sentence')}: too few to split into train, dev and test "
                              "(a corpus without train/dev/test files is split by document, or by sentence)")
    ordered = tuple(sorted(names))
    indices = sentence_indices(count, seed)
    return SplitRecord("sentence", seed, {split: ordered for split in SPLITS}, {split: len(indices[split]) for split in SPLITS})


@dataclass(frozen=True)
class SplitCorpusSpec(DatasetSpec):
    """An own corpus the suite split (`own.own_corpus`): its DatasetSpec with the split record and, for an INCEpTION
    project export, which version of each document was read."""

    split: Optional[SplitRecord] = None
    export: Optional[ExportReading] = None


def corpus_notes(spec: DatasetSpec) -> list[str]:
    """The lines `corpora stats` and `check` print about how the suite read and split an own corpus (none for others)."""
    if not isinstance(spec, SplitCorpusSpec):
        return []
    return [*(spec.export.lines() if spec.export is not None else []), *([spec.split.line()] if spec.split is not None else [])]


def split_record(spec: DatasetSpec) -> Optional[dict[str, Any]]:
    """The split the suite made, as plain data (for a run's record or model card); None where the files named the splits."""
    if not isinstance(spec, SplitCorpusSpec) or spec.split is None:
        return None
    return {**spec.split.as_record(), **({"export": spec.export.as_record()} if spec.export is not None else {})}
