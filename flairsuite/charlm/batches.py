"""Truncated-BPTT batches over a memory-mapped id array: `batch_size` parallel streams, read in windows.

Stream b covers the b-th contiguous slice of the corpus, so the hidden state carried from one
window to the next continues the same text. Batch k holds window k of every stream; an epoch is
one pass over all windows. The backward model reads the reversed array (a strided view, no copy).
"""

import numpy as np
import torch

from flairsuite.errors import FlairsuiteError


class StreamBatches:
    """Inputs and next-character targets, shaped (sequence_length, batch_size) as Flair's LanguageModel expects."""

    def __init__(self, ids: np.ndarray, batch_size: int, sequence_length: int, forward: bool = True) -> None:
        data = ids if forward else ids[::-1]
        stream_length = (len(data) - 1) // batch_size
        if stream_length < sequence_length:
            raise FlairsuiteError(
                f"the corpus ({len(data):,} characters) is smaller than one batch "
                f"({batch_size} x {sequence_length + 1} characters); use more text or a smaller --batch-size"
            )
        span = batch_size * stream_length
        self.inputs = data[:span].reshape(batch_size, stream_length)
        self.targets = data[1 : span + 1].reshape(batch_size, stream_length)
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        self.steps = stream_length // sequence_length

    @property
    def chars_per_step(self) -> int:
        return self.batch_size * self.sequence_length

    def __len__(self) -> int:
        return self.steps

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Window `step` (0 <= step < len(self)) of every stream."""
        window = slice(step * self.sequence_length, (step + 1) * self.sequence_length)
        inputs = torch.from_numpy(np.ascontiguousarray(self.inputs[:, window].T, dtype=np.int64))
        targets = torch.from_numpy(np.ascontiguousarray(self.targets[:, window].T, dtype=np.int64))
        return inputs, targets
