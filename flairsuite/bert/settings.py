"""The settings of one small-BERT pre-training run: a preset of `presets.yaml` with command-line overrides, checked once."""

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from flairsuite.bert.masking import OBJECTIVES
from flairsuite.bert.vocabulary import VOCABULARY_SIZE
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.files.yaml_file import parse_yaml
from flairsuite.settings_schema import (
    FLAG,
    NON_NEGATIVE_INTEGER,
    NON_NEGATIVE_NUMBER,
    OPTIONS,
    POSITIVE_INTEGER,
    POSITIVE_NUMBER,
    CheckedSettings,
    Wording,
    at_least,
    interval,
    one_of,
    setting,
)

OPTION_NAMES = {"seq_len": "--sequence-length"}  # settings whose option is spelt as train-charlm spells the same option
BERT_OPTIONS = Wording(lambda name: OPTION_NAMES.get(name, OPTIONS.name(name)), OPTIONS.found)  # `--layers must be a positive integer (found 2.5)`


@dataclass(frozen=True)
class BertSettings(CheckedSettings):
    """Model, objective and optimisation of a `train-bert` run (see presets.yaml for the meaning of each), checked when made."""

    wording = BERT_OPTIONS

    objective: str = setting(one_of(OBJECTIVES, lead="one of"))
    wwm: bool = setting(FLAG)
    positions: str = setting(one_of(("absolute", "relative"), lead="one of"))
    attention: str = setting(one_of(("full", "wwa"), lead="one of"))
    layers: int = setting(POSITIVE_INTEGER)
    hidden_size: int = setting(POSITIVE_INTEGER)
    heads: int = setting(POSITIVE_INTEGER)
    seq_len: int = setting(at_least(8))
    vocab_size: int = setting(VOCABULARY_SIZE)
    batch_size: int = setting(POSITIVE_INTEGER)
    learning_rate: float = setting(POSITIVE_NUMBER)
    warmup_tokens: int = setting(NON_NEGATIVE_INTEGER)
    decay_tokens: int = setting(POSITIVE_INTEGER)
    weight_decay: float = setting(NON_NEGATIVE_NUMBER)
    clip: float = setting(POSITIVE_NUMBER)
    dropout: float = setting(interval(0, 1, low_open=False, high_open=True))
    relative_clip: int = setting(POSITIVE_INTEGER)
    window: int = setting(POSITIVE_INTEGER)
    validate_tokens: int = setting(POSITIVE_INTEGER)
    checkpoint_minutes: float = setting(NON_NEGATIVE_NUMBER)
    valid_samples: int = setting(POSITIVE_INTEGER)

    @property
    def intermediate_size(self) -> int:
        """The feed-forward size: 4 x the hidden size, as in BERT."""
        return 4 * self.hidden_size

    def check_together(self) -> None:
        if self.attention == "wwa" and self.positions == "absolute":
            raise FlairsuiteError("--attention wwa needs --positions relative (Whole-Word Attention encodes positions relatively, paper §5.2)")
        if self.hidden_size % self.heads:
            raise FlairsuiteError(f"--hidden-size {self.hidden_size} is not divisible by --heads {self.heads}")


@lru_cache(maxsize=None)
def presets() -> dict[str, dict[str, Any]]:
    path = resources.files("flairsuite.bert").joinpath("presets.yaml")
    return parse_yaml(path.read_text(encoding="utf-8"), str(path))


def settings_from(preset: str, overrides: dict[str, Any]) -> BertSettings:
    """The preset with every override that is not None applied, checked."""
    if preset not in presets():
        raise unknown_name_error("preset", preset, list(presets()))
    names = set(BertSettings.keys())
    values = {**presets()[preset], **{k: v for k, v in overrides.items() if k in names and v is not None}}
    return BertSettings(**values)
