"""The `transfer:` block of an experiment file: train the tagger on other labelled corpora first (sequential), or on them
and the corpus at once (joint), their entity types mapped to the corpus's (Riedl and Padó 2018).

    transfer:
      from: [sturm, arendt, {name: germeval14, splits: [dev, test]}]   # corpora entries (registered or own); default split: train
      types: {pers: pers, person: pers, PER: pers, place: loc, LOC: loc}   # source type -> target type; any other source type: O
      modes: [none, sequential, joint]     # a grid axis; `none` is the run without transfer (its id and fingerprint as without the block)
      source_train: {max_epochs: 10}       # optional: training settings of the sequential runs' source phase, after the run's own

A source entry is what `corpora:` takes (a name, `{name: ler, granularity: coarse, subsample: 0.1}`, an own corpus with
`path`) plus `splits`, and no training settings of its own. Everything is checked here, once, against the grid's corpora:
a mapped source type that no source declares, a target type that a corpus of the experiment lacks, a source that is a
corpus of the experiment (its dev and test must stay unseen) are one-line errors naming `transfer.<key>`. The runs
themselves (reading the sources, mapping their tags, the two phases) are `flairsuite.experiments.transfer`.
"""

from dataclasses import dataclass
from typing import Any, Callable, Optional

from flairsuite.corpora.own import corpus_record
from flairsuite.corpora.registry import SPLITS
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.models.settings import TrainSettings
from flairsuite.results.metrics_file import NO_TRANSFER, TRANSFER_SEGMENT  # the plain runs' mode; the id segment of the others
from flairsuite.settings_schema import checked_keys
from flairsuite.values import show

KEY = "transfer"
EXAMPLE = ("transfer: {from: [sturm, {name: germeval14, splits: [dev, test]}], types: {pers: pers, PER: pers, place: loc, LOC: loc}, "
           "modes: [none, sequential, joint]}")
FIELDS = ("from", "types", "modes", "source_train")
SEQUENTIAL, JOINT = "sequential", "joint"
MODES = (NO_TRANSFER, SEQUENTIAL, JOINT)
SOURCE_ONLY_KEYS = ("splits",)  # keys of a `from` entry that a corpora entry does not have
NOT_FOR_SOURCES = ("train", "tagger_train", "if_present")  # corpora-entry keys a source refuses (settings: source_train)


@dataclass(frozen=True)
class TransferSource:
    """One source corpus (a `corpora:` entry) and the splits read from it as training data."""

    corpus: CorpusChoice
    splits: tuple[str, ...] = ("train",)

    @property
    def label(self) -> str:
        """`sturm`, `germeval14 (dev+test)`: the corpus's label, its splits where they are not train alone."""
        return self.corpus.label if self.splits == ("train",) else f"{self.corpus.label} ({'+'.join(self.splits)})"

    def record(self) -> dict[str, Any]:
        """What the runs read from this source, for their fingerprints: the dataset and options (an own corpus: its files'
        checksums, as `own.corpus_record`), the train subsample and the splits."""
        record = {"corpus": self.corpus.name, "corpus_options": self.corpus.options, "subsample": self.corpus.subsample,
                  "splits": list(self.splits)}
        return {**record, "corpus_files": corpus_record(self.corpus.own)} if self.corpus.own is not None else record


@dataclass(frozen=True)
class Transfer:
    """A validated `transfer:` block: the sources, the type mapping in the file's order, the modes (a grid axis) and the
    training overrides of the sequential source phase."""

    sources: tuple[TransferSource, ...]
    types: tuple[tuple[str, str], ...]
    modes: tuple[str, ...]
    source_train: tuple[tuple[str, Any], ...] = ()

    @property
    def mapping(self) -> dict[str, str]:
        """Source type -> target type."""
        return dict(self.types)


@dataclass(frozen=True)
class TransferRun:
    """What one grid run transfers: its mode (sequential or joint; a `none` run has no TransferRun), the block, and the
    complete settings of its source phase (sequential: the run's settings with `source_train`; joint: none)."""

    mode: str
    transfer: Transfer
    source_settings: Optional[dict[str, Any]] = None

    @property
    def segment(self) -> str:
        """The run id's segment after the stack: `transfer-sequential`, `transfer-joint`."""
        return f"{TRANSFER_SEGMENT}{self.mode}"

    def record(self) -> dict[str, Any]:
        """The transfer as plain data for the run's fingerprint and metrics.json: mode, sources, mapping, source settings."""
        record = {"mode": self.mode, "sources": [source.record() for source in self.transfer.sources],
                  "types": {source: target for source, target in self.transfer.types}}
        if self.source_settings is not None:
            record["source_train"] = TrainSettings.fingerprinted(self.source_settings)
        return record


def transfer_run(transfer: Optional[Transfer], mode: str, settings: dict[str, Any]) -> Optional[TransferRun]:
    """The TransferRun of a grid run in `mode` whose own settings are `settings` (None for `none` or without a block)."""
    if transfer is None or mode == NO_TRANSFER:
        return None
    if mode != SEQUENTIAL:
        return TransferRun(mode, transfer)
    return TransferRun(mode, transfer, TrainSettings(**settings).overridden(dict(transfer.source_train)).record())


def _fail(key: str, message: str) -> FlairsuiteError:
    return FlairsuiteError(f"{KEY}.{key}: {message}")


def _modes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(mode, str) for mode in value):
        raise _fail("modes", f"list at least one of {', '.join(MODES)} (found {show(value)}), e.g. `modes: [none, sequential, joint]`")
    for mode in value:
        if mode not in MODES:
            raise _fail("modes", f"unknown mode {show(mode)} (known: {', '.join(MODES)})")
    repeated = [mode for i, mode in enumerate(value) if mode in value[:i]]
    if repeated:
        raise _fail("modes", f"{repeated[0]} is listed twice: remove one")
    if value == [NO_TRANSFER]:
        raise _fail("modes", "none alone trains no run with transfer: add sequential or joint, or remove the block")
    return tuple(value)


def _types(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise _fail("types", f"map source types to the corpus's types, e.g. `types: {{PER: pers, LOC: loc}}` (found {show(value)})")
    for source, target in value.items():
        if not isinstance(source, str) or not isinstance(target, str) or not source or not target:
            raise _fail("types", f"{show(source)}: {show(target)} is not a source type and a target type, e.g. `PER: pers`")
    return tuple(value.items())


def _splits(name: str, value: Any, corpus: CorpusChoice) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(split, str) for split in value):
        raise _fail("from", f"{name}: splits must list some of {', '.join(SPLITS)} (found {show(value)}), e.g. `splits: [dev, test]`")
    for split in value:
        if split not in SPLITS:
            raise _fail("from", f"{name}: unknown split {show(split)} (known: {', '.join(SPLITS)})")
        if corpus.own is None and split not in corpus.spec().splits:
            raise _fail("from", f"{name}: the dataset has no labelled {split} split (its splits: {', '.join(corpus.spec().splits)})")
    repeated = [split for i, split in enumerate(value) if split in value[:i]]
    if repeated:
        raise _fail("from", f"{name}: splits: {repeated[0]} is listed twice: remove one")
    if corpus.subsample is not None and "train" not in value:
        raise _fail("from", f"{name}: subsample takes a share of train, which splits does not name")
    return tuple(value)


def _source(entry: Any, read_corpus: Callable[[Any], CorpusChoice]) -> TransferSource:
    """One `from` entry: a corpora entry (read by `read_corpus`, the experiment's own reader) and its `splits`."""
    fields = entry if isinstance(entry, dict) else {"name": entry}
    name = str(fields.get("name") or fields.get("path"))
    for key in NOT_FOR_SOURCES:
        if key in fields and not (key == "train" and isinstance(fields[key], str) and "path" in fields):  # an own corpus's train file
            raise _fail("from", f"{name}: {key} is not for a source: its training settings are transfer.source_train")
    try:
        corpus = read_corpus({key: value for key, value in fields.items() if key not in SOURCE_ONLY_KEYS})
    except InputError:  # a bad line in an own corpus's file: that file and line
        raise
    except FlairsuiteError as err:
        raise _fail("from", str(err).removeprefix("corpora: ")) from None
    if not corpus.task.spans:
        raise _fail("from", f"{corpus.label} is {corpus.task.name} ({corpus.task.description}): a source needs entity types to map")
    return TransferSource(corpus, _splits(corpus.label, fields.get("splits", ["train"]), corpus))


def _same_corpus(a: CorpusChoice, b: CorpusChoice) -> bool:
    """Whether two entries read the same data: the same registered dataset (any options), or the same own folder."""
    if a.own is not None or b.own is not None:
        return a.own is not None and b.own is not None and a.own.folder == b.own.folder
    return a.name == b.name


def _sources(value: Any, corpora: list[CorpusChoice], read_corpus: Callable[[Any], CorpusChoice]) -> tuple[TransferSource, ...]:
    if not isinstance(value, list) or not value:
        raise _fail("from", f"list the source corpora, e.g. `from: [sturm, {{name: germeval14, splits: [dev, test]}}]` (found {show(value)})")
    sources = [_source(entry, read_corpus) for entry in value]
    for i, source in enumerate(sources):
        if any(_same_corpus(source.corpus, other.corpus) for other in sources[:i]):
            raise _fail("from", f"{source.corpus.label} is listed twice: list it once, with all the splits it gives")
        for corpus in corpora:
            if _same_corpus(source.corpus, corpus):
                raise _fail("from", f"{source.corpus.label} is a corpus of the experiment ('{corpus.label}'): its dev and test "
                                    "sentences must stay unseen, so it cannot be a source")
    return tuple(sources)


def _check_types(types: tuple[tuple[str, str], ...], sources: tuple[TransferSource, ...], corpora: list[CorpusChoice]) -> None:
    """Every mapped source type is declared by some source; every target type by every corpus of the experiment."""
    declared = {source.label: source.corpus.spec().output_types for source in sources}
    known = {kind for kinds in declared.values() for kind in kinds}
    for source_type, target_type in types:
        if source_type not in known:
            listed = "; ".join(f"{label}: {', '.join(kinds)}" for label, kinds in declared.items())
            raise _fail("types", f"{show(source_type)} is no type of the sources ({listed})")
        for corpus in corpora:
            if target_type not in corpus.spec().output_types:
                raise _fail("types", f"{source_type} -> {show(target_type)}: corpus '{corpus.label}' has no type {show(target_type)} "
                                     f"(its types: {', '.join(corpus.spec().output_types)})")


def parse_transfer(data: dict[str, Any], corpora: list[CorpusChoice], fine_tune: tuple[bool, ...],
                   read_corpus: Callable[[Any], CorpusChoice]) -> Optional[Transfer]:
    """The experiment's `transfer:` block checked against its corpora (None without one); `read_corpus`: the experiment's
    reader of a corpora entry (validation.py), so a source takes every key a corpus does. Problems are one-line errors."""
    if KEY not in data:
        return None
    example = f", e.g. `{EXAMPLE}`"
    block = checked_keys(data[KEY], FIELDS, ("from", "types", "modes"), where=KEY, hint=example,
                         examples={key: example for key in ("from", "types", "modes")})
    if "active_learning" in data:
        raise FlairsuiteError(f"{KEY}: an active_learning simulation retrains on the corpus alone: put the transfer in an experiment of its own")
    if True in fine_tune:
        raise FlairsuiteError(f"{KEY}: transfer runs train frozen stacks: remove `fine_tune: true`")
    tagging = [corpus.label for corpus in corpora if not corpus.task.spans]
    if tagging:
        raise FlairsuiteError(f"{KEY}: maps entity types, and corpus '{tagging[0]}' holds PoS tags: put it in an experiment without transfer")
    modes = _modes(block["modes"])
    types = _types(block["types"])
    sources = _sources(block["from"], corpora, read_corpus)
    _check_types(types, sources, corpora)
    source_train = TrainSettings.check_overrides(f"{KEY}.source_train", block.get("source_train"))
    if source_train and SEQUENTIAL not in modes:
        raise _fail("source_train", "only the sequential mode has a source phase: add sequential to transfer.modes or remove this key")
    return Transfer(sources, types, modes, tuple(source_train.items()))
