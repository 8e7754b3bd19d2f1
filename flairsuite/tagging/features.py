"""Batches of embedding tensors for the training loop and for tagging a whole split: cached rows gathered from memory maps, live parts embedded.

A stack's vector for a token is the concatenation of its embeddings' vectors in stack order, as
Flair's `StackedEmbeddings` builds it. Frozen embeddings come from the cache (`cache.py`); an
embedding that trains with the tagger (`char`, a fine-tuned `bert:`) is the model's own module, run on the batch's
sentences so that its gradient flows.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

import flair
import numpy as np
import torch
from flair.embeddings import TokenEmbeddings

from flairsuite.embeddings import token_vectors
from flairsuite.models.crf import padding_mask
from flairsuite.tagging.data import LabeledSplit

Part = Union[np.ndarray, TokenEmbeddings]  # a cached (tokens x dim) array, or a live embedding module


@dataclass(frozen=True)
class Batch:
    """Sentences `order` (indices into the split, longest first) as a padded tensor, their lengths and gold tags."""

    order: list[int]
    tensor: torch.Tensor
    lengths: torch.Tensor
    gold: list[list[str]]


class SplitFeatures:
    """The embedding parts of one split under one stack, served as padded batches."""

    def __init__(self, split: LabeledSplit, parts: list[Part]) -> None:
        self.split = split
        self.parts = parts
        self.lengths = np.array([len(tags) for tags in split.tags], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])

    def __len__(self) -> int:
        return len(self.lengths)

    def _rows(self, order: list[int]) -> np.ndarray:
        return np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in order])

    def _flat(self, order: list[int]) -> torch.Tensor:
        """(tokens of the batch, stack dim): every part's vectors, concatenated in stack order."""
        rows = self._rows(order)
        pieces = []
        for part in self.parts:
            if isinstance(part, np.ndarray):
                pieces.append(torch.from_numpy(part[rows]).to(flair.device, torch.float32))  # float16 -> float32 is exact; torch converts faster
                continue
            pieces.append(token_vectors(part, self.split.flair_sentences(order)))
        return torch.cat(pieces, dim=1) if len(pieces) > 1 else pieces[0]

    def batch(self, indices: list[int]) -> Batch:
        """The sentences `indices` as one batch, reordered longest first: the tensor on `flair.device`, lengths on CPU."""
        order = sorted(indices, key=lambda i: -self.lengths[i])
        lengths = torch.from_numpy(self.lengths[order])
        flat = self._flat(order)
        mask = padding_mask(lengths, int(lengths[0]), flat.device)
        tensor = flat.new_zeros((len(order), int(lengths[0]), flat.shape[1]))
        tensor[mask] = flat
        return Batch(order, tensor, lengths, [self.split.tags[i] for i in order])

    def batches(self, size: int, order: list[int] | None = None) -> list[list[int]]:
        """`order` (default: corpus order) cut into consecutive batches of `size` sentence indices."""
        order = list(range(len(self))) if order is None else order
        return [order[start : start + size] for start in range(0, len(order), size)]

    def longest_first(self, size: int, indices: list[int] | None = None) -> Iterator[Batch]:
        """The sentences `indices` (default: all), longest first, as batches of `size` (similar lengths pad least): how a
        model tags or scores a whole split; `Batch.order` says which sentence each row is."""
        order = sorted(range(len(self)) if indices is None else indices, key=lambda i: -self.lengths[i])
        for batch in self.batches(size, order):
            yield self.batch(batch)
