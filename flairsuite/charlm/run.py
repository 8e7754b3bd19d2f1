"""`flairsuite train-charlm`: prepare the corpus, train each direction, report perplexities."""

import json
import logging
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

import torch
from flair.models import LanguageModel

from flairsuite.allocator import bound_primitive_cache, keep_freed_memory
from flairsuite.atomic import atomic_file, write_json
from flairsuite.charlm.trainer import CharLMTrainer, Hyper, evaluate, evaluation_batches
from flairsuite.claim import held
from flairsuite.distributed import Ranks
from flairsuite.errors import FlairsuiteError
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.training import Budget
from flairsuite.values import is_finite_number, is_int, is_non_negative_number, is_positive_number, json_problem, show

log = logging.getLogger("flairsuite")


# what a warm start reads from a summary.json, and what each value must be
SUMMARY_VALUES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "chars_seen": ("a non-negative integer", lambda v: is_int(v) and v >= 0),
    "steps": ("a non-negative integer", lambda v: is_int(v) and v >= 0),
    "hours": ("a non-negative number", is_non_negative_number),
    "valid_ppl": ("a perplexity (a number of at least 1)", lambda v: is_finite_number(v) and v >= 1),
}


def read_summary(path: Path) -> dict[str, Any]:
    """A model's summary.json with the values a warm start needs; anything else is a one-line error."""
    remedy = "restore it or start over with --force"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise FlairsuiteError(f"{path}: unreadable ({json_problem(err)}); {remedy}") from None
    if not isinstance(summary, dict):
        raise FlairsuiteError(f"{path}: not a JSON object; {remedy}")
    for key, (what, fits) in SUMMARY_VALUES.items():
        if key not in summary:
            raise FlairsuiteError(f"{path}: missing key '{key}'; {remedy}")
        if not fits(summary[key]):
            raise FlairsuiteError(f"{path}: {key} must be {what} (found {show(summary[key])}); {remedy}")
    if summary.get("cpu_hours") is not None and not is_non_negative_number(summary["cpu_hours"]):
        raise FlairsuiteError(f"{path}: cpu_hours must be a non-negative number (found {show(summary['cpu_hours'])}); {remedy}")
    history = summary.get("history") or []
    if not isinstance(history, list) or not all(isinstance(point, dict) and is_positive_number(point.get("lr")) for point in history):
        raise FlairsuiteError(f"{path}: history must be a list of validation points, each with a positive 'lr'; {remedy}")
    return summary


def start_or_resume(trainer: CharLMTrainer, resume: bool, force: bool) -> None:
    """Resume from an existing checkpoint only when asked; never overwrite one silently.

    --force starts over: the earlier run's checkpoint, model, summary and curve go first, so that a kill of the new run
    never leaves its model beside the old run's summary (which tagging runs would record as the LM's training)."""
    if force:
        trainer.ranks.barrier()  # every rank has seen the old files before rank 0 removes them
        if trainer.ranks.main:
            for path in (trainer.checkpoint_path, trainer.model_path, trainer.out / "summary.json", trainer.out / "learning-curve.png"):
                path.unlink(missing_ok=True)
        trainer.ranks.barrier()
    elif trainer.checkpoint_path.exists():
        if resume:
            trainer.restore()
            log.info("resuming %s at %s characters", trainer.out, f"{trainer.progress.chars:,}")
        else:
            raise FlairsuiteError(
                f"{trainer.out} holds the checkpoint of an earlier run: pass --resume to continue it or --force to start over"
            )
    elif resume and trainer.model_path.exists() and (trainer.out / "summary.json").exists():
        trainer.warm_start(read_summary(trainer.out / "summary.json"))
        log.info("no checkpoint in %s: continuing its best-lm.pt at %s characters (fresh random state)", trainer.out, f"{trainer.progress.chars:,}")
    elif resume:
        log.warning("no checkpoint in %s: starting a new run", trainer.out)
    elif trainer.model_path.exists() and not force:
        raise FlairsuiteError(
            f"{trainer.out} holds a trained model: pass --resume to continue it or --force to start over"
        )


def plot_curve(history: list[dict[str, float]], title: str, path: Path) -> None:
    """Learning curve (train and valid perplexity per character over characters seen) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chars = [point["chars"] / 1e6 for point in history]
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(chars, [p["train_ppl"] for p in history], marker=".", label="train")
    axis.plot(chars, [p["valid_ppl"] for p in history], marker="o", label="valid")
    axis.set_xlabel("characters seen (millions)")
    axis.set_ylabel("perplexity per character")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    with atomic_file(path) as temp:
        figure.savefig(temp, format="png", dpi=120)
    plt.close(figure)


def train_direction(
    corpus: PreparedCorpus, out: Path, hyper: Hyper, forward: bool, budget: Budget, resume: bool, force: bool, seed: int,
    ranks: Ranks = Ranks(), record: Optional[dict[str, Any]] = None, precision: str = "float32", storage: str = "float32",
) -> Optional[dict[str, Any]]:
    """Train one direction into `out`; its summary (also written to `out/summary.json`, with `record` added), on rank 0 (None on the others).

    `precision` (`float32`, `bfloat16`) is the arithmetic of this invocation's training steps (`CharLMTrainer`);
    `storage` (`float32`, `float16`) the dtype of `best-lm.pt`'s weights, whose test perplexity the summary reports.
    """
    bound_primitive_cache()  # before any forward pass
    with held(out, ranks):  # one process trains a folder (rank 0 for a torchrun launch)
        return trained_direction(corpus, out, hyper, forward, budget, resume, force, seed, ranks, record, precision, storage)


def trained_direction(
    corpus: PreparedCorpus, out: Path, hyper: Hyper, forward: bool, budget: Budget, resume: bool, force: bool, seed: int,
    ranks: Ranks, record: Optional[dict[str, Any]], precision: str, storage: str,
) -> Optional[dict[str, Any]]:
    """`train_direction` once the folder is this process's: train, evaluate the best model, write its summary and curve."""
    trainer = CharLMTrainer(corpus, out, hyper, forward, seed, ranks, precision, storage)
    start_or_resume(trainer, resume, force)
    keep_freed_memory()
    progress = trainer.train(budget, desc=out.name)
    if not ranks.main:
        return None
    best = LanguageModel.load_language_model(trainer.model_path)  # on flair.device
    test_loss = evaluate(best, evaluation_batches(corpus.array("test"), hyper, forward), hyper.sequence_length)
    summary = {
        "model": str(trainer.model_path),
        "direction": "forward" if forward else "backward",
        "chars_seen": progress.chars,
        "steps": progress.steps_done,
        "epochs": round(progress.epoch + progress.offset / trainer.train_batches.stream_length, 3),
        "hours": round(progress.seconds / 3600, 3),
        "cpu_hours": round(progress.cpu_seconds / 3600, 5),  # this process's (rank 0's) CPU time in training, all threads
        "chars_per_second": round(progress.chars / max(progress.seconds, 1e-9)),
        "valid_ppl": round(math.exp(progress.best_valid_loss), 4),
        "test_ppl": round(math.exp(test_loss), 4),
        "device": str(trainer.device),
        "threads": torch.get_num_threads(),
        "precision": precision,  # this invocation's; each learning-curve point says its own where it is not float32
        "model_dtype": storage,  # of best-lm.pt's weights; valid_ppl was measured before rounding, test_ppl after
        "ranks": ranks.world,
        "hyper": asdict(hyper),
        "corpus": corpus.meta,
        "history": progress.history,
        **(record or {}),
    }
    write_json(out / "summary.json", summary)
    plot_curve(progress.history, f"{out.name}: character LM", out / "learning-curve.png")
    return summary


def budget_from(max_hours: Optional[float], max_chars: Optional[int], max_cpu_hours: Optional[float] = None) -> Budget:
    """A budget; at least one limit must be given."""
    if max_hours is None and max_chars is None and max_cpu_hours is None:
        raise FlairsuiteError("give a budget: --max-hours or --max-chars")
    if any(value is not None and not is_positive_number(value) for value in (max_hours, max_chars, max_cpu_hours)):
        raise FlairsuiteError("--max-hours, --max-chars and --max-cpu-hours must be positive (finite) numbers")
    return Budget(max_hours, max_chars, max_cpu_hours)
