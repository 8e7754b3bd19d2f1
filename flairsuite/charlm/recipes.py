"""Per-language character-LM recipes (YAML in `flairsuite/recipes/`): presets of hyper-parameters (the raw text is the registry's set of the language)."""

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from flairsuite.errors import FlairsuiteError, unknown_name_error


@lru_cache(maxsize=None)
def _load(name: str) -> dict[str, Any]:
    text = resources.files("flairsuite").joinpath("recipes", f"{name}.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text) or {}


def languages() -> list[str]:
    """Languages that have a recipe."""
    folder = resources.files("flairsuite").joinpath("recipes")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml") and p.name != "default.yaml")


def recipe(language: str, preset: str = "cpu") -> dict[str, Any]:
    """The hyper-parameters of `language` with `preset` applied."""
    if language not in languages():
        raise unknown_name_error("language", language, languages())
    presets = _load("default")["presets"]
    if preset not in presets:
        raise FlairsuiteError(f"unknown preset '{preset}' (presets: {', '.join(presets)})")
    own = _load(language)
    return {**presets[preset], **(own.get("presets") or {}).get(preset, {})}
