"""`FastTagger`: the raw tags and confidences a SequenceTagger predicts for many sentences, fast.

Per batch: the stacked embedding tensor straight from the embeddings (`embed.py`; the featurizers
run in parallel threads, one intra-op thread each on 2 cores), then the tagger's layers (`FastHead`),
then Viterbi (vectorised, Flair's values: `flairsuite.models.crf`) or arg-max decoding. Batches are
length-bucketed (`flairsuite.embeddings.length_batches`): sentences sorted by length, cut at `batch_size`
sentences or `char_budget` padded characters, whichever comes first; the LSTMs (`flairsuite.embeddings.lstm`)
skip padding. With `quantize` (CPU only) the character LMs' LSTMs run in int8, and the tagger's own layers by `head`
(HEAD_ARITHMETIC): `mixed` (the default) runs its LSTM's recurrence in int8 and its input map (the reprojection folded
into the LSTM's) in bfloat16 where the CPU computes bfloat16 natively, float32 elsewhere. That map reads the LMs' states
and the word vectors, of very different scales, side by side: int8 there (one activation scale for the row,
`head="int8"`) lost an entity on Sturm's test against Flair and moved 0.1 % more of the tags; one int8 scale per
embedding kept the F1 but moved as many tags; bfloat16 (a rounding per value) moved none (benchmarks/README.md,
predict_speed.py). `head="float32"` keeps every layer of the tagger in float32.
"""

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import torch
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.embeddings import length_batches
from flairsuite.embeddings.lstm import Affine, Recurrence, doubled_cell_gate
from flairsuite.inference.embed import stack_featurizers
from flairsuite.models.crf import Tagged, padding_mask
from flairsuite.models.protocol import decode_scores, features_decode
from flairsuite.runtime.precision import native_bfloat16

BATCH_SIZE = 256  # sentences per batch at most
CHAR_BUDGET = 1 << 15  # padded characters per batch at most: bounds each LM's states to 64 MB at hidden 512
HEAD_ARITHMETIC = ("mixed", "float32", "int8")  # the tagger's layers under quantize (module docstring)


class FastHead:
    """A plain SequenceTagger's layers after the embeddings as affine maps and LSTM recurrences.

    The reprojection (a linear map) is folded into the map that follows it: each LSTM direction's input
    projection, or the tag map of a tagger without RNN. Dropout is the identity at inference.
    """

    def __init__(self, model: SequenceTagger, arithmetic: str) -> None:
        if arithmetic not in HEAD_ARITHMETIC:
            raise ValueError(f"head arithmetic must be one of {', '.join(HEAD_ARITHMETIC)} (found {arithmetic!r})")
        bfloat16 = arithmetic == "mixed" and native_bfloat16(next(model.parameters()).device)
        reproject = model.embedding2nn if model.reproject_embeddings else None

        def fold(weight: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """The map x -> weight · reproject(x) + bias as one (weight, bias)."""
            weight, bias = weight.detach(), bias.detach()
            if reproject is None:
                return weight, bias
            return weight @ reproject.weight.detach(), weight @ reproject.bias.detach() + bias

        self.inputs: list[Affine] = []
        self.recurrences: list[Recurrence] = []
        if model.use_rnn:
            rnn = model.rnn
            for s in ["", "_reverse"] if rnn.bidirectional else [""]:
                bias = getattr(rnn, f"bias_ih_l0{s}") + getattr(rnn, f"bias_hh_l0{s}")
                folded = fold(doubled_cell_gate(getattr(rnn, f"weight_ih_l0{s}")), doubled_cell_gate(bias))
                self.inputs.append(Affine(*folded, arithmetic == "int8", bfloat16=bfloat16))
                self.recurrences.append(Recurrence(getattr(rnn, f"weight_hh_l0{s}"), arithmetic != "float32"))
            self.output = Affine(model.linear.weight, model.linear.bias, False)
        else:
            self.output = Affine(*fold(model.linear.weight, model.linear.bias), False)

    @staticmethod
    def supports(model: SequenceTagger) -> bool:
        """A plain SequenceTagger without RNN or with a one-layer LSTM (the suite's taggers, Flair's defaults)."""
        if type(model) is not SequenceTagger:
            return False
        rnn = model.rnn if model.use_rnn else None
        return rnn is None or (isinstance(rnn, torch.nn.LSTM) and rnn.num_layers == 1 and rnn.bias and rnn.proj_size == 0)

    def direction(self, k: int, embedded: torch.Tensor, layout: "Layout") -> torch.Tensor:
        """LSTM direction k's hidden states (time, batch, H) over the batch's token embeddings (tokens, dim)."""
        padded = layout.time_major(self.inputs[k](embedded), zeroed=False)  # the recurrence reads real positions only
        out = padded.new_zeros(*padded.shape[:2], self.recurrences[k].hidden_size)
        return self.recurrences[k].run(padded, None, layout.lengths, k == 1, out)

    def emissions(self, embedded: torch.Tensor, layout: "Layout", pool: ThreadPoolExecutor) -> torch.Tensor:
        """Tag scores (batch, time, tags); the LSTM's directions run in parallel in `pool`."""
        if not self.recurrences:
            return layout.batch_major(self.output(embedded))
        outs = pool.map(inferring(lambda k: self.direction(k, embedded, layout)), range(len(self.recurrences)))
        return self.output(torch.cat(list(outs), dim=2).transpose(0, 1))


class Layout:
    """Where a batch's token rows (sentence after sentence, longest sentence first) go in padded tensors."""

    def __init__(self, lengths: list[int], device: torch.device) -> None:
        self.lengths = lengths
        self.shape = (lengths[0], len(lengths))  # (time, batch)
        self.mask = padding_mask(torch.tensor(lengths), lengths[0], device)  # (batch, time)
        batch, step = self.mask.nonzero(as_tuple=True)
        self.time_index = step * len(lengths) + batch

    def batch_major(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, dim) -> zero-padded (batch, time, dim)."""
        padded = rows.new_zeros(self.shape[1], self.shape[0], rows.size(1))
        padded[self.mask] = rows
        return padded

    def time_major(self, rows: torch.Tensor, zeroed: bool = True) -> torch.Tensor:
        """(tokens, dim) -> (time, batch, dim), padded with zeros (or, not `zeroed`, with whatever the memory held)."""
        size = (self.shape[0] * self.shape[1], rows.size(1))
        padded = rows.new_zeros(size) if zeroed else rows.new_empty(size)
        padded[self.time_index] = rows
        return padded.view(*self.shape, rows.size(1))


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count set to `count` within the block."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def inferring(function: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`function` run in inference mode (a thread-local setting, so set in every worker thread)."""

    def run(*args: Any) -> torch.Tensor:
        with torch.inference_mode():
            return function(*args)

    return run


class FastTagger:
    """`tag(sentences)`: per sentence, per token, the raw tag the model decodes and its confidence (Flair's)."""

    def __init__(
        self, model: SequenceTagger, quantize: bool = True, batch_size: int = BATCH_SIZE, char_budget: int = CHAR_BUDGET, head: str = "mixed"
    ) -> None:
        model.eval()
        self.model = model
        self.device = next(model.parameters()).device
        quantize = quantize and self.device.type == "cpu"
        self.featurizers = stack_featurizers(model.embeddings, quantize)
        self.head = FastHead(model, head if quantize else "float32") if FastHead.supports(model) else None
        self.batch_size = batch_size
        self.char_budget = char_budget

    def batches(self, sentences: list[Sentence]) -> Iterator[list[int]]:
        """Indices of the non-empty sentences in length-bucketed batches, each ordered by token count, longest first."""
        chars = {i: len(s.to_tokenized_string()) + 2 for i, s in enumerate(sentences) if len(s)}
        for batch in length_batches(chars, self.char_budget, self.batch_size, shortest_first=True):
            yield sorted(batch, key=lambda j: -len(sentences[j]))

    def decode(self, embedded: torch.Tensor, lengths: list[int], pool: ThreadPoolExecutor) -> Tagged:
        """Tags and confidences of a batch from its embeddings (tokens, dim), sentences longest first."""
        layout = Layout(lengths, embedded.device)
        length = torch.tensor(lengths)
        if self.head is None:
            return features_decode(self.model, layout.batch_major(embedded), length)
        return decode_scores(self.model, self.head.emissions(embedded, layout, pool), length)

    def tag(self, sentences: list[Sentence]) -> Tagged:
        """The model's raw tags and confidences for every sentence (an empty sentence gets [])."""
        result: Tagged = [[] for _ in sentences]
        # torch's thread count is the budget: two heavy tasks at a time (the LM pair, the LSTM's
        # directions) in two threads with half of it each, or one after the other with one thread
        budget = torch.get_num_threads()
        workers = min(2, budget)
        with torch.inference_mode(), torch_threads(budget // workers), ThreadPoolExecutor(workers) as pool:
            for batch in self.batches(sentences):
                chosen = [sentences[i] for i in batch]
                parts = pool.map(lambda featurizer: inferring(featurizer)(chosen), self.featurizers)
                embedded = torch.cat([part.to(self.device) for part in parts], dim=1)
                for i, tags in zip(batch, self.decode(embedded, [len(s) for s in chosen], pool)):
                    result[i] = tags
        return result
