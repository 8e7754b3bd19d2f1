"""The token counts of every labeled split of a language that is present locally (NER and PoS sets of the registry).

What the raw-text trainers compare their vocabularies with: `train-fasttext` (words without a
vector) and `train-charlm` (characters outside the LM's dictionary).
"""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset, names
from flairsuite.corpora.tasks import LABELED_TASKS


@dataclass
class SplitTokens:
    """Token counts of one split of a labeled dataset."""

    dataset: str
    split: str
    counts: Counter


def labeled_tokens(language: str, root: Path) -> Iterator[SplitTokens]:
    """Token counts of every split present under `root` of each NER and PoS dataset of `language`."""
    for name in names():
        spec = dataset(name)
        if spec.task not in LABELED_TASKS or spec.language != language:
            continue
        for split, entry in spec.splits.items():
            path = spec.locate(entry, root)
            if path is not None:
                sentences = read_split(spec, path).sentences
                yield SplitTokens(name, split, Counter(token for s in sentences for token in s.tokens))
