"""The labeling tasks a dataset can hold: what its tags mean and which score ranks the taggers on it.

One table, read by the experiment files (which taggers and options a task admits), the runner (the
tag dictionary, the dev score that picks the best epoch, the test scores) and the collector (the
score a table shows). A registered dataset names its task in `registry.yaml`; an own corpus says
`task: pos` (default `ner`).
"""

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from flairsuite.errors import unknown_name_error


@dataclass(frozen=True)
class Task:
    """A labeling task: `metric` is the key of its main score in a run's `dev`/`test` scores (a fraction)."""

    name: str
    description: str
    metric: str  # "f1" or "accuracy"
    metric_title: str  # how tables and plots name it
    spans: bool  # tags encode spans (BIO: the tag dictionary holds span labels, Entity-Fix applies)


TASKS: Mapping[str, Task] = MappingProxyType(
    {
        "ner": Task("ner", "named entities: spans as BIO tags, scored by strict IOB2 entity F1", "f1", "F1", True),
        "pos": Task("pos", "one tag per token (e.g. UD upos or xpos), scored by token accuracy", "accuracy", "accuracy", False),
    }
)
LABELED_TASKS = tuple(TASKS)


def task(name: str) -> Task:
    """The task `name`; an unknown one is an error listing the known ones."""
    if name not in TASKS:
        raise unknown_name_error("task", name, list(TASKS))
    return TASKS[name]
