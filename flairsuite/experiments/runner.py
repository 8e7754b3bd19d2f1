"""`flairsuite tag`: run every cell of an experiment grid, skipping finished runs, and print the table.

Layout of `results/<experiment>/`:

- `experiment.json`: the config's fingerprint and file text; a different config under the same
  name is refused unless `--force`, which also removes runs the new grid no longer has.
- `<corpus>/<stack>/<tagger>/seed-<n>/` (fine-tuned: `<corpus>/<stack>/ft/<tagger>/seed-<n>/`; with transfer:
  `<corpus>/<stack>/transfer-<mode>/<tagger>/seed-<n>/`, trained by `transfer.py`): `model.pt` (a plain Flair `SequenceTagger`),
  `predictions.tsv` (test tokens, gold tag, raw predicted tag: the decoder's output before any
  span repair), `metrics.json` (flairsuite/results/metrics_file.py; written last, so its presence marks
  a finished run) and, while training, `checkpoint.pt` (a killed run continues at its last epoch)
  and `.lock` (held by the training process: a second process skips the run, `locks.py`).
"""

import gc
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import flair
import torch
from tqdm import tqdm

import flairsuite
from flairsuite.corpora.tasks import task
from flairsuite.embeddings import artifact_digest, artifact_summary, set_trainable
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.grid import Run, match_runs, runs
from flairsuite.experiments.identity import fingerprint, run_fingerprint, run_record
from flairsuite.experiments.reading import Experiment
from flairsuite.experiments.renamed import adopt_renamed
from flairsuite.experiments.reuse import copy_run, same_run_elsewhere
from flairsuite.experiments.run_data import TRAIN_WITH_DEV, GridData, embedding_modules, features, label_type, run_stack, tag_dictionary
from flairsuite.experiments.transfer import PHASE_FILES, train_with_transfer
from flairsuite.experiments.vector_coverage import coverage_lines
from flairsuite.files.atomic import atomic_file, write_json
from flairsuite.files.locks import claimed
from flairsuite.files.paths import results_dir
from flairsuite.files.summary_file import read_record
from flairsuite.models.card import record_segmentation
from flairsuite.models.entity_fix import entity_fix
from flairsuite.models.registry import build_tagger
from flairsuite.results.lengths import length_counts
from flairsuite.results.metrics_file import FIX_FOLDER, METRICS_FILE, read_run, variant_metrics_file, write_metrics
from flairsuite.results.predictions import PREDICTIONS_FILE, write_predictions
from flairsuite.runtime.allocator import bound_primitive_cache
from flairsuite.runtime.memory import PeakMemory
from flairsuite.runtime.precision import require_precision
from flairsuite.settings_schema import TEXT
from flairsuite.tagging.cut_words import whole_words
from flairsuite.tagging.data import subsample_note
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.scoring import flair_f1, strict_scores, task_scores
from flairsuite.tagging.tagger_training import TaggerProgress, decode, train_tagger

STATE_FILE = "experiment.json"
MODEL_FILE = "model.pt"
CHECKPOINT_FILE = "checkpoint.pt"


def save_model(model: torch.nn.Module, target: Path) -> None:
    """Flair's `save`, written atomically."""
    with atomic_file(target) as temp:
        model.save(temp)


def versions() -> dict[str, str]:
    """Library versions recorded with every run."""
    return {"flairsuite": flairsuite.__version__, "flair": flair.__version__, "torch": torch.__version__}


def variant(run_id: str, fix: bool) -> str:
    """The id of a run's Entity-Fix variant: the run's own id, or `<run>/entity-fix` (its folder below the run's)."""
    return f"{run_id}/{FIX_FOLDER}" if fix else run_id


def scores(task_name: str, gold: list[list[str]], raw: list[list[str]], fix: bool) -> tuple[dict[str, Any], Optional[float]]:
    """NER: strict IOB2 scores and Flair's F1 of the raw tags, or of the tags after Entity-Fix. PoS: accuracy, no Flair F1."""
    if not task(task_name).spans:
        return task_scores(task_name, gold, raw), None
    predicted = fixed_tags(raw, fix)
    return strict_scores(gold, predicted), flair_f1(gold, predicted)


def fixed_tags(raw: list[list[str]], fix: bool) -> list[list[str]]:
    """The tags a variant is scored on: the raw ones, or after Entity-Fix."""
    return [entity_fix(tags) for tags in raw] if fix else raw


def decoded(run: Run, model: torch.nn.Module, split: SplitFeatures) -> list[list[str]]:
    """The run's raw tags of `split`: the decoder's output, and for NER the tokens of a word cut at a line end tagged as
    one word's (tagging/cut_words.py), where the corpus marks breaks."""
    tags = decode(model, split)
    return whole_words(tags, split.split.breaks) if run.corpus.task.spans else tags


def train_run(run: Run, data: GridData, run_dir: Path, run_digest: str, artifacts: dict[str, str]) -> dict[bool, dict[str, Any]]:
    """Train, decode, save one run; returns the metrics of each Entity-Fix variant (written last).

    `artifacts`: the digest of each embedding spec's files (`artifact_digest`), recorded in the metrics.
    """
    started = time.perf_counter()
    gc.collect()  # the run before's model (Flair's embeddings sit in reference cycles: fasttext:de holds a 190 MB table) goes first
    transfer_details = None
    with PeakMemory() as peak:  # the run's peak RssAnon (memory-mapped cache pages excluded) and RSS
        flair.set_seed(run.seed)  # the initial weights depend on the seed only, not on the runs before this one in the process
        model = build_tagger(run.tagger, run_stack(run, data.home), tag_dictionary(run.corpus), label_type(run.corpus))
        modules = embedding_modules(model.embeddings)
        for spec, module in zip(run.embedding_specs, modules):
            set_trainable(spec, module, run.fine_tune)
        with_dev = run.train_settings["train_with_dev"]
        train, dev, test = (features(run, modules, data, split) for split in (TRAIN_WITH_DEV if with_dev else "train", "dev", "test"))
        if run.transfer is None:
            progress = train_tagger(model, train, None if with_dev else dev, run.train_settings, run.seed, run_dir / CHECKPOINT_FILE, run.run_id,
                                    key=run_digest, task=run.corpus.task.name)
        else:  # other corpora first or beside (experiments/transfer.py)
            progress, transfer_details = train_with_transfer(run, model, modules, data, train, dev, run_dir, run_dir / CHECKPOINT_FILE, run_digest)
        raw = save_decoded(run, model, dev, test, run_dir)
    return run_metrics(run, data.home, progress, dev, test, raw, started, run_digest, artifacts, memory=peak.record(), transfer_details=transfer_details)


def save_decoded(run: Run, model: torch.nn.Module, dev: SplitFeatures, test: SplitFeatures, run_dir: Path) -> dict[str, list[list[str]]]:
    """Decode dev and test (`decoded`), write the test's predictions.tsv and the model.pt (its segmentation recorded) into
    `run_dir`; the raw tags of each split."""
    raw = {name: decoded(run, model, split) for name, split in (("dev", dev), ("test", test))}
    write_predictions(run_dir / PREDICTIONS_FILE, map(zip, test.split.texts, test.split.tags, raw["test"]))
    record_segmentation(model, run.corpus.spec().segmentation)  # predict splits raw text as the corpus was read
    save_model(model, run_dir / MODEL_FILE)
    return raw


def run_metrics(run: Run, home: Path, progress: TaggerProgress, dev: SplitFeatures, test: SplitFeatures, raw: dict[str, list[list[str]]],
                started: float, run_digest: str, artifacts: dict[str, str], memory: Optional[dict[str, Any]] = None,
                transfer_details: Optional[dict[str, Any]] = None, fixes: Optional[tuple[bool, ...]] = None) -> dict[bool, dict[str, Any]]:
    """The metrics.json record of each Entity-Fix variant (`fixes`, default the run's) of a model of `run` trained from
    `started` (a `time.perf_counter()`), its dev and test tags `raw` (flairsuite/results/metrics_file.py); `memory`: the peak
    memory measured while it trained."""
    record = {key: value for key, value in run_record(run).items() if key not in ("corpus_options", "subsample", "entity_fix", "fine_tune")}
    common = {
        **record,
        "experiment": run.experiment,
        "task": run.corpus.task.name,
        "corpus_options": run.corpus.options,
        "corpus_label": run.corpus.label,
        "subsample": subsample_note(run.corpus.subsample),
        **({"split_note": run.corpus.split_note} if run.corpus.split_note else {}),
        **({"train_note": run.corpus.train_note} if run.corpus.train_note else {}),
        "embeddings": run.embeddings,
        "fine_tune": run.fine_tune,
        **({"transfer_details": transfer_details} if transfer_details is not None else {}),
        "artifact_digests": {spec: artifacts[spec] for spec in run.embedding_specs},
        "artifact_summaries": {spec: summary for spec in run.embedding_specs if (summary := artifact_summary(spec, home)) is not None},
        "versions": versions(),
        "epochs": progress.epoch,
        "best_epoch": progress.best_epoch,
        "history": progress.history,
        "seconds": round(time.perf_counter() - started + progress.resumed_at, 1),  # with the training of earlier processes
        "threads": torch.get_num_threads(),  # CPU-hours = seconds x threads (results --cost)
        **({"memory": memory} if memory is not None else {}),
        "fingerprint": run_digest,
        **({"corpus_folder": run.corpus.own.folder} if run.corpus.own is not None else {}),
    }
    metrics = {}
    for fix in run.entity_fix if fixes is None else fixes:
        (dev_scores, dev_flair), (test_scores, test_flair) = (
            scores(run.corpus.task.name, split.split.tags, raw[name], fix) for name, split in (("dev", dev), ("test", test))
        )
        metrics[fix] = {**common, "run": variant(run.run_id, fix), "entity_fix": fix, "dev": dev_scores, "test": test_scores}
        if run.corpus.task.spans:  # PoS tags have no spans: no Flair F1, no entity lengths
            metrics[fix].update(flair_f1={"dev": dev_flair, "test": test_flair},
                                test_lengths=length_counts(test.split.tags, fixed_tags(raw["test"], fix)))
    return metrics


def check_state(config: ExperimentConfig, text: str, out: Path, force: bool) -> None:
    """Refuse a changed config under an existing name unless `force`; record the config."""
    state_file, new = out / STATE_FILE, fingerprint(config)
    if state_file.is_file() and not force:  # --force writes a new record over an old or damaged one
        if read_state(state_file)["fingerprint"] != new:
            raise FlairsuiteError(
                f"{out} holds runs of a different '{config.name}' config: pass --force to retrain what changed, or choose a new name"
            )
    write_json(state_file, {"name": config.name, "fingerprint": new, "config": text})


def read_state(path: Path) -> dict[str, Any]:
    """experiment.json, with its fingerprint; a damaged one is a one-line error naming the file."""
    return read_record(path, {"fingerprint": TEXT}, remedy="delete it or pass --force", kind="the record of an experiment", what="experiment record")


def finished(run: Run, run_dir: Path, run_digest: str, force: bool, artifacts: list[str], keep_finished: bool = False) -> bool:
    """Whether the metrics of every Entity-Fix variant exist for exactly this run; stale ones are an error unless `force`.

    `artifacts`: the digests of the run's embedding files in stack order. A run whose files only
    changed names is kept under the new ones (renamed.py). `keep_finished`: a run finished with these
    settings on other embedding files (word vectors trained again on another processor) counts as
    finished and keeps its metrics, which name the files it used (tables footnote them).
    """
    files = [variant_metrics_file(run_dir, fix) for fix in run.entity_fix]
    present = [file for file in files if file.is_file()]
    if not present:
        return False
    found = [read_run(file).metrics.get("fingerprint") for file in present]
    if all(value == run_digest for value in found) or adopt_renamed(run, present, run_digest, artifacts):
        return len(found) == len(files)  # a variant missing (killed between the writes): decode again
    other = [_other_files(run, file, artifacts) for file in present]
    only_files_differ = all(files_differ is not None for files_differ in other)
    if keep_finished and only_files_differ and len(present) == len(files):
        return True
    if not force:
        if only_files_differ and len(present) == len(files):
            raise FlairsuiteError(f"{run_dir} was trained on other embedding files ({other[0]}): "
                                  "pass --keep-finished to keep it or --force to retrain it")
        if only_files_differ:  # an Entity-Fix variant is missing, and decoding it again would read today's files
            raise FlairsuiteError(f"{run_dir} was trained on other embedding files ({other[0]}) and lacks a variant's metrics: "
                                  "pass --force to retrain it")
        raise FlairsuiteError(f"{run_dir} was trained with other settings or embedding files: pass --force to retrain it")
    remove_run(run_dir)
    return False


def remove_run(run_dir: Path) -> None:
    """Delete a run folder (for --force); one another process is training is a one-line error, never deleted under it."""
    with claimed(run_dir) as mine:
        if not mine:
            raise FlairsuiteError(f"{run_dir} is being trained by another process: stop it before --force retrains or removes the run")
        shutil.rmtree(run_dir)


def _other_files(run: Run, metrics_file: Path, artifacts: list[str]) -> Optional[str]:
    """The files that differ if `metrics_file` holds `run` with today's settings on other embedding files, else None.

    E.g. `fasttext:de 994ab4… (here e266ce…)`: the run's fingerprint, recomputed with the digests it recorded.
    """
    metrics = read_run(metrics_file).metrics
    recorded = metrics.get("artifact_digests")
    if not isinstance(recorded, dict) or not all(isinstance(recorded.get(spec), str) for spec in run.embedding_specs):
        return None
    used = [recorded[spec] for spec in run.embedding_specs]
    if run_fingerprint(run, used) != metrics.get("fingerprint"):
        return None
    return ", ".join(f"{spec} {then[:6]}… (here {now[:6]}…)" for spec, then, now in zip(run.embedding_specs, used, artifacts) if then != now)


def remove_stale(out: Path, wanted: set[Path]) -> list[Path]:
    """Delete finished run folders below `out` that the grid no longer has (after --force)."""
    stale = {path.parent for path in out.rglob(METRICS_FILE) if path.parent not in wanted}
    stale = sorted(run_dir for run_dir in stale if not stale.intersection(run_dir.parents))  # <run>/entity-fix goes with <run>
    for run_dir in stale:
        remove_run(run_dir)
    return stale


def select(grid: list[Run], patterns: Sequence[str]) -> list[Run]:
    """The runs whose id matches one of the shell-style `patterns` (all runs when there are none)."""
    if not patterns:
        return grid
    chosen, unmatched = match_runs(grid, patterns)
    if unmatched:  # a mistyped pattern among others would silently leave its runs out
        raise FlairsuiteError(f"--runs {' '.join(unmatched)}: no run id matches (ids look like {grid[0].run_id}; {_id_parts(grid)})")
    return chosen


def present_corpora_only(config: ExperimentConfig, chosen: list[Run], root: Path, echo: Callable[[str], None]) -> list[Run]:
    """`chosen` without the runs on `if_present` corpora that miss a split under `root`, one line said per such corpus."""
    absent = set()
    for corpus in config.corpora:
        missing = corpus.missing_splits(root) if corpus.if_present else []
        if missing:
            absent.add(corpus.key)
            echo(f"{corpus.label}: left out, its {' and '.join(missing)} file{'s' if len(missing) > 1 else ''} not under "
                 f"{corpus.spec().directory(root)} (if_present: its runs join once the files are there)")
    return [run for run in chosen if run.corpus.key not in absent]


def _id_parts(grid: list[Run]) -> str:
    """The values each part of the run ids takes, e.g. `corpora: sturm, ler-coarse, ler; embeddings: ...`."""
    names = ("corpora", "embeddings", "taggers")
    parts = [list(dict.fromkeys(run.run_id.split("/")[index] for run in grid)) for index in (0, 1)]
    parts.append(list(dict.fromkeys(run.tagger for run in grid)))
    return "; ".join(f"{name}: {', '.join(values)}" for name, values in zip(names, parts))


@dataclass
class GridPlan:
    """What `flairsuite tag` is about to do: the experiment, its results folder and the runs still to train."""

    config: ExperimentConfig
    out: Path
    digests: dict[str, str]  # artifact digest per embedding spec
    todo: list[tuple[Run, str]]  # (run, its fingerprint)
    path: Path  # the experiment file

    def refuse_untrainable_precision(self, device: torch.device) -> None:
        """A one-line error naming the file and run if a pending run asks for a precision `device` cannot train in."""
        for run, _ in self.todo:
            require_precision(run.train_settings.get("precision", "float32"), device, f"{self.path} (run {run.run_id})", "precision: float32")


def plan_experiment(
    experiment: Experiment, home: Path, force: bool = False, echo: Callable[[str], None] = print, patterns: Sequence[str] = (),
    keep_finished: bool = False, corpora_root: Optional[Path] = None,
) -> GridPlan:
    """Check the experiment against its results folder and list the unfinished runs (those matching `patterns`).

    `keep_finished`: runs finished with the same settings on other embedding files are kept (`finished`).
    `corpora_root`: where the datasets are; the runs on an `if_present` corpus with a split missing there are left out.
    """
    config, path = experiment.config, experiment.path
    if config.active_learning is not None:
        raise FlairsuiteError(f"{path}: an active_learning simulation runs its rounds in one process: leave out --ray")
    if config.self_training is not None:
        raise FlairsuiteError(f"{path}: self-training runs its rounds in one process (flairsuite tag without --ray)")
    grid = runs(config)
    chosen = select(grid, patterns)
    if corpora_root is not None:
        chosen = present_corpora_only(config, chosen, corpora_root, echo)
    # the chosen runs' files: a missing one fails here, before any work; runs left out by --runs may lack theirs (an LM
    # still training for them)
    digests = {spec: artifact_digest(spec, home) for spec in sorted({spec for run in chosen for spec in run.embedding_specs})}
    out = results_dir(home) / config.name
    check_state(config, experiment.text, out, force)
    if force:
        for stale in remove_stale(out, {out / variant(run.run_id, fix) for run in grid for fix in run.entity_fix}):
            echo(f"removed {stale} (not in the grid any more)")
    todo, copied = [], 0
    for run in chosen:
        artifacts = [digests[spec] for spec in run.embedding_specs]
        run_digest = run_fingerprint(run, artifacts)
        if finished(run, out / run.run_id, run_digest, force, artifacts, keep_finished):
            continue
        if (same := same_run_elsewhere(run, out.parent, artifacts)) is not None:
            copy_run(run, out, run_digest, *same)
            copied += 1
            echo(f"{run.run_id}: copied from {same[0].relative_to(out.parent)} (the same run, finished there)")
        else:
            todo.append((run, run_digest))
    if corpora_root is not None:  # how well the stacks' word vectors cover the user's own corpora
        for line in coverage_lines((run for run, _ in todo), home, corpora_root):
            echo(line)
    echo(f"{config.name}: {len(chosen)} runs" + (f" of {len(grid)} (--runs)" if patterns else "")
         + f", {len(chosen) - len(todo) - copied} finished before, " + (f"{copied} copied from other experiments, " if copied else "")
         + f"{len(todo)} to train")
    return GridPlan(config, out, digests, todo, path)


def train_and_record(run: Run, run_digest: str, data: GridData, out: Path, digests: dict[str, str]) -> list[str]:
    """Train one run, write the metrics of each Entity-Fix variant, drop its checkpoint; one report line per variant."""
    lines = []
    for metrics in train_run(run, data, out / run.run_id, run_digest, digests).values():
        write_metrics(out / metrics["run"] / METRICS_FILE, metrics)
        metric = run.corpus.task
        lines.append(f"{metrics['run']}: test {metric.metric_title} {metrics['test'][metric.metric] * 100:.2f} "
                     f"(dev {metrics['dev'][metric.metric] * 100:.2f}), {metrics['epochs']} epochs, {metrics['seconds']:.0f} s")
    for name in (CHECKPOINT_FILE, *PHASE_FILES):  # a transfer run's source phase files too
        (out / run.run_id / name).unlink(missing_ok=True)
    return lines


def run_experiment(
    experiment: Experiment,
    home: Path,
    corpora_root: Path,
    force: bool = False,
    echo: Callable[[str], None] = print,
    patterns: Sequence[str] = (),
    cache: Optional[Path] = None,
    keep_finished: bool = False,
) -> Path:
    """Train every unfinished run of the experiment (or those matching `patterns`) in this process; its results folder.

    Processes can share one experiment through `patterns` (e.g. one per core); a run another process
    is training is skipped, one it finished meanwhile too. `cache`: the embedding cache folder.
    oneDNN's primitive cache is bounded first (allocator.py: each batch length is a new shape).
    """
    bound_primitive_cache()
    plan = plan_experiment(experiment, home, force, echo, patterns, keep_finished, corpora_root)
    plan.refuse_untrainable_precision(flair.device)  # before any embedding is computed
    data = GridData(home, corpora_root, cache=cache)
    started, trained = time.perf_counter(), 0
    for run, run_digest in tqdm(plan.todo, desc=plan.config.name, unit="run"):
        run_dir = plan.out / run.run_id
        with claimed(run_dir) as mine:
            if not mine or finished(run, run_dir, run_digest, False, [plan.digests[spec] for spec in run.embedding_specs], keep_finished):
                tqdm.write(f"{run.run_id}: skipped, {'being trained' if not mine else 'finished'} by another process")
                continue
            for line in train_and_record(run, run_digest, data, plan.out, plan.digests):
                tqdm.write(line)
            trained += 1
    echo(f"trained {trained} runs in {time.perf_counter() - started:.0f} s; embeddings computed for {data.computed} "
         f"(corpus split, embedding) pairs, the rest read from the cache")
    return plan.out
