"""One direction of `train-charlm` in its model folder: held by this process, started or resumed, trained, its best model's
test perplexity, summary.json and learning curve (the command around it: `flairsuite.charlm.train_charlm`).

The two stay apart because they are two jobs: the command reads options (a recipe or an `--init` model), prepares the
text once and reports on the pair; this module trains one folder from a prepared corpus and settings, knowing nothing
of options or of the other direction, which is how the speed benchmark (`benchmarks/charlm_speed_child.py`) and the
tests call it (`train_direction`)."""

import math
from pathlib import Path
from typing import Any, Optional

import torch
from flair.models import LanguageModel

from flairsuite.charlm.initial import InitialModel
from flairsuite.charlm.settings import Hyper
from flairsuite.charlm.trainer import CharLMTrainer, evaluate, evaluation_batches
from flairsuite.files.locks import held
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file, write_summary
from flairsuite.pretraining import Panel, RunFolder, plot_curve, start_or_resume
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.runtime.allocator import bound_primitive_cache, keep_freed_memory
from flairsuite.runtime.distributed import Ranks
from flairsuite.settings_schema import NON_NEGATIVE_INTEGER, NON_NEGATIVE_NUMBER, Rule
from flairsuite.training import Budget
from flairsuite.values import is_finite_number, is_positive_number

# what a warm start reads from a summary.json, and what each value must be
WARM_START_VALUES: dict[str, Rule] = {
    "chars_seen": NON_NEGATIVE_INTEGER,
    "steps": NON_NEGATIVE_INTEGER,
    "hours": NON_NEGATIVE_NUMBER,
    "valid_ppl": Rule("a perplexity (a number of at least 1)", lambda v: is_finite_number(v) and v >= 1),
}
WARM_START_OPTIONAL: dict[str, Rule] = {
    "cpu_hours": NON_NEGATIVE_NUMBER,
    "history": Rule("a list of validation points, each with a positive 'lr'",
                    lambda v: isinstance(v, list) and all(isinstance(point, dict) and is_positive_number(point.get("lr")) for point in v)),
}


def read_summary(path: Path) -> dict[str, Any]:
    """A model's summary.json with the values a warm start needs; anything else is a one-line error."""
    return read_summary_file(path, WARM_START_VALUES, WARM_START_OPTIONAL, remedy="restore it or start over with --force")


CURVE_FILE = "learning-curve.png"


def lm_folder(trainer: CharLMTrainer) -> RunFolder:
    """An LM folder for the resume policy: --force removes the run's four files (others stay), --resume continues a
    best-lm.pt from its summary.json."""
    summary = trainer.out / SUMMARY_FILE

    def warm_start() -> bool:
        if not summary.exists():
            return False
        trainer.warm_start(read_summary(summary))
        return True

    return RunFolder(
        trainer.out, "characters", trainer.model_path,
        lambda: (trainer.checkpoint_path, trainer.model_path, summary, trainer.out / CURVE_FILE), warm_start,
    )


def train_direction(
    corpus: PreparedCorpus, out: Path, hyper: Hyper, forward: bool, budget: Budget, resume: bool, force: bool, seed: int,
    ranks: Ranks = Ranks(), record: Optional[dict[str, Any]] = None, precision: str = "float32", storage: str = "float32",
    initial: Optional[InitialModel] = None,
) -> Optional[dict[str, Any]]:
    """Train one direction into `out`; its summary (also written to `out/summary.json`, with `record` added), on rank 0 (None on the others).

    `precision` (`float32`, `bfloat16`) is the arithmetic of this invocation's training steps (`CharLMTrainer`);
    `storage` (`float32`, `float16`) the dtype of `best-lm.pt`'s weights, whose test perplexity the summary reports;
    `initial`: a new run starts from that LM (`--init`; the summary records it under `init`).
    """
    bound_primitive_cache()  # before any forward pass
    with held(out, ranks):  # one process trains a folder (rank 0 for a torchrun launch)
        return trained_direction(corpus, out, hyper, forward, budget, resume, force, seed, ranks, record, precision, storage, initial)


def trained_direction(
    corpus: PreparedCorpus, out: Path, hyper: Hyper, forward: bool, budget: Budget, resume: bool, force: bool, seed: int,
    ranks: Ranks, record: Optional[dict[str, Any]], precision: str, storage: str, initial: Optional[InitialModel] = None,
) -> Optional[dict[str, Any]]:
    """`train_direction` once the folder is this process's: train, evaluate the best model, write its summary and curve."""
    trainer = CharLMTrainer(corpus, out, hyper, forward, seed, ranks, precision, storage, initial)
    start_or_resume(trainer, lm_folder(trainer), resume, force)
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
        "hyper": hyper.record(),  # the noise fields only where set: a run without noise records what it always did
        **({"noise": trainer.noise.record()} if trainer.noise else {}),
        "corpus": corpus.meta,
        "history": progress.history,
        **({"init": {**initial.record(), "valid_ppl_here": round(progress.history[0]["valid_ppl"], 4)}} if initial else {}),
        **(record or {}),
    }
    write_summary(out, summary)
    plot_curve(progress.history, f"{out.name}: character LM", out / CURVE_FILE, "chars", "characters", (Panel("ppl", "perplexity per character"),))
    return summary

