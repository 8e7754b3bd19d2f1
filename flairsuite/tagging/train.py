"""The training loop over cached embeddings: Flair's recipe (summed loss, clipping at 5, annealing on a
dev plateau, best-on-dev model) without Flair's per-token data path, with a checkpoint after every epoch.

Flair's `ModelTrainer` iterates `Sentence` objects and rebuilds each batch tensor token by token;
here a batch is gathered from memory-mapped rows (`features.py`), so the loop is short enough to
keep in mind. What it keeps from Flair: the loss summed over a batch's tokens, gradient-norm
clipping at 5.0, the learning rate multiplied by `anneal_factor` when dev F1 has not improved for
more than `patience` epochs (training loss with `train_with_dev`), a stop when it falls below 1e-4,
and the model of the best dev epoch as the result (the last epoch with `train_with_dev`).
"""

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import flair
import torch
from tqdm import tqdm

from flairsuite import checkpoint
from flairsuite.tagging.features import SplitFeatures
from flairsuite.models.protocol import features_decode, features_loss
from flairsuite.tagging.scoring import strict_scores
from flairsuite.models.registry import OPTIMIZERS

CLIP_NORM = 5.0  # Flair's ModelTrainer
MIN_LEARNING_RATE = 1e-4  # Flair's default min_learning_rate: training stops below it
DECODE_BATCH = 128


@dataclass
class Progress:
    """Where training stands; saved in the epoch checkpoint."""

    epoch: int = 0
    best_score: float = float("-inf")
    best_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state of the model minus frozen embeddings (parameters without gradient below `embeddings.`)."""
    frozen = {name for name, p in model.embeddings.named_parameters(prefix="embeddings") if not p.requires_grad}
    frozen |= {name for name, _ in model.embeddings.named_buffers(prefix="embeddings")}
    return {key: value.detach().clone() for key, value in model.state_dict().items() if key not in frozen}


def decode(model: torch.nn.Module, features: SplitFeatures, batch_size: int = DECODE_BATCH) -> list[list[str]]:
    """The raw predicted BIO tags of every sentence of `features`, in corpus order."""
    model.eval()
    predicted: list[list[str]] = [[] for _ in range(len(features))]
    order = sorted(range(len(features)), key=lambda i: -features.lengths[i])  # similar lengths pad least
    with torch.no_grad():
        for indices in features.batches(batch_size, order):
            batch = features.batch(indices)
            for index, tagged in zip(batch.order, features_decode(model, batch.tensor, batch.lengths)):
                predicted[index] = [tag for tag, _ in tagged]
    return predicted


def dev_f1(model: torch.nn.Module, dev: SplitFeatures) -> float:
    """Strict IOB2 entity F1 of the model on `dev`."""
    return strict_scores(dev.split.tags, decode(model, dev))["f1"]


def _epoch(model: torch.nn.Module, train: SplitFeatures, optimizer: torch.optim.Optimizer, batch_size: int, desc: str) -> float:
    """One pass over `train` in random order; the mean loss per token."""
    model.train()
    total, tokens = 0.0, 0
    order = torch.randperm(len(train)).tolist()
    with tqdm(train.batches(batch_size, order), desc=desc, unit="batch", leave=False) as bar:
        for indices in bar:
            batch = train.batch(indices)
            loss = features_loss(model, batch.tensor, batch.lengths, batch.gold)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
            optimizer.step()
            total, tokens = total + loss.item(), tokens + int(batch.lengths.sum())
            bar.set_postfix(loss=f"{total / tokens:.3f}")
    return total / max(tokens, 1)


def train_tagger(
    model: torch.nn.Module,
    train: SplitFeatures,
    dev: Optional[SplitFeatures],
    settings: dict[str, Any],
    seed: int,
    checkpoint_path: Path,
    desc: str = "",
    key: Optional[str] = None,
) -> Progress:
    """Train `model` with `settings` (the keys of flairsuite.models.registry.PAPER_TRAIN); resumes from `checkpoint_path`.

    `dev` is None with `train_with_dev` (then `train` holds train + dev). The model ends with the
    weights of the best dev epoch (or of the last epoch without dev). `key` (e.g. a digest of the
    run's settings and embedding files) is saved in the checkpoint: a checkpoint saved under another
    key is stale and training starts over.
    """
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = OPTIMIZERS[settings["optimizer"]](parameters, lr=settings["learning_rate"])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="max" if dev is not None else "min", factor=settings["anneal_factor"], patience=settings["patience"]
    )
    progress, best = Progress(), trained_state(model)
    state = checkpoint.load(checkpoint_path) if checkpoint_path.is_file() else None
    if state is not None and state.get("key") == key:
        model.load_state_dict(state["model"], strict=False)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        progress, best = state["progress"], state["best"]
        checkpoint.set_rng_state(state["rng"])
    else:
        flair.set_seed(seed)
    while progress.epoch < settings["max_epochs"]:
        learning_rate = optimizer.param_groups[0]["lr"]
        if learning_rate < MIN_LEARNING_RATE:
            break
        started = time.perf_counter()
        loss = _epoch(model, train, optimizer, settings["mini_batch_size"], f"{desc} epoch {progress.epoch + 1}")
        score = dev_f1(model, dev) if dev is not None else -loss
        scheduler.step(score if dev is not None else loss)
        progress.epoch += 1
        progress.history.append({"epoch": progress.epoch, "loss": loss, "dev_f1": score if dev is not None else None, "lr": learning_rate})
        if dev is None or score > progress.best_score:
            progress.best_score, progress.best_epoch, best = score, progress.epoch, trained_state(model)
        progress.seconds += time.perf_counter() - started
        checkpoint.save(
            checkpoint_path,
            {"model": trained_state(model), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
             "progress": progress, "best": best, "rng": checkpoint.rng_state(), "key": key},
        )
    model.load_state_dict(best, strict=False)
    return progress
