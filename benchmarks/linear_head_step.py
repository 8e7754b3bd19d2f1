"""Training steps of the linear heads (`map`, `map-crf`) on a corpus's cached embeddings: the former path against the runner's.

Former: each batch's float16 rows converted to float32 by numpy, the tag map (`linear`, 1,324 x tags for the
recipe's stack) applied to the whole zero-padded batch, as Flair's `SequenceTagger.forward` does, and the CRF's
forward recursion differentiated by autograd. Now (`flairsuite/tagging/features.py`, `flairsuite/models/crf.py`):
torch converts the rows, a head without an RNN maps only the tokens under the padding mask (the padding's scores
are masked out by the loss either way), and the CRF's gradient comes from its backward recursion.
Both paths run the same batches (random batches of 32 of train, as an epoch draws them) with the same dropout
masks; timed per batch: gathering the batch, the loss forward and backward, the optimizer step. The script checks
that the losses agree and exits with 1 where the runner's path is the slower. Needs the corpus's cache for the
stack (a tagging run of it builds it; computed here if missing). Run by hand:

    FLAIRSUITE_CORPORA=../shared/corpora python benchmarks/linear_head_step.py --threads 1 [--corpus ler --option granularity=coarse]
"""

import argparse
import statistics
import time
from typing import Callable

import flair
import numpy as np
import torch
from bilstm_step_speed import FixedWidth
from common import run_main
from crf_speed import autograd_scaled_partition

from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.run_data import LABEL_TYPE, tag_dictionary
from flairsuite.files.paths import corpora_dir, home
from flairsuite.models.crf import crf_loss, gold_tensor, padding_mask
from flairsuite.models.protocol import features_loss, start_stop
from flairsuite.models.registry import build_tagger
from flairsuite.tagging.cache import cached_vectors
from flairsuite.tagging.data import labeled_splits
from flairsuite.tagging.features import SplitFeatures

STACK = ("charlm:de-forward", "charlm:de-backward", "fasttext:de")


class FormerFeatures(SplitFeatures):
    """The batches as the runner built them before: numpy's float16 -> float32 conversion."""

    def _flat(self, order: list[int]) -> torch.Tensor:
        rows = self._rows(order)
        return torch.cat([torch.from_numpy(np.asarray(part[rows], dtype=np.float32)) for part in self.parts], dim=1)


def former_loss(model: torch.nn.Module, tensor: torch.Tensor, lengths: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
    """The loss with the tag map over the whole padded batch (Flair's forward for a head without RNN or reprojection)."""
    assert not model.use_rnn and not model.reproject_embeddings
    for use, layer in ((model.use_dropout, "dropout"), (model.use_word_dropout, "word_dropout"), (model.use_locked_dropout, "locked_dropout"),
                       (model.use_dropout, "dropout"), (model.use_locked_dropout, "locked_dropout")):
        tensor = getattr(model, layer)(tensor) if use else tensor
    scores = model.linear(tensor).float()
    tags = gold_tensor(model.label_dictionary, gold, scores.size(1))
    if model.use_crf:
        return crf_loss(scores, tags, lengths, model.crf.transitions, *start_stop(model), partition=autograd_scaled_partition)
    mask = padding_mask(lengths, scores.size(1), scores.device)
    return torch.nn.functional.cross_entropy(scores[mask], tags[mask], reduction="sum")


def step(model: torch.nn.Module, features: SplitFeatures, loss_of: Callable, optimizer: torch.optim.Optimizer) -> Callable[[list[int]], float]:
    """One training step on the sentences `indices`: the batch gathered, loss, backward, clipping, Adam; returns the loss."""

    def run(indices: list[int]) -> float:
        batch = features.batch(indices)
        flair.set_seed(7)
        loss = loss_of(model, batch.tensor, batch.lengths, batch.gold)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        return loss.item()

    return run


def median_ms(run: Callable[[list[int]], float], batches: list[list[int]], repeats: int) -> float:
    """Median over `repeats` passes of the mean milliseconds a batch."""
    passes = []
    for _ in range(repeats):
        started = time.perf_counter()
        for indices in batches:
            run(indices)
        passes.append(1000 * (time.perf_counter() - started) / len(batches))
    return statistics.median(passes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", default="arendt", help="registry corpus (default: arendt)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="its options, e.g. granularity=coarse")
    parser.add_argument("--batches", type=int, default=200, help="batches of 32 a pass (default 200)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    corpus = CorpusChoice(args.corpus, dict(option.split("=", 1) for option in args.option))
    train = labeled_splits(corpus.spec(), None, corpora_dir(None))["train"]
    parts = [cached_vectors(spec, train, home(), f"embed {corpus.key} train {spec}")[0] for spec in STACK]
    order = torch.randperm(len(train), generator=torch.Generator().manual_seed(1)).tolist()
    batches = [order[i : i + 32] for i in range(0, 32 * args.batches, 32)]
    lengths = np.array([len(tags) for tags in train.tags])
    padded = sum(len(b) * lengths[b].max() for b in batches) / sum(lengths[b].sum() for b in batches)
    print(f"{corpus.key}: {len(batches)} random batches of 32 of train, padded tokens {padded:.2f}x the real ones; stack {' + '.join(STACK)}; "
          f"{torch.get_num_threads()} threads")
    slower = False
    for name in ("map", "map-crf"):
        seconds, losses = {}, {}
        for label, features, loss_of in (("former", FormerFeatures(train, parts), former_loss), ("runner", SplitFeatures(train, parts), features_loss)):
            flair.set_seed(1)
            model = build_tagger(name, FixedWidth(sum(part.shape[1] for part in parts)), tag_dictionary(corpus), LABEL_TYPE).train()
            run = step(model, features, loss_of, torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.01))
            losses[label] = [run(indices) for indices in batches[:5]]  # from the same initial weights: the first steps' losses
            seconds[label] = median_ms(run, batches, args.repeats)
        gap = max(abs(a - b) / abs(a) for a, b in zip(losses["former"], losses["runner"]))
        print(f"  {name:<8} former {seconds['former']:6.1f} ms a batch   runner {seconds['runner']:6.1f} ms   "
              f"{seconds['former'] / seconds['runner']:.2f}x   (first 5 losses: relative difference {gap:.1e})")
        slower |= seconds["runner"] > seconds["former"]
    return 1 if slower else 0


if __name__ == "__main__":
    run_main(main)
