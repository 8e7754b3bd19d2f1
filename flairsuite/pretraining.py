"""What the two pre-training commands share, `train-charlm` (each direction) and `train-bert`: the resume policy of a
model folder, the budget options and the learning-curve plot.

The resume policy never overwrites a checkpoint or a trained model silently:

- `--force` starts over: the earlier run's files go first, so that a kill of the new run never leaves its files beside
  the old run's (an LM beside the old summary.json, which tagging runs record as its training; a BERT folder's files
  beside the old config.json, with which the mix could load);
- a checkpoint: `--resume` continues it exactly, and without `--resume` it is a one-line error;
- a trained model and no checkpoint: `--resume` continues the model where the trainer can (`RunFolder.warm_start`: an
  LM's best-lm.pt with its summary.json, as the released pairs are committed), else it is a one-line error;
- nothing to continue: a new run, with a warning if `--resume` was given.
"""

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file
from flairsuite.settings_schema import OPTIONS, POSITIVE_INTEGER, POSITIVE_NUMBER, refuse
from flairsuite.training import Budget, StreamTraining

log = logging.getLogger("flairsuite")

DEFAULT_HOURS = 1.0  # the budget when no limit is given


@dataclass(frozen=True)
class RunFolder:
    """A pre-training run's folder as the resume policy sees it."""

    out: Path
    units: str  # what the trainer counts, for the log: characters, tokens
    model: Path  # the file whose presence means a trained model (an LM's best-lm.pt, a BERT folder's config.json)
    earlier_files: Callable[[], Iterable[Path]]  # what --force removes before the new run starts
    warm_start: Optional[Callable[[], bool]] = None  # continue `model` without checkpoint: False where the folder lacks what that needs


def start_or_resume(trainer: StreamTraining, folder: RunFolder, resume: bool, force: bool) -> None:
    """Set `trainer` up by the resume policy (module docstring): --force, a checkpoint, a trained model, or a new run."""
    if force:
        trainer.ranks.barrier()  # every rank has seen the old files before rank 0 removes them
        if trainer.ranks.main:
            for path in folder.earlier_files():
                path.unlink(missing_ok=True)
        trainer.ranks.barrier()
    elif trainer.checkpoint_path.exists():
        if not resume:
            raise FlairsuiteError(f"{folder.out} holds the checkpoint of an earlier run: pass --resume to continue it or --force to start over")
        trainer.restore()
        log.info("resuming %s at %s %s", folder.out, f"{trainer.progress.units:,}", folder.units)
        return
    elif folder.model.exists():
        if resume and folder.warm_start is not None and folder.warm_start():
            log.info("no checkpoint in %s: continuing its %s at %s %s (fresh random state)", folder.out, folder.model.name,
                     f"{trainer.progress.units:,}", folder.units)
            return
        if resume:
            raise FlairsuiteError(f"{folder.out} holds a trained model and no checkpoint to continue it from: pass --force to start over")
        advice = "pass --resume to continue it or --force to start over" if folder.warm_start is not None else "pass --force to replace it"
        raise FlairsuiteError(f"{folder.out} holds a trained model: {advice}")
    elif resume:
        log.warning("no checkpoint in %s: starting a new run", folder.out)
    trainer.start()


def budget_from(max_hours: Any, max_units: Any, units_option: str, max_cpu_hours: Any = None) -> Budget:
    """The budget of --max-hours, `units_option` (--max-chars, --max-tokens: `max_units`) and --max-cpu-hours, whichever
    is reached first; each given one must be a positive, finite number, the units a positive integer (`--max-hours must be a
    positive number (found NaN)`).
    None given: DEFAULT_HOURS of training time."""
    limits = {"max_hours": (max_hours, POSITIVE_NUMBER), units_option.removeprefix("--"): (max_units, POSITIVE_INTEGER),
              "max_cpu_hours": (max_cpu_hours, POSITIVE_NUMBER)}
    for name, (value, rule) in limits.items():
        if value is not None:
            refuse(name, rule, value, OPTIONS)
    if max_hours is None and max_units is None and max_cpu_hours is None:
        max_hours = DEFAULT_HOURS
    return Budget(max_hours, max_units, max_cpu_hours)


@dataclass(frozen=True)
class Panel:
    """One panel of a learning curve: the train and valid values of `key` (`train_<key>`, `valid_<key>`) per point."""

    key: str
    label: str  # the y axis


def plot_curve(history: Sequence[dict[str, Any]], title: str, path: Path, units: str, units_label: str, panels: Sequence[Panel]) -> None:
    """A learning curve as a PNG at `path`: per panel, train and valid values over the `units` seen (millions, `units_label`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seen = [point[units] / 1e6 for point in history]
    figure, axes = plt.subplots(1, len(panels), figsize=(3 + 3 * len(panels), 4), squeeze=False)
    for axis, panel in zip(axes[0], panels):
        axis.plot(seen, [point[f"train_{panel.key}"] for point in history], marker=".", label="train")
        axis.plot(seen, [point[f"valid_{panel.key}"] for point in history], marker="o", label="valid")
        axis.set_xlabel(f"{units_label} seen (millions)")
        axis.set_ylabel(panel.label)
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(title)
    figure.tight_layout()
    with atomic_file(path) as temp:
        figure.savefig(temp, format="png", dpi=120)
    plt.close(figure)
