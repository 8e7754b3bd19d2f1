"""What the round-by-round experiments share: the active-learning simulation (`simulation.py`) and self-training
(`self_training.py`). `check_rounds_state` guards an experiment's results folder by its state record (other settings under
the same name are refused unless `--force`, which starts over); `round_record` is what a trained round records: where it
belongs, what it trained on, its dev and test scores, and its wall seconds and torch threads (its CPU cost).
"""

import shutil
import time
from pathlib import Path
from typing import Any

import torch

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.grid import Run
from flairsuite.experiments.runner import decoded
from flairsuite.files.atomic import write_json
from flairsuite.files.locks import claimed
from flairsuite.files.summary_file import read_record
from flairsuite.settings_schema import TEXT
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.scoring import task_scores
from flairsuite.tagging.tagger_training import TaggerProgress


def check_rounds_state(out: Path, state: Path, config: ExperimentConfig, key: str, text: str, force: bool, *, holds: str, busy: str,
                       block: str, **extra: Any) -> None:
    """Refuse other settings under the same name unless `force` (which removes the old results); record these in `state`:
    the config's name, `key`, its `text` and `extra`. The refusals say what `out` `holds` ("a simulation"), what another
    process is doing to it (`busy`: "simulated") and which `block` of the config a plain grid lacks ("active_learning")."""
    if state.is_file():
        try:
            old = read_record(state, {"key": TEXT}, remedy="delete it or pass --force")["key"]
        except InputError:
            if not force:
                raise
            old = None  # damaged: --force starts over
        if old != key:
            if not force:
                raise FlairsuiteError(f"{out} holds {holds} of a different '{config.name}' config: pass --force to start it over, "
                                      "or choose a new name")
            with claimed(out) as mine:
                if not mine:
                    raise FlairsuiteError(f"{out} is being {busy} by another process: stop it before --force")
            shutil.rmtree(out)
    elif out.is_dir() and any(out.iterdir()) and not force:
        raise FlairsuiteError(f"{out} holds runs of a grid without {block}: choose a new name or pass --force")
    write_json(state, {"name": config.name, "key": key, "config": text, **extra})


def round_record(run: Run, model: torch.nn.Module, progress: TaggerProgress, started: float, dev: SplitFeatures, test: SplitFeatures,
                 **fields: Any) -> dict[str, Any]:
    """The record of a model trained from `started` (a `time.perf_counter()`): where it belongs, what it trained on (`fields`),
    dev and test scores (the task's main score and all of the test's)."""
    task = run.corpus.task
    dev_scores = task_scores(task.name, dev.split.tags, decoded(run, model, dev))  # as a grid run's metrics score them
    test_scores = task_scores(task.name, test.split.tags, decoded(run, model, test))
    return {"experiment": run.experiment, "corpus": run.corpus.key, "stack": run.embeddings, "tagger": run.tagger, "seed": run.seed,
            **fields, "dev": dev_scores[task.metric], "test": test_scores[task.metric], "test_scores": test_scores,
            "epochs": progress.epoch, "best_epoch": progress.best_epoch,
            "seconds": round(time.perf_counter() - started + progress.resumed_at, 1), "threads": torch.get_num_threads()}
