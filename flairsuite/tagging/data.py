"""The labeled sentences of one experiment corpus: Flair sentences, gold BIO tags, the fixed train subsample."""

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from flair.data import Sentence

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import to_flair
from flairsuite.corpora.registry import SPLITS, DatasetSpec, dataset
from flairsuite.errors import FlairsuiteError

SUBSAMPLE_SEED = 1  # the train subsample is fixed: the same sentences for every run, seed and tagger


@dataclass(frozen=True)
class LabeledSplit:
    """One split: Flair sentences (with `ner` span labels) and the gold BIO tags of each."""

    sentences: list[Sentence]
    tags: list[list[str]]

    @property
    def tokens(self) -> int:
        """Number of tokens."""
        return sum(len(tags) for tags in self.tags)


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


def labeled_splits(spec: DatasetSpec, fraction: Optional[float], root: Path) -> dict[str, LabeledSplit]:
    """Train, dev and test of a registered dataset or own corpus; all three must be there (a tagger needs dev for selection).

    An own corpus's dev may be a share of train (`dev_fraction`); the subsample `fraction` is taken from the rest of train.
    """
    data = read_splits(spec, root, SPLITS)
    for split in SPLITS:
        if not data[split].sentences:
            raise FlairsuiteError(f"{data[split].path}: the {split} split of {spec.name} holds no sentences")
    splits = {}
    for split in SPLITS:
        sentences = data[split].sentences
        if split == "train" and fraction is not None:
            sentences = [sentences[i] for i in subsample(len(sentences), fraction)]
        splits[split] = LabeledSplit([to_flair(s, spec) for s in sentences], [list(s.tags) for s in sentences])
    return splits
