"""Published scores to aim at, per task: the one table the plots (and Table 8) read reference values from.

A task is a corpus with the option that changes its labels, `(corpus, granularity)` with "" for
corpora without one, e.g. `("ler", "coarse")`; `task()` derives it from a run's `corpus` and
`corpus_options` columns (the registry's default fills an option a run left out). Values are
test E-F1 in percent.
"""

from typing import NamedTuple, Optional

from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError

ZOELLNER_2021_TABLE8 = "Zöllner et al. 2021, Table 8"


class Reference(NamedTuple):
    """A published score (percent) and where it is published."""

    value: float
    source: str


# The best fine-tuned small BERT per column of Zöllner et al. 2021, Table 8 (its LCRFNER or CSE rows).
BEST_PUBLISHED: dict[tuple[str, str], Reference] = {
    ("sturm", ""): Reference(87.83, ZOELLNER_2021_TABLE8),
    ("arendt", ""): Reference(80.48, ZOELLNER_2021_TABLE8),
    ("ler", "coarse"): Reference(94.88, ZOELLNER_2021_TABLE8),
    ("ler", "fine"): Reference(94.55, ZOELLNER_2021_TABLE8),
}


def task(corpus: str, options: dict[str, str]) -> tuple[str, str]:
    """`("ler", {})` -> `("ler", "fine")`: the corpus and its granularity ("" when it has none)."""
    return corpus, dataset(corpus, **options).options.get("granularity", "")


def known_task(corpus: str, options: dict[str, str]) -> Optional[tuple[str, str]]:
    """`task()`, or None for a corpus the registry does not know (e.g. a user's own)."""
    try:
        return task(corpus, options)
    except FlairsuiteError:
        return None


def best_published(corpus: str, options: dict[str, str]) -> Optional[Reference]:
    """The best published score of a run's task, or None where none is known."""
    key = known_task(corpus, options)
    return BEST_PUBLISHED.get(key) if key else None
