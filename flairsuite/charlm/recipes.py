"""Per-language character-LM recipes (YAML in `flairsuite/charlm/presets/`): presets of hyper-parameters (the raw text is
the registry's set of the language)."""

from functools import lru_cache
from importlib import resources
from typing import Any

from flairsuite.charlm.settings import Hyper
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.files.yaml_file import parse_yaml
from flairsuite.settings_schema import checked_keys

PRESETS_FOLDER = "presets"  # beside this module: default.yaml and one file per language
BUDGET_KEYS = ("max_chars", "max_cpu_hours")  # a preset's training budget per direction, beside its hyper-parameters


@lru_cache(maxsize=None)
def _load(name: str) -> dict[str, Any]:
    path = resources.files("flairsuite.charlm").joinpath(PRESETS_FOLDER, f"{name}.yaml")
    return parse_yaml(path.read_text(encoding="utf-8"), str(path)) or {}


def languages() -> list[str]:
    """Languages that have a recipe."""
    folder = resources.files("flairsuite.charlm").joinpath(PRESETS_FOLDER)
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml") and p.name != "default.yaml")


def recipe(language: str, preset: str = "cpu") -> dict[str, Any]:
    """The hyper-parameters of `language` with `preset` applied."""
    if language not in languages():
        raise unknown_name_error("language", language, languages())
    presets = _load("default")["presets"]
    if preset not in presets:
        raise FlairsuiteError(f"unknown preset '{preset}' (presets: {', '.join(presets)})")
    own = _load(language)
    values = {**presets[preset], **(own.get("presets") or {}).get(preset, {})}
    return checked_keys(values, (*Hyper.keys(), *BUDGET_KEYS), where=f"charlm preset {preset} of {language}", kind="setting")


def default_presets() -> dict[str, dict[str, Any]]:
    """The presets of default.yaml (what `train-charlm --help` shows; a language file may change some values)."""
    return dict(_load("default")["presets"])
