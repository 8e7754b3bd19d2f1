"""The fast path's LSTM recurrence (`flairsuite.embeddings.lstm`), compiled by TorchScript, against torch's own LSTM."""

import pytest
import torch

from flairsuite.embeddings.lstm import Affine, Recurrence, doubled_cell_gate, recurrence_steps

HIDDEN = 24
LENGTHS = [9, 7, 7, 3, 1]  # longest first, as the fast path sorts them


def lstm() -> torch.nn.LSTM:
    torch.manual_seed(3)
    return torch.nn.LSTM(10, HIDDEN)


def projected(rnn: torch.nn.LSTM, inputs: torch.Tensor, suffix: str = "") -> torch.Tensor:
    """The input projections (time, batch, 4H) with both biases, cell gate doubled, as the fast path feeds them."""
    weight = doubled_cell_gate(getattr(rnn, f"weight_ih_l0{suffix}"))
    bias = doubled_cell_gate(getattr(rnn, f"bias_ih_l0{suffix}") + getattr(rnn, f"bias_hh_l0{suffix}"))
    return Affine(weight, bias, False)(inputs)


def padded_inputs() -> torch.Tensor:
    torch.manual_seed(4)
    inputs = torch.randn(max(LENGTHS), len(LENGTHS), 10)
    for column, length in enumerate(LENGTHS):
        inputs[length:, column] = 0.0
    return inputs


@torch.inference_mode()
def test_forward_and_reverse_equal_torch_lstm_on_each_sequence() -> None:
    rnn = torch.nn.LSTM(10, HIDDEN, bidirectional=True)
    inputs = padded_inputs()
    for reverse, suffix in [(False, ""), (True, "_reverse")]:
        recurrence = Recurrence(getattr(rnn, f"weight_hh_l0{suffix}"), quantize=False)
        out = recurrence.run(projected(rnn, inputs, suffix), None, LENGTHS, reverse, torch.zeros(max(LENGTHS), len(LENGTHS), HIDDEN))
        expected, _ = rnn(torch.nn.utils.rnn.pack_padded_sequence(inputs, LENGTHS))
        expected, _ = torch.nn.utils.rnn.pad_packed_sequence(expected)
        half = expected[..., HIDDEN:] if reverse else expected[..., :HIDDEN]
        assert torch.allclose(out, half, atol=1e-5), reverse  # padding stays zero: pad_packed_sequence pads with zeros


@torch.inference_mode()
@pytest.mark.parametrize("quantize", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_compiled_loop_equals_the_same_loop_in_python(quantize: bool, reverse: bool) -> None:
    """TorchScript runs `recurrence_steps` exactly as Python does, on inputs by table lookup and on projected inputs."""
    rnn = lstm()
    recurrence = Recurrence(rnn.weight_hh_l0, quantize)
    torch.manual_seed(5)
    table = torch.randn(30, 4 * HIDDEN)
    ids = torch.randint(0, 30, (max(LENGTHS), len(LENGTHS)))
    active = [sum(length > t for length in LENGTHS) for t in range(max(LENGTHS))]
    feeds = [(table, ids), (projected(rnn, padded_inputs()), None)]
    for inputs, index in feeds:
        compiled = recurrence.run(inputs, index, LENGTHS, reverse, torch.zeros(max(LENGTHS), len(LENGTHS), HIDDEN))
        eager = recurrence_steps(torch.zeros_like(compiled), inputs, index, active, reverse, recurrence.hidden.packed, recurrence.hidden.weight)
        assert torch.equal(compiled, eager)
        assert compiled.abs().sum() > 0


@torch.inference_mode()
def test_int8_recurrence_stays_close_to_float32() -> None:
    rnn = lstm()
    inputs = projected(rnn, padded_inputs())
    runs = [Recurrence(rnn.weight_hh_l0, q).run(inputs, None, LENGTHS, False, torch.zeros(max(LENGTHS), len(LENGTHS), HIDDEN)) for q in (False, True)]
    assert not torch.equal(runs[0], runs[1])
    assert (runs[0] - runs[1]).abs().max() < 0.05
