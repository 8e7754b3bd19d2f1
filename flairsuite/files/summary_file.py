"""The one reader and writer of `summary.json`, what each training command (`train-charlm`, `train-bert`,
`train-fasttext`) writes beside its artifact, last; and the one reader of the other JSON records the suite keeps
beside its outputs (`read_record`): an experiment's `experiment.json`, an active-learning simulation's
`simulation.json`, `selection.json` and round scores.

One policy for every reader: a file that is missing, unreadable, not JSON, not an object, without a key the reader needs
or with a value that breaks the key's `Rule` is a one-line `InputError` naming the file (and the line of a JSON syntax
error), e.g. `bert/de/summary.json: missing key 'settings.objective'`. A reader that can do without the summary (a
run's record of how its embeddings were trained) catches that error and goes on without it; none sees a traceback.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.files.atomic import write_json
from flairsuite.settings_schema import MaybeKey, Rule, check_record, nested
from flairsuite.values import json_problem

SUMMARY_FILE = "summary.json"
MISSING = object()


def write_summary(folder: Path, summary: Mapping[str, Any]) -> Path:
    """Write `summary` as `folder/summary.json` (atomically, indented); its path."""
    path = folder / SUMMARY_FILE
    write_json(path, dict(summary))
    return path


def value_at(data: Mapping[str, Any], dotted: str) -> Any:
    """The value of the dotted key `dotted` (`settings.objective`) in `data`; MISSING where a part is absent."""
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def read_record(
    path: Path, required: Mapping[str, Rule] = {}, optional: Mapping[str, Rule] = {}, remedy: Optional[str] = None, kind: str = "",
    what: str = "record",
) -> dict[str, Any]:
    """The JSON object at `path`, with every key of `required` (dotted: `data.vocab_size`) present and following its rule, and
    each key of `optional` that is present and not null following its; otherwise a one-line InputError naming the file,
    ending in `; <remedy>` where one is given. `kind` (e.g. `a train-charlm summary`) says what the file should be, `what`
    names it where it is missing (`summary not found`)."""
    tail = f"; {remedy}" if remedy else ""
    try:
        record = json.loads(read_utf8(path, what))
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, f"not valid JSON: {err.msg}{tail}") from None
    except ValueError as err:  # e.g. a number longer than Python converts
        raise InputError(path, None, f"not valid JSON: {json_problem(err)}{tail}") from None
    if not isinstance(record, dict):
        raise InputError(path, None, f"not a JSON object{f' ({kind})' if kind else ''}{tail}")
    null_or = {key: MaybeKey(Rule(rule.description, lambda v, rule=rule: v is None or rule(v))) for key, rule in optional.items()}
    schema = {**required, **null_or}
    try:
        check_record(record, nested(schema))
    except FlairsuiteError as err:
        raise InputError(path, None, f"{err}{tail}") from None
    return record


def read_summary_file(
    path: Path, required: Mapping[str, Rule] = {}, optional: Mapping[str, Rule] = {}, remedy: Optional[str] = None, kind: str = "",
) -> dict[str, Any]:
    """The summary.json at `path`, checked as `read_record` checks a record."""
    return read_record(path, required, optional, remedy, kind, what="summary")
