"""Experiment files: load and validate one YAML file into typed settings, and expand it into runs.

An experiment is the grid corpus x embedding stack (x fine-tuning) x tagger x seed (keys: experiments/README.md),
or the part of it that `only` keeps.
Every problem is a one-line error naming the file and the key, e.g.
`Error: experiments/t3.yaml: taggers: unknown tagger "bilstm" (known: bilstm-crf, bilstm512-crf, map-crf, map, ...)`.
"""

import fnmatch
import itertools
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional, Union

import yaml

from flairsuite.corpora.own import own_corpus
from flairsuite.corpora.registry import DatasetSpec, dataset, names
from flairsuite.corpora.tasks import LABELED_TASKS, Task, task
from flairsuite.embeddings import frozen, parse
from flairsuite.errors import FlairsuiteError, InputError, read_utf8, unknown_name_error
from flairsuite.models.registry import TAGGERS, fine_tune_train, tagger_spec
from flairsuite.models.settings import TrainSettings
from flairsuite.values import is_int, is_number, show

EXAMPLES = {
    "name": "name: sturm-table3",
    "corpora": "corpora: [sturm, {name: ler, granularity: coarse}]",
    "embeddings": "embeddings: {proposed: [charlm:de-forward, charlm:de-backward]}",
    "taggers": "taggers: [bilstm-crf, map-crf, map]",
    "seeds": "seeds: [1, 2, 3]",
    "train": "train: {max_epochs: 20}",
    "tagger_train": "tagger_train: {map: {learning_rate: 0.05}}",
    "entity_fix": "entity_fix: [false, true]",
    "fine_tune": "fine_tune: [false, true]",
    "fine_tune_train": "fine_tune_train: {max_epochs: 50}",
    "only": "only: ['*/proposed+word/bilstm-crf/*', '*/bert/ft/lcrf-ner/*']",
}
KEYS = tuple(EXAMPLES)
REQUIRED = ("name", "corpora", "embeddings", "taggers", "seeds")
SUBSAMPLE = "subsample"
CORPUS_TRAIN = ("train", "tagger_train")  # keys of a corpora entry that override the run's settings on that corpus
DEV_FRACTION = "dev_fraction"
IF_PRESENT = "if_present"  # a registered set the user supplies (GermEval's train): its runs join once its files are there
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
SAFE_NAME_RULE = "letters, digits and . _ + - (starting with a letter or digit)"
MAX_SEED = 2**32  # numpy's seed range, which flair.set_seed uses
FINE_TUNED = "ft"  # the path component of fine-tuned runs, after the stack's


@dataclass(frozen=True)
class CorpusChoice:
    """A dataset of the registry with the options that differ from its defaults, or an own corpus (`own`), and an optional train subsample."""

    name: str
    options: dict[str, str]
    subsample: Optional[float] = None
    own: Optional[DatasetSpec] = field(default=None, repr=False)
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


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment file; `train` and `tagger_train` hold only the overrides it names (checked by `TrainSettings`)."""

    name: str
    corpora: list[CorpusChoice]
    embeddings: dict[str, tuple[str, ...]]
    taggers: list[str]
    seeds: list[int]
    train: dict[str, Any]
    tagger_train: dict[str, dict[str, Any]]
    entity_fix: tuple[bool, ...] = (False,)
    fine_tune: tuple[bool, ...] = (False,)
    fine_tune_train: dict[str, Any] = field(default_factory=dict)
    only: tuple[str, ...] = ()  # run-id patterns: the grid keeps the runs matching one (none: every run)


@dataclass(frozen=True)
class Run:
    """One cell of the grid, with its complete training settings (`train_settings`: a `TrainSettings` as a plain dict)."""

    experiment: str
    corpus: CorpusChoice
    embeddings: str
    embedding_specs: tuple[str, ...]
    tagger: str
    seed: int
    train_settings: dict[str, Any]
    entity_fix: tuple[bool, ...] = (False,)
    fine_tune: bool = False

    @property
    def run_id(self) -> str:
        """The run's folder below results/<experiment>/, e.g. `sturm/proposed+word/map-crf/seed-1`; fine-tuned: `sturm/bert/ft/map/seed-1`."""
        return f"{self.corpus.key}/{self.embeddings}/{FINE_TUNED + '/' if self.fine_tune else ''}{self.tagger}/seed-{self.seed}"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names a key twice (plain YAML keeps the last), and
    reading numbers as YAML 1.2 does: `5e-5` and `1e3` are floats (YAML 1.1 wants `5.0e-5`)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Hashable] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, Hashable):
            continue  # construct_mapping reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}': each name may appear once", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
# SafeLoader's float pattern with the dot optional; the resolver keeps a per-class copy of the table
_UniqueKeyLoader.yaml_implicit_resolvers = {key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _read_yaml(path: Path) -> Any:
    text = read_utf8(path, "experiment file")
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        raise InputError(path, line, f"not valid YAML: {err.problem}") from None
    except yaml.YAMLError as err:
        raise InputError(path, None, f"not valid YAML: {err}") from None


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise FlairsuiteError(f"key '{key}' must be a list, e.g. `{EXAMPLES[key]}`")
    if not value:
        raise FlairsuiteError(f"key '{key}' is empty: list at least one, e.g. `{EXAMPLES[key]}`")
    return value


def _no_repeats(key: str, items: list[Any]) -> None:
    repeated = [item for i, item in enumerate(items) if item in items[:i]]
    if repeated:
        raise FlairsuiteError(f"{key}: {repeated[0]} is listed twice: remove one")


def _safe_name(key: str, value: Any) -> str:
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        raise FlairsuiteError(f"{key}: {show(value)} is not a usable folder name: use {SAFE_NAME_RULE}")
    return value


def _subsample(name: str, value: Any) -> Optional[float]:
    if value is None:
        return None
    if not is_number(value) or not 0 < value <= 1:
        raise FlairsuiteError(
            f"corpora: {name}: subsample must be a fraction of train in (0, 1], e.g. 0.1 (found {show(value)})"
        )
    return None if value == 1 else float(value)


def _own_corpus(entry: dict[str, Any], base: Path) -> CorpusChoice:
    """An entry with `path`: the corpus in that folder (flairsuite/corpora/own.py); bad lines in its files raise InputError as they are.

    `train` names the train file when it is a string (as `dev` and `test` do) and holds the corpus's training overrides
    when it is a mapping, as for a registered set."""
    names_file = isinstance(entry.get("train"), str)
    folder_keys = {key: value for key, value in entry.items() if key not in (SUBSAMPLE, *CORPUS_TRAIN) or (key == "train" and names_file)}
    try:
        spec = own_corpus(folder_keys, base)
        _safe_name(f"{entry['path']}: name", spec.name)
    except InputError:
        raise
    except FlairsuiteError as err:
        raise FlairsuiteError(f"corpora: {err}") from None
    overrides = {key: value for key, value in entry.items() if not (key == "train" and names_file)}
    return CorpusChoice(spec.name, {}, _subsample(spec.name, entry.get(SUBSAMPLE)), own=spec, **_corpus_train(spec.name, overrides))


def _corpus(entry: Any, base: Path) -> CorpusChoice:
    if isinstance(entry, str):
        entry = {"name": entry}
    if isinstance(entry, dict) and "path" in entry:
        return _own_corpus(entry, base)
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise FlairsuiteError(
            f"corpora: entry {show(entry)} needs a dataset name or a folder, as `sturm`, `{{name: ler, granularity: coarse}}` "
            "or `{name: letters, path: data/letters/}`"
        )
    options = {key: value for key, value in entry.items() if key not in ("name", SUBSAMPLE, DEV_FRACTION, IF_PRESENT, *CORPUS_TRAIN)}
    name = entry["name"]
    try:
        spec = dataset(name, **{str(key): str(value) for key, value in options.items()})
    except FlairsuiteError as err:
        raise FlairsuiteError(f"corpora: {err}") from None
    dev_fraction = _dev_fraction(spec, entry.get(DEV_FRACTION)) if DEV_FRACTION in entry else None
    if spec.task not in LABELED_TASKS:
        labeled = ", ".join(n for n in names() if dataset(n).task in LABELED_TASKS)
        raise FlairsuiteError(f"corpora: '{name}' is a raw-text set for language models, not a labeled corpus: use one of {labeled}")
    if dev_fraction is None and "test" not in spec.splits:
        raise FlairsuiteError(
            f"corpora: '{name}' has no labeled test split ({spec.unlabeled_test or 'none'}): add dev_fraction, e.g. "
            f"{{name: {name}, dev_fraction: 0.1}}, to select models on that share of train and report on its dev split"
        )
    defaults = dataset(name).options
    chosen = {key: value for key, value in spec.options.items() if value != defaults[key]}
    if_present = entry.get(IF_PRESENT, False)
    if not isinstance(if_present, bool):
        raise FlairsuiteError(f"corpora: {name}: {IF_PRESENT} must be true or false (found {show(if_present)})")
    return CorpusChoice(name, chosen, _subsample(name, entry.get(SUBSAMPLE)), dev_fraction=dev_fraction, **_corpus_train(name, entry),
                        if_present=if_present)


def _corpus_train(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A corpora entry's own `train` and `tagger_train` overrides (e.g. an epoch cap for a large corpus), checked."""
    tagger_train = entry.get("tagger_train") or {}
    if not isinstance(tagger_train, dict):
        raise FlairsuiteError(f"corpora: {name}: tagger_train must map taggers to settings, e.g. `{EXAMPLES['tagger_train']}`")
    return {"train": TrainSettings.check_overrides(f"corpora: {name}: train", entry.get("train")),
            "tagger_train": _tagger_settings(tagger_train, f"corpora: {name}: tagger_train")}


def _dev_fraction(spec: DatasetSpec, value: Any) -> float:
    """`dev_fraction` of a registered set: only for one without a labeled test split, a share of train in (0, 1)."""
    if "test" in spec.splits:
        raise FlairsuiteError(f"corpora: {spec.name}: dev_fraction is for datasets without a labeled test split (e.g. cluener) and own corpora")
    if not is_number(value) or not 0 < value < 1:
        raise FlairsuiteError(f"corpora: {spec.name}: dev_fraction must be a share of train in (0, 1), e.g. 0.1 (found {show(value)})")
    return float(value)


def _corpora(data: dict[str, Any], base: Path) -> list[CorpusChoice]:
    corpora = [_corpus(entry, base) for entry in _list(data, "corpora")]
    _no_repeats("corpora", [f"'{corpus.label}'" for corpus in corpora])
    by_folder: dict[str, CorpusChoice] = {}
    for corpus in corpora:
        first = by_folder.setdefault(corpus.key, corpus)
        if first is not corpus:
            raise FlairsuiteError(
                f"corpora: '{first.label}' and '{corpus.label}' would share the run folder '{corpus.key}': give the own corpus another name"
            )
    return corpora


def _stack(name: str, specs: Any) -> tuple[str, ...]:
    if not isinstance(specs, list) or not specs or not all(isinstance(spec, str) for spec in specs):
        raise FlairsuiteError(f"embeddings: '{name}' must be a non-empty list of embedding specs, e.g. [fasttext:de]")
    for spec in specs:
        try:
            parse(spec)
        except FlairsuiteError as err:
            raise FlairsuiteError(f"embeddings: {name}: {err}") from None
    _no_repeats(f"embeddings: {name}", specs)
    return tuple(specs)


def _embeddings(data: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    value = data["embeddings"]
    if not isinstance(value, dict) or not value:
        raise FlairsuiteError(f"key 'embeddings' must name at least one stack, e.g. `{EXAMPLES['embeddings']}`")
    stacks = {_safe_name("embeddings", name): _stack(name, specs) for name, specs in value.items()}
    same = [(a, b) for (a, x), (b, y) in itertools.combinations(stacks.items(), 2) if x == y]
    if same:
        raise FlairsuiteError(f"embeddings: stacks '{same[0][0]}' and '{same[0][1]}' are the same: remove one")
    return stacks


def _taggers(data: dict[str, Any]) -> list[str]:
    taggers = _list(data, "taggers")
    for tagger in taggers:
        if tagger not in TAGGERS:
            raise FlairsuiteError(f"taggers: unknown tagger {show(tagger)} (known: {', '.join(TAGGERS)})")
    _no_repeats("taggers", taggers)
    return taggers


def _seeds(data: dict[str, Any]) -> list[int]:
    seeds = _list(data, "seeds")
    for seed in seeds:
        if not is_int(seed) or not 0 <= seed < MAX_SEED:
            raise FlairsuiteError(f"seeds: {show(seed)} is not an integer seed (0 to 2^32 - 1), e.g. `{EXAMPLES['seeds']}`")
    _no_repeats("seeds", seeds)
    return seeds


def _entity_fix(data: dict[str, Any]) -> tuple[bool, ...]:
    if "entity_fix" not in data:
        return (False,)
    values = _list(data, "entity_fix")
    if not all(isinstance(value, bool) for value in values):
        raise FlairsuiteError(f"entity_fix: list true and/or false, e.g. `{EXAMPLES['entity_fix']}`")
    _no_repeats("entity_fix", values)
    return tuple(values)


def tunable(specs: tuple[str, ...]) -> bool:
    """Whether fine-tuning changes the stack `specs`: one of its embeddings is fixed unless the tagger fine-tunes (`bert:`)."""
    return any(frozen(spec) and not frozen(spec, fine_tune=True) for spec in specs)


def _fine_tune(data: dict[str, Any], stacks: dict[str, tuple[str, ...]]) -> tuple[bool, ...]:
    if "fine_tune" not in data:
        return (False,)
    value = data["fine_tune"]
    values = _list(data, "fine_tune") if isinstance(value, list) else [value]
    if not all(isinstance(v, bool) for v in values):
        raise FlairsuiteError(f"fine_tune: write true, false or a list of them, e.g. `{EXAMPLES['fine_tune']}`")
    _no_repeats("fine_tune", [show(v) for v in values])
    if True in values:
        plain = [name for name, specs in stacks.items() if not tunable(specs)]
        if len(plain) == len(stacks):
            raise FlairsuiteError("fine_tune: true needs a stack with a bert: embedding to fine-tune, e.g. `embeddings: {bert: [bert:de-cpu]}`")
        if False not in values and plain:
            raise FlairsuiteError(f"fine_tune: stack '{plain[0]}' has no bert: embedding to fine-tune: add false to fine_tune or remove the stack")
    return tuple(values)


def _fine_tune_train(data: dict[str, Any], fine_tune: tuple[bool, ...]) -> dict[str, Any]:
    if "fine_tune_train" in data and True not in fine_tune:
        raise FlairsuiteError("fine_tune_train: no run fine-tunes: add `fine_tune: true` or remove this key")
    return TrainSettings.check_overrides("fine_tune_train", data.get("fine_tune_train"))


def _tagger_train(data: dict[str, Any], taggers: list[str]) -> dict[str, dict[str, Any]]:
    value = data.get("tagger_train") or {}
    if not isinstance(value, dict):
        raise FlairsuiteError(f"key 'tagger_train' must map taggers to settings, e.g. `{EXAMPLES['tagger_train']}`")
    _only_listed_taggers(value, taggers, "tagger_train")
    return _tagger_settings(value, "tagger_train")


def _only_listed_taggers(overrides: dict[str, Any], taggers: list[str], where: str) -> None:
    """Settings may be given only for taggers of the grid (`where`: the key holding them)."""
    for tagger in overrides:
        if tagger not in taggers:
            raise FlairsuiteError(f"{where}: {show(tagger)} is not in taggers ({', '.join(taggers)}): add it there or remove this entry")


def _tagger_settings(overrides: dict[Any, Any], where: str) -> dict[str, dict[str, Any]]:
    """Tagger -> its training overrides, each checked (`where`: the key holding them, for errors)."""
    return {str(tagger): TrainSettings.check_overrides(f"{where}.{tagger}", settings) for tagger, settings in overrides.items()}


def _only(data: dict[str, Any]) -> tuple[str, ...]:
    if "only" not in data:
        return ()
    patterns = _list(data, "only")
    bad = [pattern for pattern in patterns if not isinstance(pattern, str) or not pattern.strip()]
    if bad:
        raise FlairsuiteError(f"only: {show(bad[0])} is not a run-id pattern, e.g. `{EXAMPLES['only']}`")
    _no_repeats("only", patterns)
    return tuple(patterns)


def _check_tasks(corpora: list[CorpusChoice], taggers: list[str], entity_fix: tuple[bool, ...]) -> None:
    """Span-only taggers and Entity-Fix need NER corpora: with a PoS corpus they are a one-line error."""
    tagging = [corpus for corpus in corpora if not corpus.task.spans]
    if not tagging:
        return
    corpus = tagging[0]
    spans_only = [tagger for tagger in taggers if tagger_spec(tagger).spans_only]
    if spans_only:
        usable = ", ".join(name for name, spec in TAGGERS.items() if not spec.spans_only)
        raise FlairsuiteError(
            f"taggers: {spans_only[0]} tags entity spans only, and corpus '{corpus.label}' is {corpus.task.name} "
            f"({corpus.task.description}): use {usable}, or put the NER and {corpus.task.name} corpora in separate experiments"
        )
    if True in entity_fix:
        raise FlairsuiteError(
            f"entity_fix: Entity-Fix repairs BIO entity tags, and corpus '{corpus.label}' is {corpus.task.name} "
            f"({corpus.task.description}): remove true from entity_fix or the corpus"
        )


def _config(data: Any, base: Path) -> ExperimentConfig:
    if not isinstance(data, dict):
        raise FlairsuiteError(f"must be a mapping with the keys {', '.join(REQUIRED)} (see experiments/README.md)")
    for key in data:
        if key not in KEYS:
            raise unknown_name_error("key", str(key), list(KEYS))
    for key in REQUIRED:
        if key not in data:
            raise FlairsuiteError(f"missing key '{key}': add e.g. `{EXAMPLES[key]}`")
    taggers = _taggers(data)
    corpora, stacks = _corpora(data, base), _embeddings(data)
    fine_tune, entity_fix = _fine_tune(data, stacks), _entity_fix(data)
    _check_tasks(corpora, taggers, entity_fix)
    for corpus in corpora:
        _only_listed_taggers(corpus.tagger_train, taggers, f"corpora: {corpus.label}: tagger_train")
    config = ExperimentConfig(
        name=_safe_name("name", data["name"]),
        corpora=corpora,
        embeddings=stacks,
        taggers=taggers,
        seeds=_seeds(data),
        train=TrainSettings.check_overrides("train", data.get("train")),
        tagger_train=_tagger_train(data, taggers),
        entity_fix=entity_fix,
        fine_tune=fine_tune,
        fine_tune_train=_fine_tune_train(data, fine_tune),
        only=_only(data),
    )
    grid = cross(config)
    unmatched = match_runs(grid, config.only)[1]
    if unmatched:  # a mistyped pattern would silently leave its runs out
        raise FlairsuiteError(f"only: {unmatched[0]} matches no run of the grid (run ids look like {grid[0].run_id})")
    return config


def load_experiment(path: Union[str, Path]) -> ExperimentConfig:
    """Read and validate the experiment file `path`; a problem is a one-line error naming the file and key.

    Own corpora (`path:` entries) are read here, relative to the file's folder: a bad line in one
    of their files is an error naming that file and line.
    """
    path = Path(path)
    data = _read_yaml(path)
    try:
        return _config(data, path.parent)
    except InputError:
        raise
    except FlairsuiteError as err:
        raise InputError(path, None, str(err)) from None


def train_settings(config: ExperimentConfig, tagger: str, corpus: Optional[CorpusChoice] = None, fine_tune: bool = False) -> dict[str, Any]:
    """The settings of a run as a plain dict (fingerprinted as it is; `TrainSettings.record`).

    Frozen: the tagger's defaults, overridden by `train`, then by `tagger_train[tagger]`, then by the
    corpus entry's own `train` and `tagger_train[tagger]` (e.g. an epoch cap on full LER). Fine-tuned:
    the fine-tuning defaults for the corpus (`registry.fine_tune_train`), overridden by `fine_tune_train`.
    """
    if fine_tune:
        dataset_name = corpus.name if corpus is not None and corpus.own is None else ""
        return fine_tune_train(dataset_name).overridden(config.fine_tune_train).record()
    own: tuple[dict[str, Any], ...] = () if corpus is None else (corpus.train, corpus.tagger_train.get(tagger, {}))
    return tagger_spec(tagger).train.overridden(config.train, config.tagger_train.get(tagger, {}), *own).record()


def runs(config: ExperimentConfig) -> list[Run]:
    """The runs of the experiment, in the file's order: the `cross` product, or the part of it that `only` keeps."""
    grid = cross(config)
    return match_runs(grid, config.only)[0] if config.only else grid


def match_runs(grid: list[Run], patterns: Sequence[str]) -> tuple[list[Run], list[str]]:
    """The runs whose id matches one of the shell-style `patterns`, and the patterns that match none."""
    unmatched = [pattern for pattern in patterns if not any(fnmatch.fnmatchcase(run.run_id, pattern) for run in grid)]
    return [run for run in grid if any(fnmatch.fnmatchcase(run.run_id, pattern) for pattern in patterns)], unmatched


def cross(config: ExperimentConfig) -> list[Run]:
    """Every run of the grid corpus x embedding stack x fine-tuning x tagger x seed, in the file's order.

    Fine-tuned runs only for stacks that fine-tuning changes (`tunable`).
    """
    return [
        Run(config.name, corpus, stack, config.embeddings[stack], tagger, seed, train_settings(config, tagger, corpus, tune),
            config.entity_fix, tune)
        for corpus, stack, tune, tagger, seed in itertools.product(config.corpora, config.embeddings, config.fine_tune, config.taggers, config.seeds)
        if not tune or tunable(config.embeddings[stack])
    ]
