"""Parity in lockstep: the suite's training loop and Flair's `ModelTrainer` fed the same randomness, epoch by epoch.

`parity_flair.py` compares the two trainers over many seeds, each side drawing its own batch orders
and dropout masks, so a difference in means has to be told from seed noise (Sturm: about 1.2 F1 a
run). This script takes the noise out instead. For one run of an experiment it builds the tagger
once and trains two copies of the same initial weights:

- **Flair**: `flair.trainers.ModelTrainer.train` (SGD, batch, annealing and epochs as the run says),
  its batches drawn by a sampler that replays fixed sentence orders, and a plugin that reseeds
  torch's generator before every batch;
- **the suite**: `flairsuite.tagging.tagger_training.TaggerTraining` (the loop of `flairsuite tag`), its
  epoch orders replaced by the same fixed orders and the same reseed before every batch's loss.

Both read the same float32 token vectors (the stack embedded once with the model's own
`StackedEmbeddings` and stored on the tokens, where Flair looks for them first), so the only input
difference of the real runs that remains is the suite's float16 cache, left out here on purpose.
After every epoch the script records per side the mean training loss per token, the learning
rate, the dev F1 of the model at that point (one scorer for both: the suite's strict IOB2 F1),
and the largest absolute difference between the two models' trained weights. Equal losses and
weights epoch after epoch mean the loops compute the same training; where they part, the table
shows at which epoch and by how much.

Runs whose training Flair's `ModelTrainer.train` cannot replay here (bfloat16, the linear schedule, sampled or
bucketed epochs, `train_with_dev`, embeddings trained with the tagger) are refused with one line.

    python experiments/parity_lockstep.py experiments/parity-de.yaml --run sturm/proposed+word/bilstm-crf/seed-11 --epochs 10 --threads 1

prints the table and writes it (with the settings) to `results/<experiment>-lockstep/<run>/lockstep.json`; with
`--float16` the suite's side reads the vectors rounded to float16 as from its cache (`lockstep-float16.json`), which
measures what the cache's rounding alone does to a training.
"""

import argparse
import copy
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional

import flair
import numpy as np
import torch
from flair.data import Corpus, Sentence
from flair.samplers import FlairSampler
from flair.trainers import ModelTrainer
from flair.trainers.plugins import TrainerPlugin
from tqdm import tqdm

from flairsuite.embeddings import frozen, stack
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import runs
from flairsuite.experiments.reading import load_experiment
from flairsuite.experiments.run_data import LABEL_TYPE, embedding_modules, tag_dictionary
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import corpora_dir, home, results_dir
from flairsuite.models.registry import build_tagger
from flairsuite.models.settings import OPTIMIZERS, TrainSettings
from flairsuite.tagging import tagger_training as suite_train
from flairsuite.tagging.data import LabeledSplit, load_labeled
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.tagger_training import TaggerTraining, dev_score, trained_state

EMBED_BATCH = 64  # sentences per call of the stack's embed()


def epoch_orders(sizes: np.ndarray, batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """One sentence order per epoch: a random permutation, each batch's stretch sorted longest first.

    Both trainers sort a batch longest first (stable, ties in the given order); handing them the
    order already sorted makes the rows of every batch, and so of every dropout mask, the same.
    """
    generator = torch.Generator().manual_seed(seed)
    orders = []
    for _ in range(epochs):
        order = torch.randperm(len(sizes), generator=generator).tolist()
        orders.append([i for start in range(0, len(order), batch_size) for i in sorted(order[start : start + batch_size], key=lambda i: -sizes[i])])
    return orders


def batch_seed(seed: int, epoch: int, batch: int) -> int:
    """The torch seed set before batch `batch` (0-based) of epoch `epoch` (1-based), on both sides."""
    return seed * 1_000_003 + epoch * 10_007 + batch


class ReplaySampler(FlairSampler):
    """Yields the fixed order of the next epoch each time Flair's DataLoader asks for an epoch."""

    def __init__(self, orders: list[list[int]]) -> None:
        self.orders, self.epoch = orders, 0

    def __iter__(self) -> Iterator[int]:
        order = self.orders[self.epoch]
        self.epoch += 1
        return iter(order)

    def __len__(self) -> int:
        return len(self.orders[0])


class LockstepPlugin(TrainerPlugin):
    """Flair's side: reseeds before every batch; after every dev evaluation records loss, learning rate, strict dev F1, weights."""

    def __init__(self, seed: int, dev: SplitFeatures) -> None:
        super().__init__()
        self.seed, self.dev = seed, dev
        self.epochs: list[dict[str, Any]] = []
        self.states: list[dict[str, torch.Tensor]] = []
        self._loss, self._lr = 0.0, 0.0

    @TrainerPlugin.hook
    def before_training_epoch(self, epoch: int, **kw: Any) -> None:
        self._lr = self.trainer.optimizer.param_groups[0]["lr"]

    @TrainerPlugin.hook
    def before_training_batch(self, batch_no: int, epoch: int, **kw: Any) -> None:
        torch.manual_seed(batch_seed(self.seed, epoch, batch_no))

    @TrainerPlugin.hook
    def metric_recorded(self, record: Any) -> None:
        if tuple(record.name) == ("train", "loss"):  # Flair's epoch loss: summed batch losses over the tokens
            self._loss = float(record.value)

    @TrainerPlugin.hook
    def after_evaluation(self, **kw: Any) -> None:
        model = self.trainer.model
        self.epochs.append({"loss": self._loss, "lr": self._lr, "dev_f1": dev_score(model, self.dev)})
        self.states.append(trained_state(model))  # Flair's loop puts the model back in training mode each epoch


class LockstepTraining(TaggerTraining):
    """The suite's side: `TaggerTraining` unchanged but for the replayed orders and reseeds; keeps each epoch's weights."""

    def __init__(self, *args: Any, orders: list[list[int]], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.orders = orders
        self.states: list[dict[str, torch.Tensor]] = []

    def step(self) -> None:
        epoch = self.progress.epoch + 1
        batches = itertools.count()
        real_loss, real_order = suite_train.features_loss, suite_train.epoch_order

        def reseeded_loss(*args: Any) -> torch.Tensor:
            torch.manual_seed(batch_seed(self.seed, epoch, next(batches)))
            return real_loss(*args)

        suite_train.features_loss, suite_train.epoch_order = reseeded_loss, lambda size, samples: list(self.orders[epoch - 1])
        try:
            super().step()
        finally:
            suite_train.features_loss, suite_train.epoch_order = real_loss, real_order

    def validate(self) -> None:
        super().validate()
        self.states.append(trained_state(self.model))


def embed_once(model: torch.nn.Module, splits: dict[str, LabeledSplit], labeled: dict[str, list[Sentence]]) -> dict[str, SplitFeatures]:
    """Embed every sentence of `labeled` (the splits' labeled Flair sentences) with the model's stack (vectors stay on the
    tokens) and gather them as float32 arrays."""
    modules = embedding_modules(model.embeddings)
    features = {}
    for name, split in splits.items():
        sentences = labeled[name]
        with torch.no_grad():
            for start in tqdm(range(0, len(sentences), EMBED_BATCH), desc=f"embed {name}", unit="batch", leave=False):
                model.embeddings.embed(sentences[start : start + EMBED_BATCH])
        parts = [np.concatenate([torch.stack([token.get_embedding([module.name]) for token in sentence]).cpu().numpy() for sentence in sentences])
                 for module in modules]
        features[name] = SplitFeatures(split, parts)
    return features


def weight_gap(ours: dict[str, torch.Tensor], theirs: dict[str, torch.Tensor]) -> float:
    """The largest absolute difference between two trained states (the same keys)."""
    return max(float((ours[key].float() - theirs[key].float()).abs().max()) for key in ours)


def replayable(run: Any, settings: TrainSettings) -> None:
    """Raise a one-line error for a run whose training Flair's `ModelTrainer.train` cannot replay here: the lockstep
    covers the plateau schedule in float32 over whole shuffled epochs with a dev set, on frozen embeddings."""
    default = TrainSettings()
    kept = {"schedule": default.schedule, "precision": default.precision, "epoch_samples": None, "bucket_batches": None,
            "train_with_dev": False}
    changed = [f"{key}: {getattr(settings, key)}" for key, value in kept.items() if getattr(settings, key) != value]
    trained = [spec for spec in run.embedding_specs if not frozen(spec, run.fine_tune)]
    if changed or trained:
        reasons = [f"training setting {', '.join(changed)}"] * bool(changed) + [f"trained embedding {', '.join(trained)}"] * bool(trained)
        raise FlairsuiteError(f"{run.run_id}: the lockstep replays the plateau schedule in float32 on frozen embeddings only ({'; '.join(reasons)})")


def lockstep(run: Any, epochs: int, float16: bool = False, corpora: Optional[str] = None) -> list[dict[str, Any]]:
    """Train `run` both ways in lockstep for `epochs` epochs; one row per epoch. `float16`: the suite's
    side reads the vectors rounded to float16, as from its cache (Flair's side keeps float32)."""
    settings = TrainSettings.from_mapping("training settings", {**run.train_settings, "max_epochs": epochs})
    replayable(run, settings)
    splits = load_labeled(run.corpus.name, run.corpus.options, run.corpus.subsample, corpora_dir(corpora))
    flair.set_seed(run.seed)
    theirs = build_tagger(run.tagger, stack(list(run.embedding_specs), home()), tag_dictionary(run.corpus), LABEL_TYPE)
    ours = copy.deepcopy(theirs)
    labeled = {name: split.labeled_sentences(run.corpus.spec()) for name, split in splits.items()}
    features = embed_once(theirs, splits, labeled)
    orders = epoch_orders(features["train"].lengths, settings.mini_batch_size, epochs, run.seed)

    plugin = LockstepPlugin(run.seed, features["dev"])
    corpus = Corpus(labeled["train"], labeled["dev"], labeled["test"], name=run.corpus.key)
    with tempfile.TemporaryDirectory(prefix="lockstep-") as base:
        ModelTrainer(theirs, corpus).train(
            base, learning_rate=settings.learning_rate, mini_batch_size=settings.mini_batch_size, max_epochs=epochs,
            anneal_factor=settings.anneal_factor, patience=settings.patience, optimizer=OPTIMIZERS[settings.optimizer],
            embeddings_storage_mode="cpu", sampler=ReplaySampler(orders), save_final_model=False, use_final_model_for_eval=True, create_file_logs=False,
            create_loss_file=False, plugins=[plugin],
        )
        ours_train, ours_dev = (SplitFeatures(features[name].split, [part.astype(np.float16) for part in features[name].parts])
                                if float16 else features[name] for name in ("train", "dev"))
        training = LockstepTraining(ours, ours_train, ours_dev, settings, run.seed, Path(base) / "suite.pt", "suite",
                                    orders=orders)
        training.setup()
        training.run()
    rows = []
    for epoch, (flair_row, suite_row, flair_state, suite_state) in enumerate(
        zip(plugin.epochs, training.progress.history, plugin.states, training.states), start=1
    ):
        rows.append({"epoch": epoch, "suite_loss": suite_row["loss"], "flair_loss": flair_row["loss"], "suite_lr": suite_row["lr"],
                     "flair_lr": flair_row["lr"], "suite_dev_f1": suite_row["dev_f1"], "flair_dev_f1": flair_row["dev_f1"],
                     "max_weight_gap": weight_gap(suite_state, flair_state)})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = ["| epoch | loss suite | loss Flair | lr suite / Flair | dev F1 suite | dev F1 Flair | max weight gap |",
             "| --: | --: | --: | --- | --: | --: | --: |"]
    for row in rows:
        lines.append(f"| {row['epoch']} | {row['suite_loss']:.6f} | {row['flair_loss']:.6f} | {row['suite_lr']:g} / {row['flair_lr']:g} | "
                     f"{row['suite_dev_f1'] * 100:.2f} | {row['flair_dev_f1'] * 100:.2f} | {row['max_weight_gap']:.1e} |")
    return "\n".join(lines)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1 (found {text!r})")
    return int(text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", type=Path, help="an experiment file")
    parser.add_argument("--run", required=True, help="the run id to train both ways (e.g. sturm/proposed+word/bilstm-crf/seed-1)")
    parser.add_argument("--epochs", type=positive, default=10, help="epochs of each side (default 10)")
    parser.add_argument("--float16", action="store_true", help="the suite's side reads float16 vectors, as from its cache")
    parser.add_argument("--corpora-dir", default=None, help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        config = load_experiment(args.experiment)
        chosen = [run for run in runs(config) if run.run_id == args.run]
        if not chosen:
            raise FlairsuiteError(f"--run {args.run}: no run of {args.experiment} has this id")
        rows = lockstep(chosen[0], args.epochs, args.float16, args.corpora_dir)
    except FlairsuiteError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    target = results_dir() / f"{config.name}-lockstep" / args.run / ("lockstep-float16.json" if args.float16 else "lockstep.json")
    write_json(target, {"experiment": config.name, "run": args.run, "epochs": args.epochs, "suite_vectors": "float16" if args.float16 else "float32",
                        "train": chosen[0].train_settings, "rows": rows})
    print(table(rows))
    print(f"written: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
