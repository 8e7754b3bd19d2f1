"""The package layout's guards: the import contracts in setup.cfg name every package and top-level module.

`.ci/run` runs `lint-imports` (the contracts) and `ruff check`; this test makes sure a new package
cannot slip past the layers contract by being left out of it.
"""

import configparser
import pkgutil
from pathlib import Path

import flairsuite

ROOT = Path(__file__).resolve().parents[1]


def contracts() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    return parser


def layer_members() -> list[str]:
    layers = contracts()["importlinter:contract:layers"]["layers"]
    return [member.strip() for line in layers.strip().splitlines() for member in line.split("|")]


def test_every_package_and_module_has_a_layer():
    modules = {f"flairsuite.{info.name}" for info in pkgutil.iter_modules(flairsuite.__path__)}
    members = layer_members()
    assert len(members) == len(set(members)), "a module is named in two layers"
    assert sorted(modules - set(members)) == [], "add these to the layers contract in setup.cfg"
    assert sorted(set(members) - modules) == [], "the layers contract names modules that do not exist"


def test_the_runner_is_forbidden_to_models_inference_predict_serve_and_suggest():
    contract = contracts()["importlinter:contract:runner"]
    assert contract["type"] == "forbidden"
    expected = {"flairsuite.models", "flairsuite.inference", "flairsuite.predict", "flairsuite.serve", "flairsuite.suggest"}
    assert set(contract["source_modules"].split()) == expected
    assert contract["forbidden_modules"].split() == ["flairsuite.experiments", "flairsuite.tagging"]


def test_layers_run_from_the_cli_down_to_errors():
    members = layer_members()
    assert members[:2] == ["flairsuite.__main__", "flairsuite.cli"] and members[-1] == "flairsuite.errors"  # `python -m flairsuite` on top
    order = [members.index(f"flairsuite.{name}") for name in ("cli", "serve", "predict", "inference", "experiments", "tagging", "results",
                                                               "models", "embeddings", "charlm", "rawtext", "corpora", "errors")]
    assert order == sorted(order)
