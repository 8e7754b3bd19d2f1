"""The two halves of a self-training study's data: the labelled sentences and the unlabelled pool, as cached features.

`hold_back`: a share of the train split is drawn with the run's seed (`held_back`: round(share x n) sentences, the same
for every threshold, stack and tagger of that seed); their gold tags are hidden from everything but the pseudo-label
scores, the rest of train is the labelled part. `text`: all of train is labelled, the pool is the user's text
(`self_training_text`), embedded once per embedding through the embedding cache, whose arrays are named by a digest of
the text's tokens. A round's training set is the labelled part followed by the kept pool sentences under their
pseudo-labels (`with_pseudo_labels`), gathered into memory from the cached rows.
"""

import random
from dataclasses import dataclass
from typing import Optional

import numpy as np

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.simulation import hidden, subset
from flairsuite.tagging.data import LabeledSplit
from flairsuite.tagging.features import SplitFeatures


@dataclass(frozen=True)
class StudyData:
    """The labelled part (gold tags), the pool as a labeller sees it (every tag `O`), the pool's gold tags where known
    (hold_back) and which train sentences were held back (hold_back; empty for text)."""

    labelled: SplitFeatures
    pool: SplitFeatures
    pool_gold: Optional[list[list[str]]]
    held_back: list[int]


def held_back(train_sentences: int, share: float, seed: int) -> list[int]:
    """The train sentences whose labels are hidden: round(share x n) of them drawn with `seed`, sorted; both halves non-empty."""
    size = round(train_sentences * share)
    if not 0 < size < train_sentences:
        raise FlairsuiteError(f"self_training.hold_back {share:g} of {train_sentences} train sentences leaves "
                              f"{'no pool' if size == 0 else 'no labelled sentence'}: choose a share that leaves both")
    return sorted(random.Random(seed).sample(range(train_sentences), size))


def hold_back_data(train: SplitFeatures, share: float, seed: int) -> StudyData:
    """`train` (gold) cut into the labelled part and the hidden pool."""
    pool_indices = held_back(len(train), share, seed)
    chosen = set(pool_indices)
    labelled = [i for i in range(len(train)) if i not in chosen]
    pool = subset(train, pool_indices)
    return StudyData(subset(train, labelled), SplitFeatures(hidden(pool.split), pool.parts), pool.split.tags, pool_indices)


def text_data(train: SplitFeatures, pool: SplitFeatures) -> StudyData:
    """All of `train` labelled; `pool`, the user's text (tags all `O`, gold unknown)."""
    if not len(pool):
        raise FlairsuiteError("self_training.text holds no sentence outside the corpus's dev and test splits")
    return StudyData(train, pool, None, [])


def with_pseudo_labels(labelled: SplitFeatures, pool: SplitFeatures, kept: list[int], tags: dict[int, list[str]]) -> SplitFeatures:
    """The labelled sentences, then the pool sentences `kept` tagged with their pseudo-labels `tags`; `labelled` itself without any."""
    if not kept:
        return labelled
    texts = labelled.split.texts + [pool.split.texts[i] for i in kept]
    spaces = labelled.split.spaces + [pool.split.spaces[i] for i in kept]
    gold = labelled.split.tags + [tags[i] for i in kept]
    rows = np.concatenate([np.arange(pool.offsets[i], pool.offsets[i + 1]) for i in kept])
    parts = [np.concatenate([np.asarray(mine), np.asarray(theirs)[rows]]) for mine, theirs in zip(labelled.parts, pool.parts)]
    return SplitFeatures(LabeledSplit(texts, spaces, gold), parts)  # type: ignore[arg-type]
