"""Truncated-BPTT windows over a memory-mapped id array: `batch_size` parallel character streams.

Stream b covers the b-th contiguous slice of the corpus, so the hidden state carried from one
window to the next continues the same text. A window is given by its offset into the streams and
its length (the length may change during training: see the trainer's window schedule); an epoch
ends when the offset reaches the end of the streams. The backward model reads the reversed array
(a strided view, no copy).

`positions` names each character of a window by its index in the (direction's) array, whatever block of streams a
rank holds: what the training noise (`flairsuite.charlm.noise`) is a function of. Input (t, b) is the character at
`positions[t, b]`, its target the one after it.
"""

import copy
from typing import TYPE_CHECKING, Optional

import numpy as np
import torch

from flairsuite.errors import FlairsuiteError

if TYPE_CHECKING:
    from flairsuite.charlm.noise import WindowNoise


class StreamBatches:
    """Inputs and next-character targets, shaped (length, batch_size) as Flair's LanguageModel expects."""

    def __init__(self, ids: np.ndarray, batch_size: int, min_length: int, forward: bool = True) -> None:
        data = ids if forward else ids[::-1]
        stream_length = (len(data) - 1) // batch_size
        if stream_length < min_length:
            raise FlairsuiteError(
                f"the corpus ({len(data):,} characters) is smaller than one batch "
                f"({batch_size} x {min_length + 1} characters); use more text or a smaller --batch-size"
            )
        span = batch_size * stream_length
        self.inputs = data[:span].reshape(batch_size, stream_length)
        self.targets = data[1 : span + 1].reshape(batch_size, stream_length)
        self.batch_size = batch_size
        self.stream_length = stream_length
        self.first_stream = 0  # of the whole batch's streams (a rank's block starts later)

    def block(self, start: int, stop: int) -> "StreamBatches":
        """Streams [start, stop) alone, with the same windows (one rank's share of a data-parallel run)."""
        if (start, stop) == (0, self.batch_size):
            return self
        part = copy.copy(self)
        part.inputs, part.targets, part.batch_size = self.inputs[start:stop], self.targets[start:stop], stop - start
        part.first_stream = self.first_stream + start
        return part

    def window(self, offset: int, length: int, noise: Optional["WindowNoise"] = None, epoch: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Characters [offset, offset + length) of every stream (cut at the end of the streams); with `noise` as it
        corrupts them in `epoch`."""
        window = slice(offset, min(offset + length, self.stream_length))
        inputs = np.ascontiguousarray(self.inputs[:, window].T, dtype=np.int64)
        targets = np.ascontiguousarray(self.targets[:, window].T, dtype=np.int64)
        if noise is not None:
            inputs, targets = noise.window(inputs, targets, epoch, self.positions(offset, length))
        return torch.from_numpy(inputs), torch.from_numpy(targets)

    def positions(self, offset: int, length: int) -> np.ndarray:
        """The array index of each input character of `window(offset, length)`, shaped as its inputs (int64)."""
        steps = np.arange(offset, min(offset + length, self.stream_length), dtype=np.int64)
        streams = np.arange(self.first_stream, self.first_stream + self.batch_size, dtype=np.int64)
        return streams[None, :] * self.stream_length + steps[:, None]

    def windows(self, length: int) -> list[int]:
        """Offsets of consecutive full windows of `length` (for evaluation)."""
        return list(range(0, self.stream_length - length + 1, length))
