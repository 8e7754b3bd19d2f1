"""One corpus of an experiment: a registered dataset with its options, or an own corpus, and how it is named in run ids
and tables (`CorpusChoice`). The experiment config (`config.py`) holds a list of them; adaptation (`adaptation.py`) cuts
their dev and test sentences out of its text."""

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from flairsuite.corpora.registry import DatasetSpec, dataset
from flairsuite.corpora.tasks import Task, task


@dataclass(frozen=True)
class CorpusChoice:
    """A dataset of the registry with the options that differ from its defaults, or an own corpus (`own`), and an optional train subsample."""

    name: str
    options: dict[str, str]
    subsample: Optional[float] = None
    own: Optional[DatasetSpec] = field(default=None, repr=False)
    own_entry: Optional[dict[str, Any]] = field(default=None, repr=False, compare=False)  # its reading keys, `path` absolute
    dev_fraction: Optional[float] = None  # a registered set without a labeled test split: dev from train, its dev as test
    train: dict[str, Any] = field(default_factory=dict)  # the entry's own `train` overrides, after the experiment's
    tagger_train: dict[str, dict[str, Any]] = field(default_factory=dict)  # and its `tagger_train`, applied last
    if_present: bool = False  # runs on it are left out while a split's file is missing (not part of a run's identity)

    def spec(self) -> DatasetSpec:
        """What the loaders read: the registry entry with the options, or the own corpus's spec.

        With `dev_fraction` (a dataset whose test labels are hidden, e.g. CLUENER): dev is that share
        of train (fixed, seeded) and the dataset's official dev split is read as test.
        """
        if self.own is not None:
            return self.own
        spec = dataset(self.name, **self.options)
        if self.dev_fraction is None:
            return spec
        splits = {"train": spec.splits["train"], "test": spec.splits["dev"]}
        return replace(spec, splits=splits, dev_fraction=self.dev_fraction)

    def missing_splits(self, root: Path) -> list[str]:
        """The splits the loaders read whose file is not under `root` (a registered set; own corpora are read at load)."""
        if self.own is not None:
            return []
        spec = self.spec()
        return [split for split, entry in spec.splits.items() if spec.locate(entry, root) is None]

    @property
    def split_note(self) -> Optional[str]:
        """How the splits differ from the dataset's own, for metrics and table footnotes (None: they do not)."""
        if self.dev_fraction is None or self.own is not None:
            return None
        return (f"dev is {self.dev_fraction * 100:g}% of train (fixed sample, seed 1) for model selection; "
                "test is the official dev split (the test labels are hidden)")

    @property
    def train_note(self) -> Optional[str]:
        """The entry's own training overrides, for metrics and table footnotes (None: it has none), e.g. `max_epochs 10`.

        `flairsuite.results.tables.merged_train_note` reads this format back (tests/test_results.py checks the two agree)."""
        parts = [", ".join(f"{key} {value}" for key, value in self.train.items())] if self.train else []
        parts += [f"{tagger}: " + ", ".join(f"{key} {value}" for key, value in settings.items())
                  for tagger, settings in self.tagger_train.items() if settings]
        return f"trained with {'; '.join(parts)} on this corpus" if parts else None

    @property
    def task(self) -> Task:
        """What the corpus's tags are (NER spans, PoS tags) and how runs on it are scored."""
        return task(self.spec().task)

    def _parts(self, percent_format: str, dev_format: str) -> list[str]:
        percent = [percent_format.format(f"{self.subsample * 100:g}")] if self.subsample is not None else []
        dev = [dev_format.format(f"{self.dev_fraction * 100:g}")] if self.dev_fraction is not None and self.own is None else []
        return [*self.options.values(), *dev, *percent]

    @property
    def label(self) -> str:
        """Table column name: `sturm`, `ler (coarse)`, `ler (coarse, 10% train)`, `cluener (dev 10% of train)`."""
        parts = self._parts("{}% train", "dev {}% of train")
        return f"{self.name} ({', '.join(parts)})" if parts else self.name

    @property
    def key(self) -> str:
        """Folder name of the corpus in run ids: `sturm`, `ler-coarse`, `ler-coarse-10pct`, `cluener-dev10pct`."""
        return "-".join([self.name, *self._parts("{}pct", "dev{}pct")])
