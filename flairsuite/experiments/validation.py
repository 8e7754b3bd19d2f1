"""Validation of an experiment file's keys into an `ExperimentConfig` (experiments/config.py).

Every problem is a one-line error naming the key, with an example of a good value, e.g.
`taggers: unknown tagger "bilstm" (known: bilstm-crf, bilstm512-crf, map-crf, map, ...)`; `experiments/reading.py`
prefixes the file. Training settings are checked by `TrainSettings` (flairsuite/settings_schema.py), a corpora entry's
reading keys (own corpora: `path`, format, scheme, ...) by `flairsuite.corpora.own`.
"""

import itertools
import re
from pathlib import Path
from typing import Any, Optional

from flairsuite.corpora.own import DEV_SHARE, own_corpus
from flairsuite.corpora.registry import DatasetSpec, dataset, names
from flairsuite.corpora.tasks import LABELED_TASKS
from flairsuite.embeddings import parse
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.adaptation_settings import EXAMPLE as ADAPT_EXAMPLE
from flairsuite.experiments.adaptation_settings import parse_adaptation
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.grid import cross, match_runs, tunable
from flairsuite.experiments.self_training_settings import EXAMPLE as SELF_TRAINING_EXAMPLE
from flairsuite.experiments.self_training_settings import parse_self_training
from flairsuite.experiments.simulation_settings import EXAMPLE as ACTIVE_LEARNING_EXAMPLE
from flairsuite.experiments.simulation_settings import parse_active_learning
from flairsuite.experiments.transfer_settings import EXAMPLE as TRANSFER_EXAMPLE
from flairsuite.experiments.transfer_settings import parse_transfer
from flairsuite.models.registry import TAGGERS, tagger_spec
from flairsuite.models.settings import TrainSettings
from flairsuite.settings_schema import FLAG, Rule, checked_keys, interval, refusal
from flairsuite.values import is_int, show

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
    "active_learning": ACTIVE_LEARNING_EXAMPLE,
    "adapt": ADAPT_EXAMPLE,
    "self_training": SELF_TRAINING_EXAMPLE,
    "transfer": TRANSFER_EXAMPLE,
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
SEED = Rule("an integer seed (0 to 2^32 - 1)", lambda v: is_int(v) and 0 <= v < MAX_SEED)
SUBSAMPLE_SHARE = interval(0, 1, low_open=True, high_open=False)


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
    if not SUBSAMPLE_SHARE(value):
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
    reading = {**{key: value for key, value in folder_keys.items() if key != "name"}, "path": spec.folder}
    return CorpusChoice(spec.name, {}, _subsample(spec.name, entry.get(SUBSAMPLE)), own=spec, own_entry=reading,
                        **_corpus_train(spec.name, overrides))


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
    if not FLAG(if_present):
        raise FlairsuiteError(f"corpora: {name}: {refusal(IF_PRESENT, FLAG, if_present)}")
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
    if not DEV_SHARE(value):
        raise FlairsuiteError(f"corpora: {spec.name}: {refusal(DEV_FRACTION, DEV_SHARE, value)}")
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
        if not SEED(seed):
            raise FlairsuiteError(f"seeds: {show(seed)} is not {SEED.description}, e.g. `{EXAMPLES['seeds']}`")
    _no_repeats("seeds", seeds)
    return seeds


def _entity_fix(data: dict[str, Any]) -> tuple[bool, ...]:
    if "entity_fix" not in data:
        return (False,)
    values = _list(data, "entity_fix")
    if not all(FLAG(value) for value in values):
        raise FlairsuiteError(f"entity_fix: list true and/or false, e.g. `{EXAMPLES['entity_fix']}`")
    _no_repeats("entity_fix", values)
    return tuple(values)


def _fine_tune(data: dict[str, Any], stacks: dict[str, tuple[str, ...]]) -> tuple[bool, ...]:
    if "fine_tune" not in data:
        return (False,)
    value = data["fine_tune"]
    values = _list(data, "fine_tune") if isinstance(value, list) else [value]
    if not all(FLAG(v) for v in values):
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


def validated_config(data: Any, base: Path) -> ExperimentConfig:
    """The experiment of the raw mapping `data` (own corpora relative to `base`), every key checked."""
    checked_keys(data, KEYS, REQUIRED, hint=f" with the keys {', '.join(REQUIRED)} (see experiments/README.md)",
                 examples={key: f": add e.g. `{example}`" for key, example in EXAMPLES.items()})
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
        active_learning=parse_active_learning(data, taggers, fine_tune),
        adaptation=parse_adaptation(data, base, corpora, _safe_name),
        self_training=parse_self_training(data, base, taggers, stacks, fine_tune),
        transfer=parse_transfer(data, corpora, fine_tune, lambda entry: _corpus(entry, base)),
    )
    grid = cross(config)
    unmatched = match_runs(grid, config.only)[1]
    if unmatched:  # a mistyped pattern would silently leave its runs out
        raise FlairsuiteError(f"only: {unmatched[0]} matches no run of the grid (run ids look like {grid[0].run_id})")
    return config
