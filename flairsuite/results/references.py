"""Published scores to aim at, per task: the one table the plots (and Table 8) read reference values from.

A task is a corpus with the option that changes its labels, `(corpus, granularity or tags)` with ""
for corpora without one, e.g. `("ler", "coarse")`, `("ud-en-ewt", "xpos")`; `task()` derives it
from a run's `corpus` and `corpus_options` columns (the registry's default fills an option a run
left out). Values are test scores in percent: entity F1 for NER, token accuracy for PoS.

Each reference is a "best published" result on the same data (the German columns: Zöllner et al.
2021, Table 8) or an "anchor": a published number to read ours beside that is not on the same data
or not by the same measure, its source saying how it differs (`../shared/papers/ANCHORS.md`).
"""

from typing import NamedTuple, Optional

from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError

ZOELLNER_2021_TABLE8 = "Zöllner et al. 2021, Table 8"


class Reference(NamedTuple):
    """A published score (percent), where it is published, and whether it is the best on the same data or an anchor."""

    value: float
    source: str
    kind: str = "best published"

    @property
    def label(self) -> str:
        """How a legend names it: `best published (Zöllner et al. 2021, Table 8)`."""
        return f"{self.kind} ({self.source})"

    @property
    def short(self) -> str:
        """The word written beside its line: `best` or `anchor`."""
        return self.kind.split()[0]


ANCHOR = "anchor"
# German: the best fine-tuned small BERT per column of Zöllner et al. 2021, Table 8 (its LCRFNER or CSE rows).
# Other languages: anchors from ../shared/papers/ANCHORS.md.
REFERENCES: dict[tuple[str, str], Reference] = {
    ("sturm", ""): Reference(87.83, ZOELLNER_2021_TABLE8),
    ("arendt", ""): Reference(80.48, ZOELLNER_2021_TABLE8),
    ("ler", "coarse"): Reference(94.88, ZOELLNER_2021_TABLE8),
    ("ler", "fine"): Reference(94.55, ZOELLNER_2021_TABLE8),
    ("wnut17", ""): Reference(49.49, "Flair, crawl + twitter fastText + news LMs, mean of 5: flair EXPERIMENTS.md", ANCHOR),
    ("danish-ner", ""): Reference(81.78, "Flair on DaNE, another annotation of the same treebank, PER/ORG/LOC: DaNLP ner.md", ANCHOR),
    ("dane", ""): Reference(81.78, "Flair on DaNE, PER/ORG/LOC averaged, MISC excluded: DaNLP ner.md", ANCHOR),
    ("cluener", ""): Reference(70.00, "CLUENER2020 BiLSTM-CRF, macro F1 on the hidden official test (BERT-base 78.82): CLUEbenchmark", ANCHOR),
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
