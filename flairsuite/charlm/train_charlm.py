"""`flairsuite train-charlm`: the options read against the recipes or the `--init` model (hyper-parameters, budget), the
corpus prepared, each direction trained (`flairsuite.charlm.run`: one direction's model folder), the report lines."""

from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import flair
import torch

from flairsuite.charlm.initial import ARCHITECTURE, InitialModel, initial_models
from flairsuite.charlm.recipes import BUDGET_KEYS, recipe
from flairsuite.charlm.run import train_direction
from flairsuite.charlm.settings import NOISE_KEYS, Hyper
from flairsuite.corpora.language_splits import labeled_tokens
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import charlm_dir, corpora_dir
from flairsuite.pretraining import budget_from
from flairsuite.rawtext.char_coverage import coverage_lines, coverage_rows, training_characters
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.runtime.distributed import first_on_rank_zero, leave, ranks_from_environment
from flairsuite.runtime.precision import require_precision, resolved_precision
from flairsuite.training import Budget

DIRECTIONS = {"forward": (True,), "backward": (False,), "both": (True, False)}


ADAPT_PASSES = 5  # --init without a budget: this many passes over the new text's training split
VALIDATIONS_A_PASS = 2  # --init without --validate-chars: validation points per pass over the new text (at most the initial LM's interval)


def hyper_from(options: dict[str, Any]) -> Hyper:
    """The recipe's preset with the options given on the command line."""
    preset = {key: value for key, value in recipe(options["lang"], options["preset"]).items() if key not in BUDGET_KEYS}
    overrides = {f.name: options[f.name] for f in fields(Hyper) if options.get(f.name) is not None}
    return Hyper(**{**preset, **overrides})


def initial_hyper(options: dict[str, Any], initial: InitialModel) -> Hyper:
    """The hyper-parameters of a run continuing `initial` (`--init`): its own (its summary's, else the recipe's with its
    architecture), with the training-loop options given on the command line; architecture options that differ are a
    one-line error. Unless given: no window ramp, and the learning rate the initial run ended at (module `initial`). Its
    noise is not inherited: `--noise` applies to this run's text alone."""
    known = {f.name for f in fields(Hyper)}
    preset = {key: value for key, value in recipe(options["lang"], options["preset"]).items() if key not in BUDGET_KEYS}
    own = {key: value for key, value in (initial.summary.get("hyper") or {}).items() if key in known and key not in NOISE_KEYS}
    base = {**preset, **own, **initial.architecture}
    differing = [name for name in ARCHITECTURE if options.get(name) is not None and options[name] != base[name]]
    if differing:
        raise FlairsuiteError(f"--init {options['init']}: {initial.path} has {', '.join(f'{n} {base[n]}' for n in differing)}; "
                              "an initial model's architecture cannot change (leave those options out)")
    restart = {"ramp_chars": 0, **({"learning_rate": initial.last_learning_rate} if initial.last_learning_rate else {})}
    overrides = {name: options[name] for name in known if options.get(name) is not None}
    return Hyper(**{**base, **restart, **overrides})


def adapted(hyper: Hyper, options: dict[str, Any], corpus: PreparedCorpus) -> Hyper:
    """`hyper` of an --init run with validation points fitted to the new text, unless --validate-chars is given."""
    if options.get("validate_chars") is not None:
        return hyper
    per_pass = max(1, corpus.meta["splits"]["train"] // VALIDATIONS_A_PASS)
    return replace(hyper, validate_chars=min(hyper.validate_chars, per_pass))


def language_of(options: dict[str, Any], initial: InitialModel) -> str:
    """--lang, else the language the initial model's summary records; neither: a one-line error."""
    recorded = ((initial.summary.get("corpus") or {}).get("config") or {}).get("language")
    if options.get("lang") and recorded and options["lang"] != recorded:
        raise FlairsuiteError(f"--lang {options['lang']}: the --init model {initial.path} was trained on {recorded} text")
    if not (options.get("lang") or recorded):
        raise FlairsuiteError(f"--init {options['init']}: {initial.path} has no summary.json naming its language; give --lang")
    return options.get("lang") or recorded


def any_limit(options: dict[str, Any]) -> bool:
    """Whether --max-hours, --max-chars or --max-cpu-hours is given."""
    return any(options.get(key) is not None for key in ("max_hours", "max_chars", "max_cpu_hours"))


def budget_of(options: dict[str, Any]) -> Budget:
    """--max-hours, --max-chars and --max-cpu-hours as given; none: the preset's budget, else one hour (`budget_from`).

    A preset's budget is `max_chars` (German `cpu`: the released pair's characters), `max_cpu_hours`
    (en, da, zh `cpu`: one CPU-hour a direction: the process's CPU time in training, all its threads,
    so the same work whether the machine is quiet or busy), or both (whichever is reached first).
    """
    if any_limit(options):
        return budget_from(options["max_hours"], options["max_chars"], "--max-chars", options.get("max_cpu_hours"))
    preset = recipe(options["lang"], options["preset"])
    chars, cpu_hours = preset.get("max_chars"), preset.get("max_cpu_hours")
    return budget_from(None, int(chars) if chars else None, "--max-chars", float(cpu_hours) if cpu_hours else None)


def train_charlm_command(options: dict[str, Any]) -> Iterator[str]:
    """Run `train-charlm`; yields the closing summary lines."""
    models_dir = Path(options["out_dir"]) if options["out_dir"] else charlm_dir()
    initials: dict[bool, InitialModel] = {}
    if options.get("init"):
        if not options.get("name"):
            raise FlairsuiteError(f"--init {options['init']} needs --name: the continued models' folder prefix (charlm/NAME-forward, ...)")
        if not options.get("corpus"):
            raise FlairsuiteError(f"--init {options['init']} needs --corpus: the text to continue the models on (files or folders of raw text)")
        initials = initial_models(options["init"], DIRECTIONS[options["direction"]], (charlm_dir(), models_dir))
        first = next(iter(initials.values()))
        options = {**options, "lang": language_of(options, first)}
        hyper = initial_hyper(options, first)
    elif not options.get("lang"):
        raise FlairsuiteError("--lang is needed (or --init with a model of train-charlm)")
    else:
        hyper = hyper_from(options)
    if options["threads"]:
        torch.set_num_threads(options["threads"])
    ranks = ranks_from_environment()  # one rank unless started by torchrun
    if ranks.device is not None and ranks.device.type == "cuda":
        flair.device = ranks.device
    precision = resolved_precision(options.get("precision") or "auto", flair.device)
    require_precision(precision, flair.device, "train-charlm --precision", "--precision float32 (or auto)")
    corpus = first_on_rank_zero(  # a precision the device cannot train in was refused before this
        ranks,
        lambda: prepare_language(
            options["lang"], options["corpus"], options["corpora_dir"], None, options["heldout_fraction"], options["unk_fraction"], options["seed"],
            base_chars=first.chars if initials else (), new_chars=options.get("new_chars") or "unk", exclude=tuple(options.get("exclude") or ()),
        ),
    )
    if initials:
        hyper = adapted(hyper, options, corpus)
    budget = budget_of(options) if not initials or any_limit(options) else Budget(None, ADAPT_PASSES * corpus.meta["splits"]["train"], None)
    lines = list(describe(corpus))
    if initials:
        lines.append(f"continuing {', '.join(str(m.path) for m in initials.values())}: {len(first.chars) + 1} characters, "
                     f"{len(corpus.meta['added_characters'])} added ({options.get('new_chars') or 'unk'}), "
                     f"{corpus.meta['unk_characters']['occurrences']:,} occurrences read as <unk>")
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
            precision, options.get("model_dtype") or "float32", initials.get(forward),
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
    for name, s in rows:
        if s.get("noise"):
            noise = s["noise"]
            yield (f"{name}: trained with noise {noise['scheme']}:{noise['share']} (targets: {noise['targets']}), "
                   f"{noise['alphabet']['size']} characters injected, mask id {noise['mask']['id']}; valid and test perplexity on clean text")
