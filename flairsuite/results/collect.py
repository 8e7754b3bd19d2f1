"""Reading and validating the `metrics.json` files of tagging runs into pandas DataFrames.

Each run writes `results/<experiment>/<run>/metrics.json`. The schema, checked by `SCHEMA` below
(every key required; extra keys are allowed and ignored):

```json
{
  "experiment": "sturm-table3",
  "run": "sturm/proposed/bilstm-crf/seed-1",
  "corpus": "sturm",                 "corpus_options": {"granularity": "coarse"},
  "corpus_label": "ler (coarse)",    "subsample": null,
  "embeddings": "proposed",          "embedding_specs": ["charlm:de-forward", "charlm:de-backward"],
  "tagger": "bilstm-crf",            "seed": 1,     "entity_fix": false,
  "train": {"learning_rate": 0.1, "max_epochs": 20, "mini_batch_size": 32},
  "versions": {"flairsuite": "0.1.0", "flair": "0.15.1", "torch": "2.13.0"},
  "dev":  {"precision": 0.8, "recall": 0.7, "f1": 0.75,
           "per_type": {"pers": {"precision": 0.9, "recall": 0.8, "f1": 0.85, "support": 84}}},
  "test": {"precision": 0.8, "recall": 0.7, "f1": 0.75, "per_type": {...}},
  "flair_f1": {"dev": 0.76, "test": 0.74},
  "epochs": 20, "seconds": 123.4
}
```

`seconds` is the run's wall time; since the runs of 2026-11-26 a run resumed after a kill adds the training time of the
processes before it (earlier ones count the last process only); since 2026-11-27 runs add `"threads"` (torch's, with
which `results --cost` reads wall x threads as CPU time). Runs since fine-tuning add `"fine_tune": true/false` (a BERT of the stack trained with the tagger;
missing: false) and `"artifact_digests"` (sha256 of each embedding's files, e.g. the BERT folder's); runs since
memory was recorded add `"memory": {"peak_rss_anon_mb": ..., "peak_rss_mb": ...}` (sampled while the
run trained, flairsuite/memory.py; RssAnon leaves out the pages of the memory-mapped embedding cache)
and `"artifact_summaries"`: per embedding spec, how its artifact was trained (e.g. a BERT's
objective, positions, WWM, tokens seen, MLM accuracy; a char LM's characters and perplexity).
NER runs since 2026-11-27 add per type `"predicted"`, the entities found of that type (F1 over some types and the
anchors' measures need it: results/references.py). Runs on a corpus of one tag per token (PoS, `"task": "pos"`; a file without `task` is NER) hold
token accuracy instead of entity scores, and no `flair_f1`:
`"test": {"accuracy": 0.95, "per_type": {"NOUN": {"accuracy": 0.97, "support": 4123}}}` (per gold tag: the
share of its tokens tagged right). Tables show each run's main score, `score` (F1 for NER, accuracy
for PoS: `flairsuite.corpora.tasks`), so one table can hold NER and PoS columns side by side.
Scores are fractions in [0, 1]. `subsample` is null, or a description of the fixed subsample the
run used (e.g. `"10% of train (seed 1)"`); tables footnote it, as they do `split_note` (optional: how the splits differ from the
dataset's own, e.g. CLUENER's dev sampled from train and its official dev read as test) and `train_note` (optional: the
corpus entry's own training overrides, e.g. `"trained with max_epochs 10 on this corpus"`). `corpus_label` names the table
column, so it must tell apart corpus options (`"ler (coarse)"`).
"""

import json
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional, Union

import pandas as pd

from flairsuite.corpora.tasks import task
from flairsuite.results.references import Measure, best_published
from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.values import is_int, is_number, json_problem

METRICS_FILE = "metrics.json"
FIX_FOLDER = "entity-fix"  # metrics of a run's Entity-Fix variant, below the run folder
ENTITY_SCORES = ("precision", "recall", "f1")
SCORE = "score"  # the column of each run's main score: its task's metric (F1, accuracy)
SCORES = (SCORE, *ENTITY_SCORES, "accuracy")  # the columns `<split>_<score>` of a runs frame (NaN where a task lacks one)
SCORED_SPLITS = ("test", "dev")
REFERENCE_SCORE = "reference_score"  # `<split>_reference_score`: a run's score as its task's reference measures it (results/references.py)


class Leaf(NamedTuple):
    """A value check: what the value must be, in words, and the test."""

    description: str
    test: Callable[[Any], bool]


class EachValue(NamedTuple):
    """An object with any keys whose every value follows `schema` (e.g. per entity type)."""

    schema: "Schema"


class MaybeKey(NamedTuple):
    """A key that may be missing (files written before it was recorded); where present its value follows `schema`."""

    schema: "Schema"


Schema = Union[Leaf, EachValue, MaybeKey, dict[str, Any]]


TEXT = Leaf("a string", lambda v: isinstance(v, str))
TEXT_OR_NULL = Leaf("a string or null", lambda v: v is None or isinstance(v, str))
TEXT_LIST = Leaf("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
OBJECT = Leaf("an object", lambda v: isinstance(v, dict))
FLAG = Leaf("true or false", lambda v: isinstance(v, bool))
INTEGER = Leaf("an integer", is_int)
NUMBER = Leaf("a number", is_number)
FRACTION = Leaf("a fraction in [0, 1]", lambda v: is_number(v) and 0 <= v <= 1)

TYPE_SCORES = {**{score: FRACTION for score in ENTITY_SCORES}, "support": INTEGER, "predicted": MaybeKey(INTEGER)}  # predicted: since 2026-11-27
SPLIT_SCORES = {**{score: FRACTION for score in ENTITY_SCORES}, "per_type": EachValue(TYPE_SCORES)}
TAG_ACCURACY = {"accuracy": FRACTION, "support": INTEGER}
SPLIT_ACCURACY = {"accuracy": FRACTION, "per_type": EachValue(TAG_ACCURACY)}
SCHEMA: dict[str, Schema] = {
    "experiment": TEXT,
    "run": TEXT,
    "corpus": TEXT,
    "corpus_options": OBJECT,
    "corpus_label": TEXT,
    "subsample": TEXT_OR_NULL,
    "embeddings": TEXT,
    "embedding_specs": TEXT_LIST,
    "tagger": TEXT,
    "seed": INTEGER,
    "entity_fix": FLAG,
    "train": OBJECT,
    "versions": OBJECT,
    "dev": SPLIT_SCORES,
    "test": SPLIT_SCORES,
    "flair_f1": {split: FRACTION for split in SCORED_SPLITS},
    "epochs": INTEGER,
    "seconds": NUMBER,
}

TASK_SCHEMAS: dict[str, dict[str, Schema]] = {
    "ner": SCHEMA,
    "pos": {**{key: value for key, value in SCHEMA.items() if key != "flair_f1"}, "dev": SPLIT_ACCURACY, "test": SPLIT_ACCURACY},
}
PER_TYPE_SCORES = (*ENTITY_SCORES, "accuracy", SCORE, "support")

RUN_COLUMNS = ("experiment", "run", "task", "corpus", "corpus_label", "subsample", "embeddings", "fine_tune", "tagger", "entity_fix", "seed")
OPTIONAL = {"fine_tune": False, "task": "ner"}  # run columns that older metrics files lack: their value there


def run_columns(metrics: dict[str, Any]) -> dict[str, Any]:
    """The RUN_COLUMNS of one metrics file (OPTIONAL ones it lacks at their default)."""
    return {column: metrics.get(column, OPTIONAL[column]) if column in OPTIONAL else metrics[column] for column in RUN_COLUMNS}


class RunMetrics(NamedTuple):
    """One validated metrics file: where it is and what it holds."""

    path: Path
    metrics: dict[str, Any]


def check(value: Any, schema: Schema, key: str = "") -> None:
    """Raise ValueError naming the dotted key (e.g. `test.per_type.pers.f1`) where `value` breaks `schema`."""
    if isinstance(schema, Leaf):
        if not schema.test(value):
            raise ValueError(f"key '{key}' must be {schema.description}, found {json.dumps(value)}")
        return
    if not isinstance(value, dict):
        raise ValueError(f"key '{key}' must be an object, found {json.dumps(value)}" if key else "not a JSON object")
    if isinstance(schema, EachValue):
        for name, item in value.items():
            check(item, schema.schema, f"{key}.{name}")
        return
    for name, sub in schema.items():
        dotted = f"{key}.{name}" if key else name
        if isinstance(sub, MaybeKey):
            if name in value:
                check(value[name], sub.schema, dotted)
            continue
        if name not in value:
            raise ValueError(f"missing key '{dotted}'")
        check(value[name], sub, dotted)


def read_run(path: Path) -> RunMetrics:
    """Parse and validate one metrics file; a problem is a one-line error naming the file (and key)."""
    try:
        metrics = json.loads(read_utf8(path))
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, f"not valid JSON: {err.msg}") from None
    except ValueError as err:  # e.g. a number longer than Python converts
        raise InputError(path, None, f"not valid JSON: {json_problem(err)}") from None
    try:
        if not isinstance(metrics, dict):
            raise ValueError("not a JSON object")
        kind = metrics.get("task", "ner")
        if kind not in TASK_SCHEMAS:
            raise ValueError(f"key 'task' must be one of {', '.join(TASK_SCHEMAS)}, found {json.dumps(kind)}")
        check(metrics, TASK_SCHEMAS[kind])
    except ValueError as err:
        raise InputError(path, None, str(err)) from None
    return RunMetrics(path, metrics)


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


def variant_metrics_file(run_dir: Path, fix: bool) -> Path:
    """Where a run writes the metrics of its plain (`fix` false) or Entity-Fix variant."""
    return run_dir / FIX_FOLDER / METRICS_FILE if fix else run_dir / METRICS_FILE


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
        row["test_lengths"] = m.get("test_lengths")  # NER runs since 2026-11-26: gold and found entities by length (results/lengths.py)
        memory = m.get("memory") or {}
        row.update(epochs=m["epochs"], seconds=m["seconds"], peak_rss_anon_mb=memory.get("peak_rss_anon_mb"), peak_rss_mb=memory.get("peak_rss_mb"),
                   threads=m.get("threads", float("nan")), path=str(run.path))  # threads: torch's, recorded since 2026-11-27
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
