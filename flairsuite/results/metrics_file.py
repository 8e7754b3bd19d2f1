"""The one reader and writer of `metrics.json`, the file each tagging run writes last: its schema, checked on reading.

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

`seconds` is the run's wall time; a run resumed after a kill adds the training time of the
processes before it (older runs count the last process only); newer runs add `"threads"` (torch's, with
which `results --cost` reads wall x threads as CPU time). Runs since fine-tuning add `"fine_tune": true/false` (a BERT of the stack trained with the tagger;
missing: false) and `"artifact_digests"` (sha256 of each embedding's files, e.g. the BERT folder's); runs since
memory was recorded add `"memory": {"peak_rss_anon_mb": ..., "peak_rss_mb": ...}` (sampled while the
run trained, flairsuite/runtime/memory.py; RssAnon leaves out the pages of the memory-mapped embedding cache)
and `"artifact_summaries"`: per embedding spec, how its artifact was trained (e.g. a BERT's
objective, positions, WWM, tokens seen, MLM accuracy; a char LM's characters and perplexity).
Transfer runs (the `transfer:` block, flairsuite/experiments/transfer.py) add `"transfer"` (mode, sources, type
mapping, source-phase settings: what their fingerprint holds) and `"transfer_details"` (each source's sentences and
entities kept and dropped by the mapping, the sentences trained on, a sequential run's source phase); the collector's
`transfer` column is the mode, `none` for every other run.
Newer NER runs add per type `"predicted"`, the entities found of that type (F1 over some types and the
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

Files written since 2026-12-02 (`write_metrics`) begin with `"schema_version": 1`; a file without it (the committed
runs, never rewritten) is of version 1, the same schema; a later version is refused with one line, as is a file that is
not JSON or breaks the schema (`read_run`). `read_metrics_json` parses without the schema, for readers of a few keys.
"""

import json
from pathlib import Path
from typing import Any, NamedTuple

from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.files.atomic import write_json
from flairsuite.settings_schema import FLAG, FRACTION, INTEGER, NUMBER, TEXT, EachValue, MaybeKey, Rule, Schema, check_record, one_of, refuse
from flairsuite.values import is_int, json_problem

METRICS_FILE = "metrics.json"
FIX_FOLDER = "entity-fix"  # metrics of a run's Entity-Fix variant, below the run folder
FINE_TUNED = "ft"  # the path component of fine-tuned runs, after the stack's
TRANSFER_SEGMENT = "transfer-"  # the path component of transfer runs, after the stack's: transfer-sequential, transfer-joint
NO_TRANSFER = "none"  # the transfer mode of every other run (metrics.json without `transfer`)
ENTITY_SCORES = ("precision", "recall", "f1")
SCORED_SPLITS = ("test", "dev")
# the schema's version, written first into every new metrics.json; a file without it (an older run)
# is of version 1, the same schema
SCHEMA_VERSION = 1
VERSION_KEY = "schema_version"


TEXT_OR_NULL = Rule("a string or null", lambda v: v is None or isinstance(v, str))
TEXT_LIST = Rule("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
OBJECT = Rule("an object", lambda v: isinstance(v, dict))
VERSION = Rule(f"an integer from 1 to {SCHEMA_VERSION} (this flairsuite's)", lambda v: is_int(v) and 1 <= v <= SCHEMA_VERSION)

TYPE_SCORES = {**{score: FRACTION for score in ENTITY_SCORES}, "support": INTEGER, "predicted": MaybeKey(INTEGER)}  # predicted: newer runs only
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
class RunMetrics(NamedTuple):
    """One validated metrics file: where it is and what it holds."""

    path: Path
    metrics: dict[str, Any]


def read_metrics_json(path: Path) -> Any:
    """The parsed JSON of a metrics file, unchecked (a reader of a few keys that skips what it cannot read); a file that
    is not JSON is a one-line error naming the file and line."""
    try:
        return json.loads(read_utf8(path))
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, f"not valid JSON: {err.msg}") from None
    except ValueError as err:  # e.g. a number longer than Python converts
        raise InputError(path, None, f"not valid JSON: {json_problem(err)}") from None


def read_run(path: Path) -> RunMetrics:
    """Parse and validate one metrics file; a problem is a one-line error naming the file (and key)."""
    metrics = read_metrics_json(path)
    try:
        if not isinstance(metrics, dict):
            raise FlairsuiteError("not a JSON object")
        refuse(VERSION_KEY, VERSION, metrics.get(VERSION_KEY, 1))
        kind = metrics.get("task", "ner")
        refuse("task", one_of(tuple(TASK_SCHEMAS)), kind)
        check_record(metrics, TASK_SCHEMAS[kind])
    except FlairsuiteError as err:
        raise InputError(path, None, str(err)) from None
    return RunMetrics(path, metrics)


def write_metrics(path: Path, metrics: dict[str, Any]) -> None:
    """Write a run's `metrics` to `path` (atomically), `schema_version` first."""
    write_json(path, {VERSION_KEY: SCHEMA_VERSION, **{key: value for key, value in metrics.items() if key != VERSION_KEY}})


def variant_metrics_file(run_dir: Path, fix: bool) -> Path:
    """Where a run writes the metrics of its plain (`fix` false) or Entity-Fix variant."""
    return run_dir / FIX_FOLDER / METRICS_FILE if fix else run_dir / METRICS_FILE
