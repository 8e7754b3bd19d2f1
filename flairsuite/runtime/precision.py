"""A training step's arithmetic: float32, or bfloat16 under autocast where the device computes bfloat16 natively.

The trainers (language model, BERT, taggers) resolve `auto`, refuse a precision the device cannot compute with one
line before any costly preparation, and run their forward passes in `autocast`.
"""

import torch

from flairsuite.errors import FlairsuiteError

PRECISIONS = ("float32", "bfloat16")  # a training step's arithmetic: full, or under bfloat16 autocast


def native_bfloat16(device: torch.device) -> bool:
    """Whether `device` computes bfloat16 natively: a CUDA GPU that supports it, or a CPU with bfloat16 units for oneDNN."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported(including_emulation=False)  # a GPU before Ampere only emulates it
    return device.type == "cpu" and torch.backends.mkldnn.is_available() and bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def resolved_precision(precision: str, device: torch.device) -> str:
    """`precision`, with "auto" as bfloat16 where `device` computes it natively (`native_bfloat16`) and float32 elsewhere."""
    if precision == "auto":
        return "bfloat16" if native_bfloat16(device) else "float32"
    return precision


def require_precision(precision: str, device: torch.device, where: str, instead: str = "precision float32") -> None:
    """A one-line error if `precision` is not one of PRECISIONS, or (naming `where`, advising `instead`) if it is bfloat16
    and `device` cannot compute it. On a CPU without bfloat16 units (AVX-512 BF16 or AMX) oneDNN refuses the language model's bfloat16 LSTM at the first
    step, and runs the tagger's emulated, several times slower than float32 (benchmarks/README.md, 'LM training in bfloat16')."""
    if precision not in PRECISIONS:
        raise FlairsuiteError(f"precision must be one of: {', '.join(PRECISIONS)} (found {precision!r})")
    if precision != "bfloat16" or native_bfloat16(device):
        return
    what = "this CPU has no bfloat16 units (AVX-512 BF16 or AMX)" if device.type == "cpu" else f"{device} does not compute it natively"
    raise FlairsuiteError(f"{where}: precision bfloat16 needs a device that computes bfloat16, and {what}: use {instead}")


def autocast(device: torch.device, precision: str) -> torch.autocast:
    """The context of a training step's forward pass: bfloat16 autocast with `precision` "bfloat16", else a no-op.

    Autocast runs the matrix products (linear maps, LSTMs) in bfloat16 (oneDNN with AMX on CPU)
    and keeps parameters, gradients and the optimizer float32; callers cast the loss's inputs back to float32.
    """
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bfloat16")
