"""Several splits served as one training set: the transfer runs' sources, and in joint mode the sources and the corpus's
train split (`flairsuite.experiments.transfer`).

Each part keeps its own cached arrays (memory maps of its corpus split, `cache.py`): nothing is copied, so joining a
large source costs no memory beyond its index. Sentence `i` of the whole is sentence `i - start` of the part whose
range holds it; a batch gathers each part's rows for its own sentences and puts them back in the batch's order.
"""

import bisect
from functools import reduce

import numpy as np
import torch

from flairsuite.tagging.features import SplitFeatures


class JoinedFeatures(SplitFeatures):
    """The sentences of `parts`, one after the other, as one SplitFeatures (training batches, decoding)."""

    def __init__(self, parts: list[SplitFeatures]) -> None:
        if not parts:
            raise ValueError("JoinedFeatures needs at least one part")
        super().__init__(reduce(lambda a, b: a + b, (part.split for part in parts)), [])
        self.pieces = parts
        self.starts = np.concatenate([[0], np.cumsum([len(part) for part in parts])])[:-1].tolist()

    def _flat(self, order: list[int]) -> torch.Tensor:
        """(tokens of the batch, stack dim) for sentences `order`: each part's rows for its sentences, in `order`."""
        by_part: dict[int, list[int]] = {}
        for index in order:
            by_part.setdefault(bisect.bisect_right(self.starts, index) - 1, []).append(index)
        chunks: dict[int, torch.Tensor] = {}
        for number, indices in by_part.items():
            piece, start = self.pieces[number], self.starts[number]
            local = [index - start for index in indices]
            rows = piece._flat(local)
            for index, chunk in zip(indices, torch.split(rows, [int(piece.lengths[i]) for i in local])):
                chunks[index] = chunk
        return torch.cat([chunks[index] for index in order])
