"""Inference-only affine maps and LSTM recurrences, in float32 or int8 (affine maps also bfloat16) (for the character LMs' fast
featurizer, `charlm.CharLMFeatures`, and the fast tagger's head, `flairsuite.inference.tagger`).

int8 uses fbgemm's dynamic quantisation, the kernels behind `torch.ao.quantization.quantize_dynamic`:
weights symmetric per output channel, activations quantised per call to 7 bits (`reduce_range`, as
`quantize_dynamic` does on x86). An LSTM's input projections are computed before its recurrence (one
big product, or a table lookup for a character LM), so that the loop over time multiplies only the
hidden state. Gate non-linearities use one sigmoid over all four gates: the cell gate's rows are
doubled in the weights (exact in floating point) and tanh(x) = 2·sigmoid(2x) − 1, which is cheaper
than torch's tanh on the CPU. The loop over time is compiled by TorchScript (`recurrence_steps`): its ~15
torch calls a step run without Python's interpreter lock, so the two character LMs and the two directions of
a tagger's BiLSTM, each in its own thread, really run at the same time (and a step of a few rows costs about
60 µs instead of 240 µs).
"""

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Optional

import torch
import torch.nn.functional as F

QMAX = 127  # symmetric int8 weights


def per_channel_int8(weight: torch.Tensor) -> torch.Tensor:
    """`weight` (out, in) as a quantised qint8 tensor with one symmetric scale per output row."""
    scales = (weight.abs().amax(dim=1) / QMAX).clamp_min(1e-12).double()
    zero_points = torch.zeros(weight.size(0), dtype=torch.long)
    with warnings.catch_warnings():  # quantised tensors are deprecated in torch 2.13, still supported
        warnings.simplefilter("ignore")
        return torch.quantize_per_channel(weight, scales, zero_points, 0, torch.qint8)


class Affine:
    """x -> x @ weight.T + bias over the last dimension, in float32, as fbgemm's int8 dynamic linear, or (`bfloat16`) with
    x and the weight rounded to bfloat16, their products summed in float32 by oneDNN and each sum rounded to bfloat16,
    then the bias added in float32. bfloat16 rounds every value to its own 8 significant bits, where int8's dynamic
    activations share one scale per call, which inputs of very different scales (LM states beside word vectors) lose to."""

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor], quantize: bool, bfloat16: bool = False) -> None:
        weight = weight.detach().float().contiguous()
        self.bias = None if bias is None else bias.detach().float().contiguous()
        self.out_features = weight.size(0)
        self.weight = None if quantize else weight.to(torch.bfloat16) if bfloat16 else weight
        self.packed = torch.ops.quantized.linear_prepack(per_channel_int8(weight.cpu()), self.bias) if quantize else None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed is None and self.weight is not None and self.weight.dtype == torch.bfloat16:
            products = F.linear(x.to(torch.bfloat16), self.weight)
            return products.float() if self.bias is None else torch.add(self.bias, products)  # float32, in one pass
        if self.packed is None:
            return F.linear(x, self.weight, self.bias)
        flat = torch.ops.quantized.linear_dynamic(x.reshape(-1, x.size(-1)), self.packed, True)
        return flat.view(*x.shape[:-1], self.out_features)


def doubled_cell_gate(gates: torch.Tensor) -> torch.Tensor:
    """A copy of LSTM gate weights or biases (4H leading rows, PyTorch order i, f, g, o) with g's rows doubled."""
    hidden = gates.size(0) // 4
    scale = torch.ones(gates.size(0), dtype=gates.dtype, device=gates.device)
    scale[2 * hidden : 3 * hidden] = 2.0
    return gates.detach() * (scale if gates.dim() == 1 else scale.unsqueeze(1))


def recurrence_steps(
    out: torch.Tensor,
    inputs: torch.Tensor,
    ids: Optional[torch.Tensor],
    active: list[int],
    reverse: bool,
    packed: Optional[torch.classes.quantized.LinearPackedParamsBase],
    weight: Optional[torch.Tensor],
) -> torch.Tensor:
    """`Recurrence.run`'s loop over time (compiled by TorchScript, so that it runs without Python's lock).

    Step t's projected input is `inputs[t, :n]`, or, with `ids`, the rows `ids[t, :n]` of the table `inputs`
    (a character LM's first layer). The hidden product is fbgemm's int8 `packed` or the float32 `weight`.
    """
    size = out.size(2)
    cell = out.new_zeros(out.size(1), size)
    zero = out.new_zeros(out.size(1), size)
    steps = out.size(0)
    previous = -1
    for k in range(steps):
        t = steps - 1 - k if reverse else k
        n = active[t]
        state = zero[:n] if previous < 0 else out[previous, :n]
        if packed is not None:
            gates = torch.ops.quantized.linear_dynamic(state, packed, True)
        else:
            assert weight is not None
            gates = torch.mm(state, weight.t())
        if ids is not None:
            gates += inputs.index_select(0, ids[t, :n])
        else:
            gates += inputs[t, :n]
        gates.sigmoid_()
        i, f, g, o = gates.split(size, dim=1)
        c = cell[:n]
        c.mul_(f).addcmul_(i, g, value=2.0).sub_(i)  # c = f·c + i·tanh(g_pre), tanh = 2σ(2·) − 1
        h = out[t, :n]
        torch.mul(c, 2.0, out=h).sigmoid_()
        h.mul_(o).mul_(2.0).sub_(o)  # h = o·tanh(c)
        previous = t
    return out


COMPILING = threading.Lock()


@functools.cache
def compiled_steps() -> Callable[..., torch.Tensor]:
    """`recurrence_steps` compiled by TorchScript, once per process (0.02 s; its first call adds 0.1 to 0.2 s)."""
    with COMPILING, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(recurrence_steps)


class Recurrence:
    """One direction of one LSTM layer, given its input projections (with both biases, g doubled)."""

    def __init__(self, weight_hh: torch.Tensor, quantize: bool) -> None:
        self.hidden_size = weight_hh.size(1)
        self.hidden = Affine(doubled_cell_gate(weight_hh), None, quantize)
        self.steps = compiled_steps()

    def run(self, inputs: torch.Tensor, ids: Optional[torch.Tensor], lengths: list[int], reverse: bool, out: torch.Tensor) -> torch.Tensor:
        """Hidden states (time, batch, H) into `out`, for sequences sorted longest first; `out` must be zeroed where
        `reverse` (a sequence's start state is read from past its end), and may hold anything otherwise.

        The projected input of step t for the first n sequences (those longer than t) is `inputs[t, :n]` (time,
        batch, 4H), or with `ids` (time, batch) the rows `ids[t, :n]` of the table `inputs` (entries, 4H). Only those
        rows are computed: a finished sequence drops out (forward), a sequence joins with zero states at its own
        last step (`reverse`), so padding costs no arithmetic.
        """
        time = torch.arange(out.size(0)).unsqueeze(1)
        active = (torch.tensor(lengths).unsqueeze(0) > time).sum(dim=1).tolist()
        return self.steps(out, inputs, ids, active, reverse, self.hidden.packed, self.hidden.weight)
