"""CRF speed: Flair's CRF (ViterbiLoss, ViterbiDecoder) against LCRF-NER's vectorised loss and Viterbi.

Both get the same random emission tensors, gold tags and transitions, shaped like mini-batches of a corpus
(--corpus: Sturm by default, or LER coarse / fine): batch 32, the BIO tags of its types plus <START>/<STOP>,
sentence lengths from its train split (with --corpora-dir or $FLAIRSUITE_CORPORA; shuffled, cut into
batches, each sorted longest first) or else drawn uniformly from 5-60 with Sturm's types. Timed, per batch: the loss forward and backward (down to the
emissions), and decoding to (tag, confidence) lists; Flair's side includes its CRF layer that
expands the emissions to (batch, length, tags, tags). Prints the median over --repeats passes and
the speed-up, and checks that both give the same loss and tags; exits with 1 where LCRF-NER is the
slower. The last lines time the suite's loss (`log_partition`: the scaled exp-space recursion, its gradient by the
matching backward recursion) against its former ones: the log-sum-exp recursion over the score cube
(`log_partition_cube`, its fallback) and the same scaled recursion differentiated by autograd
(`autograd_scaled_partition` below). Run by hand:

    python benchmarks/crf_speed.py --quick
    FLAIRSUITE_CORPORA=/path/to/corpora python benchmarks/crf_speed.py --threads 2
"""

import argparse
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Optional

import flair
import torch
from common import run_main
from flair.data import Dictionary
from flair.models.sequence_tagger_utils.crf import CRF
from flair.models.sequence_tagger_utils.viterbi import ViterbiDecoder, ViterbiLoss

from flairsuite.files.atomic import write_json
from flairsuite.files.paths import CORPORA_ENV
from flairsuite.models.crf import crf_loss, log_partition_cube
from flairsuite.models.lcrf import LCRFNER, tagged

STURM_TYPES = ("pers", "date", "place")  # the types when the corpus is not loaded
CORPORA = {"sturm": ("sturm", {}), "ler-coarse": ("ler", {"granularity": "coarse"}), "ler-fine": ("ler", {"granularity": "fine"})}
RANDOM_LENGTHS = (5, 60)

Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # emissions (B, L, K), lengths (B,), gold ids (B, L)


def batch_parser(description: str) -> argparse.ArgumentParser:
    """The options of a benchmark over Sturm-shaped mini-batches (this one's, bilstm_step_speed.py's)."""
    parser = argparse.ArgumentParser(description=description)
    add = parser.add_argument
    add("--batches", type=int, default=40, help="mini-batches per pass (default 40)")
    add("--repeats", type=int, default=5, help="timed passes; the median is reported (default 5)")
    add("--quick", action="store_true", help="10 batches, 2 passes: a check that it works")
    add("--batch-size", type=int, default=32)
    add("--threads", type=int, default=0, help="torch threads (default: torch's)")
    add("--corpora-dir", help=f"datasets folder with sturm/ (default: ${CORPORA_ENV}; neither: random lengths)")
    add("--corpus", default="sturm", choices=sorted(CORPORA), help="whose train lengths and span types (default sturm)")
    add("--seed", type=int, default=1)
    return parser


def parsed(parser: argparse.ArgumentParser, argv: Optional[list[str]]) -> argparse.Namespace:
    """`parser`'s arguments, --quick applied, sizes checked."""
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.repeats = 10, 2
    if min(args.batches, args.repeats, args.batch_size) <= 0:
        parser.error("--batches, --repeats and --batch-size must be positive")
    return args


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = batch_parser(__doc__.split("\n")[0])
    parser.add_argument("--tag-format", default="BIO", choices=("BIO", "BIOES"))
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda (default cpu)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    return parsed(parser, argv)


def label_dictionary(types: tuple[str, ...], tag_format: str) -> Dictionary:
    """The tag dictionary a CRF SequenceTagger builds for these span types."""
    labels = Dictionary(add_unk=False)
    for kind in types:
        labels.add_item("O")
        for prefix in tag_format.replace("O", ""):
            labels.add_item(f"{prefix}-{kind}")
    labels.set_start_stop_tags()
    return labels


def sentence_lengths(args: argparse.Namespace) -> tuple[list[int], tuple[str, ...], str]:
    """Lengths of the sentences to batch, the span types, and where they come from."""
    root = args.corpora_dir or os.environ.get(CORPORA_ENV)
    count = args.batches * args.batch_size
    if not root:
        rng = random.Random(args.seed)
        return [rng.randint(*RANDOM_LENGTHS) for _ in range(count)], STURM_TYPES, f"random lengths {RANDOM_LENGTHS[0]}-{RANDOM_LENGTHS[1]}"
    from flairsuite.corpora.loading import load_corpus

    name, options = CORPORA[args.corpus]
    corpus = load_corpus(name, Path(root), splits=["train"], **options)
    lengths = [len(sentence) for sentence in corpus.train]
    random.Random(args.seed).shuffle(lengths)
    types = tuple(corpus.make_label_dictionary("ner", add_unk=False).get_items())
    return (lengths * (count // len(lengths) + 1))[:count], types, f"{args.corpus} train lengths ({len(lengths)} sentences)"


def make_batches(lengths: list[int], tags: int, args: argparse.Namespace) -> list[Batch]:
    """Random emissions (requiring grad) and gold ids per mini-batch, sorted longest first."""
    generator = torch.Generator().manual_seed(args.seed)
    batches = []
    for start in range(0, len(lengths), args.batch_size):
        sizes = torch.tensor(sorted(lengths[start : start + args.batch_size], reverse=True))
        shape = (len(sizes), int(sizes[0]))
        emissions = torch.randn(*shape, tags - 2, generator=generator)
        emissions = torch.cat([emissions, torch.zeros(*shape, 2)], dim=2).to(args.device).requires_grad_()  # <START>, <STOP> last
        gold = torch.randint(tags - 2, shape, generator=generator).to(args.device)
        batches.append((emissions, sizes, gold))
    return batches


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(step: Callable[[Batch], Any], batches: list[Batch], args: argparse.Namespace) -> float:
    """Median seconds per batch of `step` over --repeats passes (after one untimed pass)."""
    passes = []
    for repeat in range(args.repeats + 1):
        synchronize(args.device)
        start = time.perf_counter()
        for batch in batches:
            step(batch)
        synchronize(args.device)
        passes.append(time.perf_counter() - start)
    return statistics.median(passes[1:]) / len(batches)


def flair_gold(gold: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Gold ids flattened over the real tokens, as Flair's ViterbiLoss takes them."""
    return torch.cat([row[:length] for row, length in zip(gold, lengths.tolist())])


def flair_steps(crf: CRF, labels: Dictionary) -> tuple[Callable[[Batch], Any], Callable[[Batch], Any]]:
    """Flair's loss (forward + backward) and decoding steps."""
    loss_function, decoder = ViterbiLoss(labels), ViterbiDecoder(labels)

    def loss(batch: Batch) -> torch.Tensor:
        emissions, lengths, gold = batch
        value = loss_function((crf(emissions), lengths, crf.transitions), flair_gold(gold, lengths))
        value.backward()
        return value.detach()

    def decode(batch: Batch) -> list[list[tuple[str, float]]]:
        emissions, lengths, _ = batch
        with torch.no_grad():
            return decoder.decode((crf(emissions), lengths, crf.transitions), False, [])[0]

    return loss, decode


def lcrf_steps(lcrf: LCRFNER, labels: Dictionary) -> tuple[Callable[[Batch], Any], Callable[[Batch], Any]]:
    """LCRF-NER's loss (forward + backward) and decoding steps."""

    def loss(batch: Batch) -> torch.Tensor:
        emissions, lengths, gold = batch
        value = lcrf.loss(emissions, gold, lengths)
        value.backward()
        return value.detach()

    def decode(batch: Batch) -> list[list[tuple[str, float]]]:
        emissions, lengths, _ = batch
        with torch.no_grad():
            return tagged(labels, *lcrf.decode(emissions, lengths), lengths)

    return loss, decode


def autograd_scaled_partition(scores: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """The suite's scaled forward recursion as it was before its hand-written backward: autograd records every step."""
    work, moves = scores.double(), transitions.double()
    shift = moves.amax(dim=1)
    weights = torch.exp(moves - shift.unsqueeze(1)).T
    shifted = work + shift
    top = shifted.amax(dim=2, keepdim=True)
    emitted = torch.exp(shifted - top)
    alpha = work[:, 0] + moves[:, start]
    peak = alpha.amax(dim=1, keepdim=True)
    forward, norms = torch.exp(alpha - peak), [torch.ones_like(peak)]
    for t in range(1, work.size(1)):
        step = (forward @ weights) * emitted[:, t]
        norm = step.sum(dim=1, keepdim=True)
        keep = mask[:, t].unsqueeze(1)
        forward = torch.where(keep, step / norm, forward)
        norms.append(torch.where(keep, norm, 1.0))
    scale = peak.squeeze(1) + (torch.log(torch.cat(norms, dim=1)) + top[:, :, 0].masked_fill(~mask, 0.0)).sum(dim=1) - top[:, 0, 0]
    return (scale + torch.log(forward @ torch.exp(moves[stop]))).to(scores.dtype)


def partition_loss_step(lcrf: LCRFNER, partition: Callable[..., torch.Tensor]) -> Callable[[Batch], Any]:
    """LCRF-NER's loss (forward + backward) with the forward algorithm `partition`."""

    def loss(batch: Batch) -> torch.Tensor:
        emissions, lengths, gold = batch
        value = crf_loss(emissions, gold, lengths, lcrf.transitions, lcrf.start, lcrf.stop, partition=partition)
        value.backward()
        return value.detach()

    return loss


def agreement(flair: tuple[Callable, Callable], lcrf: tuple[Callable, Callable], batches: list[Batch]) -> tuple[float, float]:
    """The largest relative loss difference and the share of tokens tagged alike."""
    losses = [(flair[0](b), lcrf[0](b)) for b in batches]
    loss_gap = max(float(abs(x - y) / abs(x)) for x, y in losses)
    pairs = [(x[0], y[0]) for b in batches for rows in zip(flair[1](b), lcrf[1](b)) for x, y in zip(*rows)]
    return loss_gap, sum(x == y for x, y in pairs) / len(pairs)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    flair.device = torch.device(args.device)
    lengths, types, source = sentence_lengths(args)
    labels = label_dictionary(types, args.tag_format)
    batches = make_batches(lengths, len(labels), args)
    tokens = sum(int(b[1].sum()) for b in batches) / len(batches)
    crf = CRF(labels, len(labels), init_from_state_dict=False)
    lcrf = LCRFNER(labels, args.tag_format).to(flair.device)
    with torch.no_grad():
        lcrf.weights.copy_(crf.transitions)  # the same transitions: T = W at ω_factor = 1, ω_absolute = 0
    flair_pair, lcrf_pair = flair_steps(crf, labels), lcrf_steps(lcrf, labels)
    print(f"{len(batches)} batches of {args.batch_size} ({source}), {tokens:.0f} tokens and {len(labels)} tags "
          f"({args.tag_format} of {', '.join(types)} + <START>/<STOP>); {args.device}, {torch.get_num_threads()} threads", flush=True)
    loss_gap, same_tags = agreement(flair_pair, lcrf_pair, batches)
    print(f"check: loss relative difference <= {loss_gap:.1e}, same tag on {same_tags:.2%} of tokens", flush=True)
    rows = {}
    for what, index in (("loss forward+backward", 0), ("Viterbi decoding", 1)):
        flair_seconds, lcrf_seconds = timed(flair_pair[index], batches, args), timed(lcrf_pair[index], batches, args)
        rows[what] = {"flair_ms": 1000 * flair_seconds, "lcrf_ms": 1000 * lcrf_seconds, "speedup": flair_seconds / lcrf_seconds}
    print(f"\n{'ms per batch (median of ' + str(args.repeats) + ')':<32}{'Flair CRF':>10}{'LCRF-NER':>10}{'speed-up':>10}")
    for what, row in rows.items():
        print(f"{what:<32}{row['flair_ms']:>10.2f}{row['lcrf_ms']:>10.2f}{row['speedup']:>9.1f}x")
    ours = rows["loss forward+backward"]["lcrf_ms"]
    rows["recursion"] = {"default_ms": ours}
    print(f"\nthe suite's loss, forward+backward: {ours:.2f} ms (scaled recursion, hand-written backward recursion); formerly")
    for name, label, partition in (("cube", "log-sum-exp over the score cube, autograd", log_partition_cube),
                                   ("autograd", "the scaled recursion, autograd", autograd_scaled_partition)):
        rows["recursion"][f"{name}_ms"] = 1000 * timed(partition_loss_step(lcrf, partition), batches, args)
        print(f"  {label:<44}{rows['recursion'][f'{name}_ms']:>8.2f} ms  (now {rows['recursion'][f'{name}_ms'] / ours:.2f}x as fast)")
    if args.out:
        write_json(args.out, {"args": {k: str(v) for k, v in vars(args).items()}, "source": source, "tags": len(labels),
                              "tokens_per_batch": tokens, "loss_gap": loss_gap, "same_tags": same_tags, "rows": rows})
        print(f"\nresults: {args.out}")
    return 0 if min(row["speedup"] for what, row in rows.items() if what != "recursion") >= 1 else 1


if __name__ == "__main__":
    run_main(main)
