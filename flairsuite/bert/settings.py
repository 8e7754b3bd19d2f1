"""The settings of one small-BERT pre-training run: a preset of `presets.yaml` with command-line overrides, checked once."""

from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from flairsuite.bert.masking import OBJECTIVES
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.values import is_non_negative_number, is_number, is_positive_number


@dataclass(frozen=True)
class BertSettings:
    """Model, objective and optimisation of a `train-bert` run (see presets.yaml for the meaning of each)."""

    objective: str
    wwm: bool
    positions: str
    attention: str
    layers: int
    hidden_size: int
    heads: int
    seq_len: int
    vocab_size: int
    batch_size: int
    learning_rate: float
    warmup_tokens: int
    decay_tokens: int
    weight_decay: float
    clip: float
    dropout: float
    relative_clip: int
    window: int
    validate_tokens: int
    checkpoint_minutes: float
    valid_samples: int

    @property
    def intermediate_size(self) -> int:
        """The feed-forward size: 4 x the hidden size, as in BERT."""
        return 4 * self.hidden_size

    def check(self) -> "BertSettings":
        """These settings, or a one-line error naming the option that is wrong."""
        choices = {"objective": OBJECTIVES, "positions": ("absolute", "relative"), "attention": ("full", "wwa")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise FlairsuiteError(f"--{name} must be one of {', '.join(allowed)} (got '{getattr(self, name)}')")
        if self.attention == "wwa" and self.positions == "absolute":
            raise FlairsuiteError("--attention wwa needs --positions relative (Whole-Word Attention encodes positions relatively, paper §5.2)")
        positive = (
            "layers", "hidden_size", "heads", "vocab_size", "batch_size", "learning_rate", "valid_samples", "window", "relative_clip",
            "validate_tokens",
        )
        for name in positive:
            if not is_positive_number(getattr(self, name)):
                raise FlairsuiteError(f"--{name.replace('_', '-')} must be positive (got {getattr(self, name)})")
        if not is_non_negative_number(self.checkpoint_minutes):
            raise FlairsuiteError(f"--checkpoint-minutes must be a non-negative number (got {self.checkpoint_minutes})")
        if not (is_number(self.dropout) and 0 <= self.dropout < 1):
            raise FlairsuiteError(f"--dropout must be a number in [0, 1) (got {self.dropout})")
        if self.hidden_size % self.heads:
            raise FlairsuiteError(f"--hidden-size {self.hidden_size} is not divisible by --heads {self.heads}")
        if self.seq_len < 8:
            raise FlairsuiteError(f"--seq-len must be at least 8 (got {self.seq_len})")
        return self


@lru_cache(maxsize=None)
def presets() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(resources.files("flairsuite.bert").joinpath("presets.yaml").read_text(encoding="utf-8"))


def settings_from(preset: str, overrides: dict[str, Any]) -> BertSettings:
    """The preset with every override that is not None applied, checked."""
    if preset not in presets():
        raise unknown_name_error("preset", preset, list(presets()))
    names = {f.name for f in fields(BertSettings)}
    values = {**presets()[preset], **{k: v for k, v in overrides.items() if k in names and v is not None}}
    return BertSettings(**values).check()
