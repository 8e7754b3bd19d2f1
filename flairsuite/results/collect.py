"""The runs' `metrics.json` files (read and checked by `flairsuite.results.metrics_file`, which documents their schema)
as pandas DataFrames: one row per run, or per run, split and entity type."""

from pathlib import Path
from typing import Any, Optional, Union

import pandas as pd

from flairsuite.corpora.tasks import task
from flairsuite.errors import FlairsuiteError
from flairsuite.results.metrics_file import ENTITY_SCORES, METRICS_FILE, NO_TRANSFER, SCORED_SPLITS, RunMetrics, read_run
from flairsuite.results.references import Measure, best_published

SCORE = "score"  # the column of each run's main score: its task's metric (F1, accuracy)
SCORES = (SCORE, *ENTITY_SCORES, "accuracy")  # the columns `<split>_<score>` of a runs frame (NaN where a task lacks one)
REFERENCE_SCORE = "reference_score"  # `<split>_reference_score`: a run's score as its task's reference measures it (results/references.py)
PER_TYPE_SCORES = (*ENTITY_SCORES, "accuracy", SCORE, "support")

TRANSFER = "transfer"  # the column of a run's transfer mode: `none`, `sequential`, `joint` (metrics.json: `transfer.mode`)
RUN_COLUMNS = ("experiment", "run", "task", "corpus", "corpus_label", "subsample", "embeddings", "fine_tune", TRANSFER, "tagger", "entity_fix",
               "seed")
OPTIONAL = {"fine_tune": False, "task": "ner"}  # run columns that older metrics files lack: their value there


def transfer_mode(metrics: dict[str, Any]) -> str:
    """How a run used other corpora: the `mode` of its `transfer` record, `none` for a run without one."""
    record = metrics.get(TRANSFER)
    return str(record.get("mode", NO_TRANSFER)) if isinstance(record, dict) else NO_TRANSFER


def run_columns(metrics: dict[str, Any]) -> dict[str, Any]:
    """The RUN_COLUMNS of one metrics file (OPTIONAL ones it lacks at their default; `transfer`: the mode)."""
    def value(column: str) -> Any:
        if column == TRANSFER:
            return transfer_mode(metrics)
        return metrics.get(column, OPTIONAL[column]) if column in OPTIONAL else metrics[column]

    return {column: value(column) for column in RUN_COLUMNS}


def read_runs(root: Path) -> list[RunMetrics]:
    """Every `metrics.json` below `root` (one experiment folder or the whole results folder), sorted by path."""
    if not root.is_dir():
        raise FlairsuiteError(f"{root}: no such folder (pass the results folder or one experiment folder)")
    runs = [read_run(path) for path in sorted(root.rglob(METRICS_FILE))]
    if not runs:
        raise FlairsuiteError(f"{root}: no {METRICS_FILE} found below it (runs write results/<experiment>/<run>/{METRICS_FILE})")
    seen: dict[tuple[str, str], Path] = {}
    for run in runs:
        key = (run.metrics["experiment"], run.metrics["run"])
        if key in seen:
            raise FlairsuiteError(f"{seen[key]} and {run.path} both hold run '{key[1]}' of experiment '{key[0]}'")
        seen[key] = run.path
    return runs


def split_scores(task_name: str, scores: dict[str, Any]) -> dict[str, Any]:
    """A split's (or an entity type's) scores under every name of SCORES: the task's own, NaN for the others, and `score`."""
    values = {score: scores.get(score, float("nan")) for score in SCORES if score != SCORE}
    return {SCORE: scores[task(task_name).metric], **values}


def reference_measure(row: dict[str, Any]) -> Optional[Measure]:
    """How the published reference of a run's task averages F1 where that differs from the run's own score (None: it does not,
    or the task has no reference)."""
    reference = best_published(row["corpus"], row["corpus_options"] or {}) if row["task"] == "ner" else None
    return reference.measure if reference else None


def runs_frame(runs: list[RunMetrics]) -> pd.DataFrame:
    """One row per run: the run's keys, `<split>_<score>` (`score`: the task's main one; NaN where the task has no such score),
    `flair_<split>_f1` (NaN for PoS), epochs, the training history, seconds, peak memory (MiB; NaN for runs from before it was
    recorded), torch threads (NaN before they were recorded), path; where the task's published reference averages F1 otherwise
    (`references.Measure`: CLUENER's macro F1, the Danish anchor's F1 without MISC) its name, `reference_measure`, and
    `<split>_reference_score`, the run's score so measured (NaN elsewhere)."""
    rows = []
    for run in runs:
        m = run.metrics
        row = run_columns(m)
        row["metric"] = task(row["task"]).metric
        row["embedding_specs"] = " ".join(m["embedding_specs"])
        row["corpus_options"] = m["corpus_options"]
        row["split_note"] = m.get("split_note")
        row["train_note"] = m.get("train_note")
        row["train"] = m.get("train") or {}  # the run's training settings (tagging/train.py)
        for split in SCORED_SPLITS:
            row.update({f"{split}_{score}": value for score, value in split_scores(row["task"], m[split]).items()})
        measure = reference_measure(row)
        row["reference_measure"] = measure.name if measure else None
        row.update({f"{split}_{REFERENCE_SCORE}": measure.score(m[split]) if measure else float("nan") for split in SCORED_SPLITS})
        row.update({f"flair_{split}_f1": m["flair_f1"][split] if "flair_f1" in m else float("nan") for split in SCORED_SPLITS})
        row["artifact_summaries"] = m.get("artifact_summaries") or {}
        row["artifact_digests"] = m.get("artifact_digests") or {}
        row["history"] = m.get("history") or []  # per epoch: loss, dev score, learning rate (tagging/train.py)
        row["test_lengths"] = m.get("test_lengths")  # newer NER runs: gold and found entities by length (results/lengths.py)
        memory = m.get("memory") or {}
        row.update(epochs=m["epochs"], seconds=m["seconds"], peak_rss_anon_mb=memory.get("peak_rss_anon_mb"), peak_rss_mb=memory.get("peak_rss_mb"),
                   threads=m.get("threads", float("nan")), path=str(run.path))  # threads: torch's, recorded by newer runs
        rows.append(row)
    return pd.DataFrame(rows)


def per_type_frame(runs: list[RunMetrics]) -> pd.DataFrame:
    """One row per run, split and entity type (PoS: tag): the run's keys, split, type, the scores of SCORES (NaN where
    the task has none; PoS: the tag's accuracy), support."""
    rows = [
        {**(columns := run_columns(run.metrics)), "split": split, "type": name, **split_scores(columns["task"], scores), "support": scores["support"]}
        for run in runs
        for split in SCORED_SPLITS
        for name, scores in run.metrics[split]["per_type"].items()
    ]
    return pd.DataFrame(rows, columns=[*RUN_COLUMNS, "split", "type", *PER_TYPE_SCORES])


def collect(path: Union[str, Path]) -> pd.DataFrame:
    """The runs below `path` (a results or experiment folder) as a DataFrame, one row per run."""
    return runs_frame(read_runs(Path(path)))


def collect_per_type(path: Union[str, Path]) -> pd.DataFrame:
    """The per-type scores of the runs below `path`, one row per run, split and entity type."""
    return per_type_frame(read_runs(Path(path)))


def trained_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the runs themselves: a run's Entity-Fix variant re-decodes the same trained model, so it is left out
    wherever runs are counted or their training is read."""
    return frame[~frame["entity_fix"].astype(bool)]


def only_experiment(frame: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """The rows of `experiment`; an experiment without runs is an error listing those found."""
    chosen = frame[frame["experiment"] == experiment]
    if chosen.empty:
        found = ", ".join(sorted(frame["experiment"].unique()))
        raise FlairsuiteError(f"no runs of experiment '{experiment}' (found: {found})")
    return chosen
