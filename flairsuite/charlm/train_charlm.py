"""`flairsuite train-charlm`: the run (`settings.CharlmRun`) read against the recipes or the `--init` model (hyper-parameters,
budget), the corpus prepared, each direction trained (`flairsuite.charlm.run`: one direction's model folder), the report lines."""

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import flair

from flairsuite.charlm.initial import ARCHITECTURE, InitialModel, initial_models
from flairsuite.charlm.recipes import BUDGET_KEYS, recipe
from flairsuite.charlm.run import train_direction
from flairsuite.charlm.settings import NOISE_KEYS, CharlmRun, Hyper
from flairsuite.corpora.language_splits import labeled_tokens
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import charlm_dir, corpora_dir
from flairsuite.pretraining import budget_from
from flairsuite.rawtext.char_coverage import coverage_lines, coverage_rows, text_coverage_rows, training_characters
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.runtime.distributed import Ranks, first_on_rank_zero, leave, ranks_from_environment
from flairsuite.runtime.precision import require_precision, resolved_precision
from flairsuite.runtime.threads import apply as apply_threads
from flairsuite.training import Budget

DIRECTIONS = {"forward": (True,), "backward": (False,), "both": (True, False)}


ADAPT_PASSES = 5  # --init without a budget: this many passes over the new text's training split
VALIDATIONS_A_PASS = 2  # --init without --validate-chars: validation points per pass over the new text (at most the initial LM's interval)


def preset_values(run: CharlmRun) -> dict[str, Any]:
    """The hyper-parameters of the run's recipe preset (its budget left out)."""
    return {key: value for key, value in recipe(run.lang, run.preset).items() if key not in BUDGET_KEYS}


def hyper_from(run: CharlmRun) -> Hyper:
    """The recipe's preset with the options given on the command line."""
    return Hyper(**{**preset_values(run), **run.hyper})


def initial_hyper(run: CharlmRun, initial: InitialModel) -> Hyper:
    """The hyper-parameters of a run continuing `initial` (`--init`): its own (its summary's, else the recipe's with its
    architecture), with the training-loop options given on the command line; architecture options that differ are a
    one-line error. Unless given: no window ramp, and the learning rate the initial run ended at (module `initial`). Its
    noise is not inherited: `--noise` applies to this run's text alone."""
    known = set(Hyper.keys())
    own = {key: value for key, value in (initial.summary.get("hyper") or {}).items() if key in known and key not in NOISE_KEYS}
    base = {**preset_values(run), **own, **initial.architecture}
    differing = [name for name in ARCHITECTURE if run.hyper.get(name) is not None and run.hyper[name] != base[name]]
    if differing:
        raise FlairsuiteError(f"--init {run.init}: {initial.path} has {', '.join(f'{n} {base[n]}' for n in differing)}; "
                              "an initial model's architecture cannot change (leave those options out)")
    restart = {"ramp_chars": 0, **({"learning_rate": initial.last_learning_rate} if initial.last_learning_rate else {})}
    return Hyper(**{**base, **restart, **run.hyper})


def adapted(hyper: Hyper, run: CharlmRun, corpus: PreparedCorpus) -> Hyper:
    """`hyper` of an --init run with validation points fitted to the new text, unless --validate-chars is given."""
    if run.hyper.get("validate_chars") is not None:
        return hyper
    per_pass = max(1, corpus.meta["splits"]["train"] // VALIDATIONS_A_PASS)
    return replace(hyper, validate_chars=min(hyper.validate_chars, per_pass))


def language_of(run: CharlmRun, initial: InitialModel) -> str:
    """--lang, else the language the initial model's summary records; neither: a one-line error."""
    recorded = ((initial.summary.get("corpus") or {}).get("config") or {}).get("language")
    if run.lang and recorded and run.lang != recorded:
        raise FlairsuiteError(f"--lang {run.lang}: the --init model {initial.path} was trained on {recorded} text")
    if not (run.lang or recorded):
        raise FlairsuiteError(f"--init {run.init}: {initial.path} has no summary.json naming its language; give --lang")
    return run.lang or recorded


def any_limit(run: CharlmRun) -> bool:
    """Whether --max-hours, --max-chars or --max-cpu-hours is given."""
    return any(limit is not None for limit in (run.max_hours, run.max_chars, run.max_cpu_hours))


def budget_of(run: CharlmRun) -> Budget:
    """--max-hours, --max-chars and --max-cpu-hours as given; none: the preset's budget, else one hour (`budget_from`).

    A preset's budget is `max_chars` (German `cpu`: the released pair's characters), `max_cpu_hours`
    (en, da, zh `cpu`: one CPU-hour a direction: the process's CPU time in training, all its threads,
    so the same work whether the machine is quiet or busy), or both (whichever is reached first).
    """
    if any_limit(run):
        return budget_from(run.max_hours, run.max_chars, "--max-chars", run.max_cpu_hours)
    preset = recipe(run.lang, run.preset)
    chars, cpu_hours = preset.get("max_chars"), preset.get("max_cpu_hours")
    return budget_from(None, int(chars) if chars else None, "--max-chars", float(cpu_hours) if cpu_hours else None)


def starting_point(run: CharlmRun, models_dir: Path) -> tuple[CharlmRun, dict[bool, InitialModel], Hyper]:
    """The run with its language settled, the `--init` models by direction (none for a new pair) and the hyper-parameters;
    an --init without --name or --corpus, or a new pair without --lang: a one-line error."""
    if not run.init:
        if not run.lang:
            raise FlairsuiteError("--lang is needed (or --init with a model of train-charlm)")
        return run, {}, hyper_from(run)
    if not run.name:
        raise FlairsuiteError(f"--init {run.init} needs --name: the continued models' folder prefix (charlm/NAME-forward, ...)")
    if not run.corpus:
        raise FlairsuiteError(f"--init {run.init} needs --corpus: the text to continue the models on (files or folders of raw text)")
    initials = initial_models(run.init, DIRECTIONS[run.direction], (charlm_dir(), models_dir))
    first = next(iter(initials.values()))
    run = replace(run, lang=language_of(run, first))
    return run, initials, initial_hyper(run, first)


def coverage_report(run: CharlmRun, corpus: PreparedCorpus) -> tuple[dict[str, Any], list[str]]:
    """What the dictionary misses, recorded with each model, and its report lines: of the user's texts where the run
    reads --corpus (`text_coverage`, a row per path given), else of the language's labeled corpora (`labeled_coverage`)."""
    dictionary, seen = set(corpus.chars), training_characters(corpus.text_path("train"))
    if run.corpus:
        rows = text_coverage_rows(run.corpus, dictionary, seen)
        return {"text_coverage": rows}, coverage_lines(rows, "your texts")
    rows = coverage_rows(labeled_tokens(run.lang, corpora_dir(run.corpora_dir)), dictionary, seen)
    return {"labeled_coverage": rows}, coverage_lines(rows)


def train_charlm_command(run: CharlmRun) -> Iterator[str]:
    """Run `train-charlm`; yields the closing summary lines."""
    models_dir = Path(run.out_dir) if run.out_dir else charlm_dir()
    run, initials, hyper = starting_point(run, models_dir)
    base_chars = next(iter(initials.values())).chars if initials else ()  # the initial dictionary (both directions share it)
    if run.threads:
        apply_threads(run.threads)
    ranks = ranks_from_environment()  # one rank unless started by torchrun
    if ranks.device is not None and ranks.device.type == "cuda":
        flair.device = ranks.device
    precision = resolved_precision(run.precision, flair.device)
    require_precision(precision, flair.device, "train-charlm --precision", "--precision float32 (or auto)")
    corpus = first_on_rank_zero(  # a precision the device cannot train in was refused before this
        ranks,
        lambda: prepare_language(
            run.lang, run.corpus, run.corpora_dir, None, run.heldout_fraction, run.unk_fraction, run.seed,
            base_chars=base_chars, new_chars=run.new_chars, exclude=run.exclude,
        ),
    )
    if initials:
        hyper = adapted(hyper, run, corpus)
    budget = budget_of(run) if not initials or any_limit(run) else Budget(None, ADAPT_PASSES * corpus.meta["splits"]["train"], None)
    lines = list(describe(corpus))
    if initials:
        lines.append(f"continuing {', '.join(str(m.path) for m in initials.values())}: {len(base_chars) + 1} characters, "
                     f"{len(corpus.meta['added_characters'])} added ({run.new_chars}), "
                     f"{corpus.meta['unk_characters']['occurrences']:,} occurrences read as <unk>")
    record: dict[str, Any] = {}
    if ranks.main:  # what the dictionary misses, recorded with each model
        record, coverage = coverage_report(run, corpus)
        lines += coverage
    rows = []
    for forward in DIRECTIONS[run.direction]:
        name = f"{run.name or run.lang}-{'forward' if forward else 'backward'}"
        summary = train_direction(
            corpus, models_dir / name, hyper, forward, budget, run.resume, run.force, run.seed, ranks, record,
            precision, run.model_dtype, initials.get(forward),
        )
        rows.append((name, summary))
    leave(ranks)
    if ranks.main:
        yield from lines
        yield from report_lines(rows, hyper, ranks)


def report_lines(rows: list[tuple[str, dict[str, Any]]], hyper: Hyper, ranks: Ranks) -> Iterator[str]:
    """The closing report: data-parallel ranks, a table of the trained models, their files and their noise."""
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
