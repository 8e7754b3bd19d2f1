"""`FastTagger`: the raw tags and confidences a SequenceTagger predicts for many sentences, fast.

Per batch: the stacked embedding tensor straight from the embeddings (`embed.py`; the featurizers
run in parallel threads, one intra-op thread each on 2 cores), then the tagger's layers (`FastHead`),
then Viterbi (vectorised, Flair's values: `flairsuite.tagging.crf`) or arg-max decoding. Batches are
length-bucketed: sentences sorted by length, cut at `batch_size` sentences or `char_budget` padded
characters, whichever comes first; the LSTMs skip padding. With `quantize` (CPU only) the character
LMs' LSTMs, the tagger's LSTM and its reprojection run in int8; the final tag map stays float32.
"""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import torch
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.inference.embed import Featurizer, stack_featurizers
from flairsuite.inference.lstm import Affine, Recurrence, doubled_cell_gate
from flairsuite.tagging.crf import Tagged, crf_decode, tagged
from flairsuite.tagging.protocol import features_decode, start_stop

BATCH_SIZE = 256  # sentences per batch at most
CHAR_BUDGET = 1 << 15  # padded characters per batch at most: bounds each LM's states to 64 MB at hidden 512


class FastHead:
    """A plain SequenceTagger's layers after the embeddings as affine maps and LSTM recurrences.

    The reprojection (a linear map) is folded into the map that follows it: the LSTM's input
    projections, or the tag map of a tagger without RNN. Dropout is the identity at inference.
    """

    def __init__(self, model: SequenceTagger, quantize: bool) -> None:
        reproject = model.embedding2nn if model.reproject_embeddings else None

        def fold(weight: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """The map x -> weight · reproject(x) + bias as one (weight, bias)."""
            weight, bias = weight.detach(), bias.detach()
            if reproject is None:
                return weight, bias
            return weight @ reproject.weight.detach(), weight @ reproject.bias.detach() + bias

        self.inputs, self.recurrences = None, []
        if model.use_rnn:
            rnn = model.rnn
            folded = [
                fold(doubled_cell_gate(getattr(rnn, f"weight_ih_l0{s}")), doubled_cell_gate(getattr(rnn, f"bias_ih_l0{s}") + getattr(rnn, f"bias_hh_l0{s}")))
                for s in self.suffixes(rnn)
            ]
            self.inputs = Affine(torch.cat([w for w, _ in folded]), torch.cat([b for _, b in folded]), quantize)
            self.recurrences = [Recurrence(getattr(rnn, f"weight_hh_l0{s}"), quantize) for s in self.suffixes(rnn)]
            self.output = Affine(model.linear.weight, model.linear.bias, False)
        else:
            self.output = Affine(*fold(model.linear.weight, model.linear.bias), False)

    @staticmethod
    def suffixes(rnn: torch.nn.LSTM) -> list[str]:
        """PyTorch's parameter suffixes of the LSTM's directions."""
        return ["", "_reverse"] if rnn.bidirectional else [""]

    @staticmethod
    def supports(model: SequenceTagger) -> bool:
        """A plain SequenceTagger without RNN or with a one-layer LSTM (the suite's taggers, Flair's defaults)."""
        if type(model) is not SequenceTagger:
            return False
        rnn = model.rnn if model.use_rnn else None
        return rnn is None or (isinstance(rnn, torch.nn.LSTM) and rnn.num_layers == 1 and rnn.bias and rnn.proj_size == 0)

    def emissions(self, padded: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        """Tag scores (batch, time, tags) of the padded embeddings (time, batch, dim), sorted longest first."""
        if self.inputs is None:
            return self.output(padded.transpose(0, 1))
        projected = self.inputs(padded)
        size = projected.size(2) // len(self.recurrences)
        outs = []
        for k, recurrence in enumerate(self.recurrences):
            part = projected[:, :, k * size : (k + 1) * size]
            out = projected.new_zeros(*padded.shape[:2], recurrence.hidden_size)
            outs.append(recurrence.run(lambda t, n, part=part: part[t, :n], lengths, k == 1, out))
        return self.output(torch.cat(outs, dim=2).transpose(0, 1))


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count set to `count` within the block."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def infer(featurizer: Featurizer, sentences: list[Sentence]) -> torch.Tensor:
    """`featurizer(sentences)` in inference mode (thread-local, so set in every worker thread)."""
    with torch.inference_mode():
        return featurizer(sentences)


class FastTagger:
    """`tag(sentences)`: per sentence, per token, the raw tag the model decodes and its confidence (Flair's)."""

    def __init__(self, model: SequenceTagger, quantize: bool = True, batch_size: int = BATCH_SIZE, char_budget: int = CHAR_BUDGET) -> None:
        model.eval()
        self.model = model
        self.device = next(model.parameters()).device
        quantize = quantize and self.device.type == "cpu"
        self.featurizers = stack_featurizers(model.embeddings, quantize)
        self.head = FastHead(model, quantize) if FastHead.supports(model) else None
        self.batch_size = batch_size
        self.char_budget = char_budget

    def batches(self, sentences: list[Sentence]) -> Iterator[list[int]]:
        """Indices of the non-empty sentences in length-bucketed batches, each ordered by token count, longest first."""
        chars = {i: len(s.to_tokenized_string()) + 2 for i, s in enumerate(sentences) if len(s)}
        batch: list[int] = []
        for i in sorted(chars, key=chars.__getitem__):
            if batch and (len(batch) >= self.batch_size or (len(batch) + 1) * chars[i] > self.char_budget):
                yield sorted(batch, key=lambda j: -len(sentences[j]))
                batch = []
            batch.append(i)
        if batch:
            yield sorted(batch, key=lambda j: -len(sentences[j]))

    def decode(self, embedded: torch.Tensor, lengths: list[int]) -> Tagged:
        """Tags and confidences of a batch from its embeddings (tokens, dim), sentences longest first."""
        time = torch.arange(lengths[0])
        length = torch.tensor(lengths)
        mask = time.unsqueeze(1) < length.unsqueeze(0)  # (time, batch), token rows in sentence-major order
        padded = embedded.new_zeros(lengths[0], len(lengths), embedded.size(1))
        padded.transpose(0, 1)[mask.T.to(embedded.device)] = embedded
        if self.head is None:
            return features_decode(self.model, padded.transpose(0, 1), length)
        scores = self.head.emissions(padded, lengths)
        if self.model.use_crf:
            tags, confidences = crf_decode(scores, length, self.model.crf.transitions, *start_stop(self.model))
        else:
            confidences, tags = torch.softmax(scores, dim=2).max(dim=2)
        return tagged(self.model.label_dictionary, tags, confidences, length)

    def tag(self, sentences: list[Sentence]) -> Tagged:
        """The model's raw tags and confidences for every sentence (an empty sentence gets [])."""
        result: Tagged = [[] for _ in sentences]
        workers = len(self.featurizers)
        threads = max(1, torch.get_num_threads() // workers)
        with torch.inference_mode(), torch_threads(threads), ThreadPoolExecutor(workers) as pool:
            for batch in self.batches(sentences):
                chosen = [sentences[i] for i in batch]
                parts = list(pool.map(infer, self.featurizers, [chosen] * workers))
                embedded = torch.cat([part.to(self.device) for part in parts], dim=1)
                for i, tags in zip(batch, self.decode(embedded, [len(s) for s in chosen])):
                    result[i] = tags
        return result
