"""BiLSTM-CRF training steps: the reprojection over the padded batch (Flair's `SequenceTagger.forward`) against
the real tokens only (`flairsuite.models.crf.emissions`), and that under bfloat16 autocast (`precision: bfloat16`).

Flair's taggers map every embedding through `embedding2nn` (a dim x dim linear map: 1,324 x 1,324 for
the recipe's char-LM pair + fastText dim 300) before the LSTM, padding included; random batches of
32 Sturm sentences pad the tokens about 3.7x. The suite applies the map to the packed real tokens
(BiLSTM) or to the tokens under the padding mask (no RNN), after the dropouts, which still draw their
masks over the padded batch, so the random numbers and the values at the real tokens stay the same.
(`map` and `map-crf` have no reprojection.) Timed per batch: the loss forward and backward of `bilstm-crf`, on random embeddings
shaped like batches of --corpus (Sturm by default; lengths from its train split with --corpora-dir or
$FLAIRSUITE_CORPORA, else 5-60). Checks that both give the same loss in training mode (same seed, same dropout masks);
exits with 1 where the suite's path is the slower. The bfloat16 column runs the suite's path under
`flairsuite.runtime.precision.autocast` (the LSTM and the linear maps in bfloat16: oneDNN with AMX where the CPU has
it; shown only on a CPU with bfloat16 units); its loss differs from float32 by rounding, shown beside. The last row is
the bfloat16 step with the CRF's former forward recursion (`log_partition_cube`). The `oneDNN LSTM` row runs the LSTM
on the padded batch (oneDNN's fused kernel; each sentence reversed for the backward direction). Run by hand:

    python benchmarks/bilstm_step_speed.py --quick
    FLAIRSUITE_CORPORA=/path/to/corpora python benchmarks/bilstm_step_speed.py --threads 1
"""

import argparse
from typing import Callable, Optional

import flair
import torch
from common import run_main
from crf_speed import batch_parser, parsed, sentence_lengths, timed
from flair.data import Dictionary
from flair.embeddings import TokenEmbeddings

from flairsuite.models.crf import crf_loss, emissions, gold_tensor, log_partition, log_partition_cube, real_tokens_only
from flairsuite.models.protocol import start_stop
from flairsuite.models.registry import build_tagger
from flairsuite.runtime.precision import autocast, native_bfloat16

Batch = tuple[torch.Tensor, torch.Tensor, list[list[str]]]  # embeddings (B, L, D), lengths (B,), gold BIO tags


class FixedWidth(TokenEmbeddings):
    """A stand-in embedding of the stack's width; the batches bring their own tensors."""

    def __init__(self, width: int) -> None:
        self.name, self.static_embeddings, self._width = f"width-{width}", True, width
        super().__init__()

    @property
    def embedding_length(self) -> int:
        return self._width

    def _add_embeddings_internal(self, sentences):  # pragma: no cover - never called
        return sentences


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = batch_parser(__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=1324, help="embedding length (default 1,324: 2 x 512 + 300)")
    args = parsed(parser, argv)
    args.device = "cpu"
    return args


def padded_emissions(model: torch.nn.Module, tensor: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Flair's order: dropouts, reprojection of the whole padded batch, LSTM over the packed result, dropouts, tag map."""
    for use, layer in ((model.use_dropout, "dropout"), (model.use_word_dropout, "word_dropout"), (model.use_locked_dropout, "locked_dropout")):
        tensor = getattr(model, layer)(tensor) if use else tensor
    tensor = model.embedding2nn(tensor) if model.reproject_embeddings else tensor
    if model.use_rnn:
        packed = torch.nn.utils.rnn.pack_padded_sequence(tensor, lengths, batch_first=True)
        tensor, _ = torch.nn.utils.rnn.pad_packed_sequence(model.rnn(packed)[0], batch_first=True)
    for use, layer in ((model.use_dropout, "dropout"), (model.use_locked_dropout, "locked_dropout")):
        tensor = getattr(model, layer)(tensor) if use else tensor
    return model.linear(tensor)


def onednn_emissions(model: torch.nn.Module, tensor: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """`emissions` with the LSTM run on the padded batch, where torch hands a float32 CPU LSTM to oneDNN's fused kernel
    (packed sequences never go there): the forward direction as it is, the backward one on each sentence reversed within
    its length, so that the padding stays behind the real tokens in both and their outputs are the packed LSTM's."""
    for use, layer in ((model.use_dropout, "dropout"), (model.use_word_dropout, "word_dropout"), (model.use_locked_dropout, "locked_dropout")):
        tensor = getattr(model, layer)(tensor) if use else tensor
    if model.reproject_embeddings:
        tensor = real_tokens_only(model.embedding2nn, tensor, lengths)
    rnn, longest = model.rnn, tensor.size(1)
    positions = torch.arange(longest).unsqueeze(0)
    mask = positions < lengths.unsqueeze(1)
    reverse = torch.where(mask, lengths.unsqueeze(1) - 1 - positions, positions).unsqueeze(2)
    start = tensor.new_zeros(1, tensor.size(0), rnn.hidden_size)

    def direction(inputs: torch.Tensor, suffix: str) -> torch.Tensor:
        weights = [getattr(rnn, f"{name}_l0{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        return torch.lstm(inputs, (start, start), weights, True, 1, 0.0, model.training, False, True)[0]

    ahead = direction(tensor, "")
    behind = direction(tensor.gather(1, reverse.expand(-1, -1, tensor.size(2))), "_reverse")
    behind = behind.gather(1, reverse.expand(-1, -1, behind.size(2)))
    tensor = torch.cat([ahead, behind], dim=2) * mask.unsqueeze(2)
    for use, layer in ((model.use_dropout, "dropout"), (model.use_locked_dropout, "locked_dropout")):
        tensor = getattr(model, layer)(tensor) if use else tensor
    return model.linear(tensor)


def step(model: torch.nn.Module, scores: Callable, precision: str = "float32", partition: Callable = log_partition) -> Callable[[Batch], float]:
    """Loss forward and backward of one batch with the emissions from `scores`, the forward pass in `precision`,
    the CRF's forward algorithm by `partition`."""

    def run(batch: Batch) -> float:
        tensor, lengths, gold = batch
        flair.set_seed(7)
        with autocast(tensor.device, precision):
            values = scores(model, tensor, lengths).float()
        gold_ids = gold_tensor(model.label_dictionary, gold, values.size(1))
        loss = crf_loss(values, gold_ids, lengths, model.crf.transitions, *start_stop(model), partition=partition)
        model.zero_grad()
        loss.backward()
        return loss.item()

    return run


def make_batches(lengths: list[int], types: tuple[str, ...], args: argparse.Namespace) -> list[Batch]:
    generator = torch.Generator().manual_seed(args.seed)
    tags = ["O"] + [f"{p}-{t}" for t in types for p in "BI"]
    batches = []
    for start in range(0, len(lengths), args.batch_size):
        sizes = torch.tensor(sorted(lengths[start : start + args.batch_size], reverse=True))
        tensor = torch.randn(len(sizes), int(sizes[0]), args.width, generator=generator)
        tensor *= (torch.arange(int(sizes[0])) < sizes.unsqueeze(1)).unsqueeze(2)  # zero padding, as the cache's batches
        gold = [[tags[i] for i in torch.randint(len(tags), (int(n),), generator=generator).tolist()] for n in sizes]
        batches.append((tensor, sizes, gold))
    return batches


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    lengths, types, source = sentence_lengths(args)
    batches = make_batches(lengths, types, args)
    real = sum(int(b[1].sum()) for b in batches)
    padded = sum(b[0].shape[0] * b[0].shape[1] for b in batches)
    labels = Dictionary(add_unk=False)
    for kind in types:
        labels.add_item(kind)
    labels.span_labels = True  # as make_label_dictionary marks entity types: a BIO span tagger
    print(f"{len(batches)} batches of {args.batch_size} ({source}): padded tokens {padded / real:.2f}x the real ones; "
          f"embedding width {args.width}; {torch.get_num_threads()} threads", flush=True)
    model = build_tagger("bilstm-crf", FixedWidth(args.width), labels, "ner").train()
    steps = {"padded": step(model, padded_emissions), "real only": step(model, emissions), "oneDNN LSTM": step(model, onednn_emissions)}
    if native_bfloat16(torch.device("cpu")):  # elsewhere oneDNN emulates bfloat16, several times slower than float32
        steps.update({"+ bfloat16": step(model, emissions, "bfloat16"), "cube CRF": step(model, emissions, "bfloat16", log_partition_cube)})
    gaps = {name: max(abs(run(b) - steps["padded"](b)) / abs(steps["padded"](b)) for b in batches[:4]) for name, run in steps.items()}
    seconds = {name: timed(run, batches, args) for name, run in steps.items()}
    print(f"\nbilstm-crf loss forward+backward, ms per batch (median of {args.repeats}), speed-up against padded float32:")
    for name, value in seconds.items():
        print(f"  {name:<12}{1000 * value:>8.1f} ms {seconds['padded'] / value:>6.2f}x   (loss relative difference {gaps[name]:.1e})")
    print("(oneDNN LSTM: 'real only' with the LSTM on the padded batch, each sentence reversed for the backward direction)")
    if "cube CRF" in seconds:
        faster = seconds["cube CRF"] / seconds["+ bfloat16"]
        print(f"(cube CRF: '+ bfloat16' with the CRF's former log-sum-exp recursion; the scaled one is {faster:.2f}x as fast)")
    else:
        print("(no bfloat16 rows: this CPU has no bfloat16 units, AVX-512 BF16 or AMX)")
    return 0 if seconds["padded"] >= seconds["real only"] else 1


if __name__ == "__main__":
    run_main(main)
