"""The settings of one small-BERT pre-training run, declared once: a preset of `presets.yaml` gives their values,
`train-bert` options generated from these fields (flairsuite/cli/settings_options.py) override them; checked once.

Free of torch and transformers (the objectives and the vocabulary's reserved tokens are declared here, `masking` and
`vocabulary` take them from here), so that `flairsuite train-bert --help` reads the declarations at once."""

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

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
    Rule,
    at_least,
    interval,
    one_of,
    setting,
)
from flairsuite.values import is_int

OBJECTIVES = ("mlm", "mlm+nsp", "mlm+sop")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # the vocabulary's first ids (flairsuite/bert/vocabulary.py)
VOCABULARY_SIZE = Rule(f"an integer from {len(SPECIAL_TOKENS) + 1} to 65536",  # the special tokens and a word; ids are stored as uint16
                       lambda v: is_int(v) and len(SPECIAL_TOKENS) < v <= 2**16)


@dataclass(frozen=True)
class BertSettings(CheckedSettings):
    """Model, objective and optimisation of a `train-bert` run (see presets.yaml for the meaning of each), checked when made."""

    wording = OPTIONS

    objective: str = setting(one_of(OBJECTIVES, lead="one of"), help="Pre-training objective.")
    wwm: bool = setting(FLAG, help="Whole-word masking.")
    positions: str = setting(one_of(("absolute", "relative"), lead="one of"),
                             help="absolute or relative (Shaw-style key and value distances, clipped).")
    attention: str = setting(one_of(("full", "wwa"), lead="one of"),
                             help="full, or wwa (Whole-Word Attention; needs relative positions).")
    layers: int = setting(POSITIVE_INTEGER, help="Transformer layers.")
    hidden_size: int = setting(POSITIVE_INTEGER, help="Hidden size.")
    heads: int = setting(POSITIVE_INTEGER, help="Attention heads.")
    seq_len: int = setting(at_least(8), help="Tokens per training sequence (the saved tokenizer's model_max_length).", option="sequence-length")
    vocab_size: int = setting(VOCABULARY_SIZE, help="WordPiece vocabulary size.")
    batch_size: int = setting(POSITIVE_INTEGER, help="Sequences per batch.")
    learning_rate: float = setting(POSITIVE_NUMBER, help="Peak AdamW learning rate.")
    warmup_tokens: int = setting(NON_NEGATIVE_INTEGER)
    decay_tokens: int = setting(POSITIVE_INTEGER)
    weight_decay: float = setting(NON_NEGATIVE_NUMBER)
    clip: float = setting(POSITIVE_NUMBER)
    dropout: float = setting(interval(0, 1, low_open=False, high_open=True), help="Dropout of hidden states and attention.")
    relative_clip: int = setting(POSITIVE_INTEGER)
    window: int = setting(POSITIVE_INTEGER)
    validate_tokens: int = setting(POSITIVE_INTEGER, help="Training tokens between validation points.")
    checkpoint_minutes: float = setting(NON_NEGATIVE_NUMBER, help="Minutes between checkpoints.")
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
    """The presets of presets.yaml, each checked as whole settings (every key known, none missing, values valid)."""
    path = resources.files("flairsuite.bert").joinpath("presets.yaml")
    found = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    for name, values in found.items():
        BertSettings.from_values(values, where=f"{path}: {name}")
    return found


def settings_from(preset: str, overrides: dict[str, Any]) -> BertSettings:
    """The preset with every override that is not None applied, checked."""
    if preset not in presets():
        raise unknown_name_error("preset", preset, list(presets()))
    names = set(BertSettings.keys())
    values = {**presets()[preset], **{k: v for k, v in overrides.items() if k in names and v is not None}}
    return BertSettings(**values)
