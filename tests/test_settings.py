"""One settings mechanism (flairsuite/settings_schema.py), one YAML reader (flairsuite/files/yaml_file.py), one reader of
summary.json (flairsuite/files/summary_file.py) and of metrics.json (flairsuite/results/metrics_file.py)."""

import json
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from flairsuite.bert.settings import BertSettings, settings_from
from flairsuite.charlm.recipes import recipe
from flairsuite.charlm.settings import Hyper
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.files.summary_file import read_summary_file, write_summary
from flairsuite.files.yaml_file import parse_yaml
from flairsuite.lexicon.settings import SETTINGS, DiscoverySettings
from flairsuite.models.settings import TrainSettings
from flairsuite.rawtext.settings import PrepareConfig
from flairsuite.results.metrics_file import SCHEMA_VERSION, read_run, write_metrics
from flairsuite.settings_schema import RULE, CheckedSettings
from flairsuite.wordvectors.settings import FastTextConfig

ROOT = Path(__file__).resolve().parent.parent


def valid_settings() -> list[CheckedSettings]:
    """One valid object of every settings class."""
    hyper = {key: value for key, value in recipe("de", "cpu").items() if key in Hyper.keys()}
    return [TrainSettings(), settings_from("cpu", {}), Hyper(**hyper), PrepareConfig(language="de"), SETTINGS["words"], FastTextConfig()]


def integer_fields(settings: CheckedSettings) -> list[str]:
    """The settings whose rule asks for an integer (a valid value of theirs is one, not a bool)."""
    rules = {f.name: f.metadata[RULE].description for f in fields(settings)}  # type: ignore[arg-type]
    return [name for name, words in rules.items() if "integer" in words or "at least" in words]


@pytest.mark.parametrize("settings", valid_settings(), ids=lambda s: type(s).__name__)
def test_every_settings_object_refuses_fractions_and_bools_for_integers(settings: CheckedSettings) -> None:
    names = integer_fields(settings)
    assert names, f"{type(settings).__name__} declares no integer setting"
    for name in names:
        for bad in (2.5, 3.0, True):
            with pytest.raises(FlairsuiteError) as info:
                replace(settings, **{name: bad})  # type: ignore[type-var]
            message = str(info.value)
            assert "\n" not in message and type(settings).wording.name(type(settings).shown_name(name)) in message  # named as the user writes it
            assert "integer" in message or "at least" in message


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: TrainSettings(max_epochs=2.5), "max_epochs must be a positive integer (found 2.5)"),
        (lambda: TrainSettings.check_overrides("train", {"patience": 1.5}), "train.patience must be a non-negative integer (found 1.5)"),
        (lambda: settings_from("cpu", {"layers": 2.5}), "--layers must be a positive integer (found 2.5)"),
        (lambda: settings_from("cpu", {"seq_len": 4}), "--sequence-length must be at least 8 (found 4)"),
        (lambda: replace(valid_settings()[2], hidden_size=2.5), "--hidden-size must be a positive integer (found 2.5)"),
        (lambda: PrepareConfig(language="de", seed=1.5), "--seed must be an integer (found 1.5)"),
        (lambda: DiscoverySettings(shortest=2.5, longest=3), "--shortest must be a positive integer (found 2.5)"),
        (lambda: DiscoverySettings(shortest=1, longest=3, keep_by="size"), '--keep-by must be one of: all, length (found "size")'),
        (lambda: DiscoverySettings(shortest=4, longest=3), "--shortest 4 is above --longest 3"),
    ],
)
def test_refusals_are_one_line_messages(make: Any, message: str) -> None:
    with pytest.raises(FlairsuiteError) as info:
        make()
    assert str(info.value) == message


def test_settings_records_are_those_of_plain_dataclasses() -> None:
    """The rules live in the fields' metadata: `asdict`, the field order and the defaults (fingerprinted) are unchanged."""
    assert TrainSettings().record() == {"learning_rate": 0.1, "mini_batch_size": 32, "max_epochs": 150, "anneal_factor": 0.5, "patience": 3,
                                        "optimizer": "sgd", "train_with_dev": False}
    assert BertSettings.keys()[:4] == ("objective", "wwm", "positions", "attention")
    assert PrepareConfig.heldout_fraction == 0.01 and PrepareConfig.seed == 1


def test_yaml_refuses_a_duplicate_key_with_its_line_and_reads_yaml_1_2_floats(tmp_path: Path) -> None:
    assert parse_yaml("rate: 5e-5\nsize: 1e3\n", "x.yaml") == {"rate": 5e-5, "size": 1000.0}
    with pytest.raises(InputError) as info:
        parse_yaml("a: 1\nb: 2\na: 3\n", tmp_path / "x.yaml")
    assert str(info.value) == f"{tmp_path / 'x.yaml'}:3: not valid YAML: duplicate key 'a': each name may appear once"


def fake_resources(folder: Path) -> SimpleNamespace:
    return SimpleNamespace(files=lambda package: folder)


def test_registry_recipes_and_presets_refuse_duplicate_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flairsuite.bert import settings as bert_settings
    from flairsuite.charlm import recipes
    from flairsuite.corpora import registry

    (tmp_path / "presets").mkdir()
    for path in (tmp_path / "registry.yaml", tmp_path / "presets.yaml", tmp_path / "presets" / "default.yaml"):
        path.write_text("cpu:\n  layers: 4\n  layers: 6\n", encoding="utf-8")
    loaders = [(registry, registry._raw_registry, "registry.yaml"), (bert_settings, bert_settings.presets, "presets.yaml"),
               (recipes, lambda: recipes._load("default"), "default.yaml")]
    try:
        for module, load, name in loaders:
            monkeypatch.setattr(module, "resources", fake_resources(tmp_path))
            for cached in (registry._raw_registry, bert_settings.presets, recipes._load):
                cached.cache_clear()
            with pytest.raises(InputError, match=rf"{name}:3: not valid YAML: duplicate key 'layers'"):
                load()
    finally:
        monkeypatch.undo()
        for cached in (registry._raw_registry, bert_settings.presets, recipes._load):
            cached.cache_clear()


def test_packaged_yaml_reads_as_before() -> None:
    """The packaged YAML files hold no value that YAML 1.1 and 1.2 read differently, and no duplicate key."""
    import yaml

    for path in [ROOT / "flairsuite/corpora/registry.yaml", ROOT / "flairsuite/bert/presets.yaml", *(ROOT / "flairsuite/charlm/presets").glob("*.yaml")]:
        text = path.read_text(encoding="utf-8")
        assert parse_yaml(text, path) == yaml.safe_load(text), path


def test_a_bad_summary_is_one_line_for_the_order_probe(tmp_path: Path) -> None:
    from flairsuite.bert.order_probe import probe_order

    folder = tmp_path / "bert"
    write_summary(folder, {"model": str(folder), "settings": {"wwm": True}})
    with pytest.raises(InputError) as info:
        probe_order(folder)
    assert str(info.value) == f"{folder / 'summary.json'}: missing key 'settings.objective'"
    (folder / "summary.json").write_text('{"model": 1', encoding="utf-8")
    with pytest.raises(InputError, match=r"summary.json:1: not valid JSON"):
        probe_order(folder)


def test_a_bad_summary_is_one_line_for_a_char_lm_warm_start(tmp_path: Path) -> None:
    from flairsuite.charlm.run import read_summary

    path = write_summary(tmp_path, {"chars_seen": 2.5, "steps": 1, "hours": 1, "valid_ppl": 3.5})
    with pytest.raises(InputError) as info:
        read_summary(path)
    assert str(info.value) == f"{path}: chars_seen must be a non-negative integer (found 2.5); restore it or start over with --force"


def test_summary_readers_check_dotted_keys(tmp_path: Path) -> None:
    from flairsuite.settings_schema import POSITIVE_INTEGER

    path = write_summary(tmp_path, {"data": {"vocab_size": 0}})
    with pytest.raises(InputError, match=r"data.vocab_size must be a positive integer \(found 0\)$"):
        read_summary_file(path, {"data.vocab_size": POSITIVE_INTEGER})
    assert read_summary_file(path, optional={"data.other": POSITIVE_INTEGER}) == {"data": {"vocab_size": 0}}


def test_metrics_files_carry_a_schema_version_and_old_ones_still_read(tmp_path: Path) -> None:
    committed = sorted((ROOT / "results").rglob("metrics.json"))
    unversioned = [path for path in committed if "schema_version" not in json.loads(path.read_text(encoding="utf-8"))]
    assert len(unversioned) >= 50  # the runs written before the schema had a version are still committed, and read:
    old = read_run(unversioned[0]).metrics
    target = tmp_path / "metrics.json"
    write_metrics(target, old)
    written = json.loads(target.read_text(encoding="utf-8"))
    assert next(iter(written)) == "schema_version" and written["schema_version"] == SCHEMA_VERSION
    assert read_run(target).metrics == {"schema_version": SCHEMA_VERSION, **old}
    target.write_text(json.dumps({**old, "schema_version": SCHEMA_VERSION + 1}), encoding="utf-8")
    with pytest.raises(InputError, match=rf"schema_version must be an integer from 1 to {SCHEMA_VERSION}"):
        read_run(target)


def test_a_damaged_experiment_record_is_one_line_and_force_writes_over_it(tmp_path: Path) -> None:
    from flairsuite.experiments.reading import load_experiment
    from flairsuite.experiments.runner import STATE_FILE, check_state

    config_path = ROOT / "experiments" / "sturm-table3.yaml"
    config = load_experiment(config_path)
    text = config_path.read_text(encoding="utf-8")
    state = tmp_path / STATE_FILE
    for content, message in [("{not json", f"{state}:1: not valid JSON: Expecting property name enclosed in double quotes; delete it or pass --force"),
                             ("[1, 2]", f"{state}: not a JSON object (the record of an experiment); delete it or pass --force"),
                             ('{"name": "x"}', f"{state}: missing key 'fingerprint'; delete it or pass --force"),
                             ('{"fingerprint": 7}', f"{state}: fingerprint must be a string (found 7); delete it or pass --force")]:
        state.write_text(content, encoding="utf-8")
        with pytest.raises(InputError) as info:
            check_state(config, text, tmp_path, force=False)
        assert str(info.value) == message
        check_state(config, text, tmp_path, force=True)  # --force writes the record anew, whatever the old one held
        check_state(config, text, tmp_path, force=False)  # and it reads back
    state.write_text('{"fingerprint": "other"}', encoding="utf-8")
    with pytest.raises(FlairsuiteError, match="holds runs of a different 'sturm-table3' config"):
        check_state(config, text, tmp_path, force=False)


def test_active_learning_records_are_checked_by_their_rules(tmp_path: Path) -> None:
    from flairsuite.experiments.simulation_report import ROUND_RECORD, round_file, rounds_frame

    folder = tmp_path / "sturm" / "proposed" / "map" / "random" / "seed-1"
    folder.mkdir(parents=True)
    good = {"corpus": "sturm", "stack": "proposed", "tagger": "map", "strategy": "random", "seed": 1, "round": 0, "sentences": 50,
            "tokens": 900, "dev": 0.5, "test": 0.45, "epochs": 3}
    path = round_file(folder, 0)
    path.write_text(json.dumps(good), encoding="utf-8")
    assert rounds_frame(tmp_path).to_dict("records") == [{key: good[key] for key in ROUND_RECORD}]
    for change, message in [({"test": None}, "test must be a fraction in [0, 1] (found null)"), ({"seed": 1.5}, "seed must be an integer (found 1.5)"),
                            ({"sentences": True}, "sentences must be a non-negative integer (found true)")]:
        path.write_text(json.dumps({**good, **change}), encoding="utf-8")
        with pytest.raises(InputError) as info:
            rounds_frame(tmp_path)
        assert str(info.value) == f"{path}: {message}; delete it to recompute that round"
    path.write_text(json.dumps({key: value for key, value in good.items() if key != "dev"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"round-00.json: missing key 'dev'; delete it to recompute that round$"):
        rounds_frame(tmp_path)
