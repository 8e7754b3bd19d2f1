"""`flairsuite train-charlm`: the options read against the recipes (hyper-parameters, budget), the corpus prepared,
each direction trained (`flairsuite.charlm.run`), the report lines."""

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import flair
import torch

from flairsuite.charlm.recipes import recipe
from flairsuite.charlm.run import train_direction
from flairsuite.charlm.trainer import Hyper
from flairsuite.corpora.language_splits import labeled_tokens
from flairsuite.distributed import first_on_rank_zero, leave, ranks_from_environment
from flairsuite.paths import charlm_dir, corpora_dir
from flairsuite.precision import require_precision, resolved_precision
from flairsuite.pretraining import budget_from
from flairsuite.rawtext.char_coverage import coverage_lines, coverage_rows, training_characters
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.training import Budget

DIRECTIONS = {"forward": (True,), "backward": (False,), "both": (True, False)}


BUDGET_KEYS = ("max_chars", "max_cpu_hours")  # a preset's training budget per direction, beside its hyper-parameters


def hyper_from(options: dict[str, Any]) -> Hyper:
    """The recipe's preset with the options given on the command line."""
    preset = {key: value for key, value in recipe(options["lang"], options["preset"]).items() if key not in BUDGET_KEYS}
    overrides = {f.name: options[f.name] for f in fields(Hyper) if options.get(f.name) is not None}
    return Hyper(**{**preset, **overrides})


def budget_of(options: dict[str, Any]) -> Budget:
    """--max-hours, --max-chars and --max-cpu-hours as given; none: the preset's budget, else one hour (`budget_from`).

    A preset's budget is `max_chars` (German `cpu`: the released pair's characters), `max_cpu_hours`
    (en, da, zh `cpu`: one CPU-hour a direction: the process's CPU time in training, all its threads,
    so the same work whether the machine is quiet or busy), or both (whichever is reached first).
    """
    if any(options.get(key) is not None for key in ("max_hours", "max_chars", "max_cpu_hours")):
        return budget_from(options["max_hours"], options["max_chars"], "--max-chars", options.get("max_cpu_hours"))
    preset = recipe(options["lang"], options["preset"])
    chars, cpu_hours = preset.get("max_chars"), preset.get("max_cpu_hours")
    return budget_from(None, int(chars) if chars else None, "--max-chars", float(cpu_hours) if cpu_hours else None)


def train_charlm_command(options: dict[str, Any]) -> Iterator[str]:
    """Run `train-charlm`; yields the closing summary lines."""
    hyper = hyper_from(options)
    if options["threads"]:
        torch.set_num_threads(options["threads"])
    budget = budget_of(options)
    models_dir = Path(options["out_dir"]) if options["out_dir"] else charlm_dir()
    ranks = ranks_from_environment()  # one rank unless started by torchrun
    if ranks.device is not None and ranks.device.type == "cuda":
        flair.device = ranks.device
    precision = resolved_precision(options.get("precision") or "auto", flair.device)
    require_precision(precision, flair.device, "train-charlm --precision", "--precision float32 (or auto)")
    corpus = first_on_rank_zero(  # a precision the device cannot train in was refused before this
        ranks,
        lambda: prepare_language(
            options["lang"], options["corpus"], options["corpora_dir"], None, options["heldout_fraction"], options["unk_fraction"], options["seed"]
        ),
    )
    lines = list(describe(corpus))
    record = {}
    if ranks.main:  # what the dictionary misses of the labeled corpora, recorded with each model
        record["labeled_coverage"] = coverage_rows(
            labeled_tokens(options["lang"], corpora_dir(options["corpora_dir"])), set(corpus.chars), training_characters(corpus.text_path("train"))
        )
        lines += coverage_lines(record["labeled_coverage"])
    rows = []
    for forward in DIRECTIONS[options["direction"]]:
        name = f"{options['name'] or options['lang']}-{'forward' if forward else 'backward'}"
        summary = train_direction(
            corpus, models_dir / name, hyper, forward, budget, options["resume"], options["force"], options["seed"], ranks, record,
            precision, options.get("model_dtype") or "float32",
        )
        rows.append((name, summary))
    leave(ranks)
    if not ranks.main:
        return
    yield from lines
    if ranks.parallel:
        yield f"data-parallel: {ranks.world} ranks, {hyper.batch_size // ranks.world} of the {hyper.batch_size} streams each"
    yield f"{'model':<20}{'chars seen':>14}{'hours':>8}{'chars/s':>10}{'valid ppl':>11}{'test ppl':>10}"
    for name, s in rows:
        yield f"{name:<20}{s['chars_seen']:>14,}{s['hours']:>8.2f}{s['chars_per_second']:>10,}{s['valid_ppl']:>11.3f}{s['test_ppl']:>10.3f}"
    for name, s in rows:
        yield f"{name}: {s['model']} (learning curve: {Path(s['model']).parent / 'learning-curve.png'})"
