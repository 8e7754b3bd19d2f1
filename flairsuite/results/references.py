"""Published scores to aim at, per task: the one table the plots (and Table 8) read reference values from.

A task is a corpus with the option that changes its labels, `(corpus, granularity or tags)` with ""
for corpora without one, e.g. `("ler", "coarse")`, `("ud-en-ewt", "xpos")`; `task()` derives it
from a run's `corpus` and `corpus_options` columns (the registry's default fills an option a run
left out). Values are test scores in percent: entity F1 for NER, token accuracy for PoS.

Each reference is a "best published" result on the same data (the German columns: Zöllner et al.
2021, Table 8) or an "anchor": a published number to read ours beside that is not on the same data
or not by the same measure, its source saying how it differs (`../shared/papers/ANCHORS.md`).
"""

import math
from typing import Any, NamedTuple, Optional

from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError

ZOELLNER_2021_TABLE8 = "Zöllner et al. 2021, Table 8"


class Measure(NamedTuple):
    """How a reference averages entity F1 where that is not the suite's own (micro F1 over every type): `macro`, the
    mean of the F1 of each type in the gold standard; `micro` over the entities of `types` only (lower case)."""

    name: str  # the column heading beside the corpus's own, e.g. "macro F1"
    average: str
    types: Optional[frozenset[str]] = None

    def score(self, split: dict[str, Any]) -> float:
        """This measure of one split's scores (a metrics.json `dev` or `test`, fractions); NaN where its per-type
        counts do not allow it (a run from before `predicted` was recorded, with a type of precision 0)."""
        chosen = [s for name, s in split["per_type"].items() if self.types is None or name.lower() in self.types]
        if self.average == "macro":
            gold = [s["f1"] for s in chosen if s["support"] > 0]
            return sum(gold) / len(gold) if gold else math.nan
        found = [found_of(s) for s in chosen]
        if None in found:
            return math.nan
        gold, predicted = sum(s["support"] for s in chosen), sum(found)
        return 2 * sum(correct_of(s) for s in chosen) / (gold + predicted) if gold + predicted else math.nan


def correct_of(scores: dict[str, Any]) -> int:
    """A type's correctly found entities, from its recall and gold support."""
    return round(scores["recall"] * scores["support"])


def found_of(scores: dict[str, Any]) -> Optional[int]:
    """A type's found entities: recorded (`predicted`), else from its correct ones and precision; None where the
    precision is 0 and nothing was recorded (then the count is unknown)."""
    if "predicted" in scores:
        return scores["predicted"]
    return round(correct_of(scores) / scores["precision"]) if scores["precision"] else None


class Reference(NamedTuple):
    """A published score (percent), where it is published, whether it is the best on the same data or an anchor, and
    its `measure` where it averages entity F1 otherwise than the suite (None: the same measure)."""

    value: float
    source: str
    kind: str = "best published"
    measure: Optional[Measure] = None

    @property
    def label(self) -> str:
        """How a legend names it: `best published (Zöllner et al. 2021, Table 8)`."""
        return f"{self.kind} ({self.source})"

    @property
    def short(self) -> str:
        """The word written beside its line: `best` or `anchor`."""
        return self.kind.split()[0]


ANCHOR = "anchor"
MACRO_F1 = Measure("macro F1", "macro")
WITHOUT_MISC = Measure("F1 PER/LOC/ORG", "micro", frozenset({"per", "loc", "org"}))
# German: the best fine-tuned small BERT per column of Zöllner et al. 2021, Table 8 (its LCRFNER or CSE rows).
# Other languages: anchors from ../shared/papers/ANCHORS.md.
REFERENCES: dict[tuple[str, str], Reference] = {
    ("germeval14", ""): Reference(84.48, ZOELLNER_2021_TABLE8),
    ("sturm", ""): Reference(87.83, ZOELLNER_2021_TABLE8),
    ("arendt", ""): Reference(80.48, ZOELLNER_2021_TABLE8),
    ("ler", "coarse"): Reference(94.88, ZOELLNER_2021_TABLE8),
    ("ler", "fine"): Reference(94.55, ZOELLNER_2021_TABLE8),
    ("hipe-ajmc-de", ""): Reference(93.4, "HIPE-2022 AjMC German, NE-COARSE-LIT micro strict: L3i; second 91.3, the organisers' "
                                          "neural baseline 81.8 (hipe-eval/HIPE-2022-eval, HIPE_2022_evaluation_results.md)"),
    ("wnut17", ""): Reference(49.49, "Flair, crawl + twitter fastText + news LMs, mean of 5: flair EXPERIMENTS.md", ANCHOR),
    ("danish-ner", ""): Reference(81.78, "Flair on DaNE, another annotation of the same treebank, PER/ORG/LOC: DaNLP ner.md", ANCHOR, WITHOUT_MISC),
    ("dane", ""): Reference(81.78, "Flair on DaNE, PER/ORG/LOC averaged, MISC excluded: DaNLP ner.md", ANCHOR, WITHOUT_MISC),
    ("cluener", ""): Reference(70.00, "CLUENER2020 BiLSTM-CRF, macro F1 on the hidden official test (BERT-base 78.82): CLUEbenchmark", ANCHOR, MACRO_F1),
    ("ud-en-ewt", "xpos"): Reference(97.85, "Akbik et al. 2018, Penn Treebank WSJ, with ELMo (not EWT)", ANCHOR),
}
LABEL_OPTIONS = ("granularity", "tags")  # the dataset options that change what the labels are


def task(corpus: str, options: dict[str, str]) -> tuple[str, str]:
    """`("ler", {})` -> `("ler", "fine")`, `("ud-en-ewt", {"tags": "xpos"})` -> `("ud-en-ewt", "xpos")`: the corpus and the
    value of its label-changing option ("" when it has none)."""
    chosen = dataset(corpus, **options).options
    return corpus, next((chosen[key] for key in LABEL_OPTIONS if key in chosen), "")


def known_task(corpus: str, options: dict[str, str]) -> Optional[tuple[str, str]]:
    """`task()`, or None for a corpus the registry does not know (e.g. a user's own)."""
    try:
        return task(corpus, options)
    except FlairsuiteError:
        return None


def best_published(corpus: str, options: dict[str, str]) -> Optional[Reference]:
    """The reference score of a run's task (best published or anchor), or None where none is known."""
    key = known_task(corpus, options)
    return REFERENCES.get(key) if key else None
