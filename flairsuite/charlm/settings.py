"""The hyper-parameters of one character LM, declared once: a recipe preset (presets/*.yaml) gives their values,
`train-charlm` options generated from these fields (flairsuite/cli/settings_options.py) override them.

A value the LM cannot train with (NaN and infinities included) is a one-line error naming its option. Torch-free, so
that `flairsuite train-charlm --help` reads the declarations without loading the trainer.
"""

from dataclasses import dataclass

from flairsuite.settings_schema import (
    NON_NEGATIVE_INTEGER,
    NON_NEGATIVE_NUMBER,
    OPTIONS,
    POSITIVE_INTEGER,
    POSITIVE_NUMBER,
    CheckedSettings,
    interval,
    setting,
)


@dataclass(frozen=True)
class Hyper(CheckedSettings):
    """Hyper-parameters of one character LM (a recipe preset, with command-line overrides)."""

    wording = OPTIONS

    hidden_size: int = setting(POSITIVE_INTEGER, help="LSTM hidden size.")
    nlayers: int = setting(POSITIVE_INTEGER, help="LSTM layers.", option="layers")
    embedding_size: int = setting(POSITIVE_INTEGER, help="Character embedding size.")
    sequence_length: int = setting(POSITIVE_INTEGER, help="Truncated-BPTT window (characters).")
    sequence_length_start: int = setting(POSITIVE_INTEGER, help="Window at the start of the ramp to --sequence-length.")
    ramp_chars: int = setting(NON_NEGATIVE_INTEGER, help="Characters over which the window grows (0: no ramp).")
    batch_size: int = setting(POSITIVE_INTEGER, help="Parallel character streams per batch.")
    learning_rate: float = setting(POSITIVE_NUMBER, help="SGD learning rate.")
    clip: float = setting(POSITIVE_NUMBER, help="Gradient norm clipping.")
    dropout: float = setting(interval(0, 1, low_open=False, high_open=True), help="Dropout.")
    anneal_factor: float = setting(interval(0, 1, low_open=True, high_open=False).noted(" (1: no annealing)"),
                                   help="Learning rate factor after a validation plateau.")
    patience: int = setting(NON_NEGATIVE_INTEGER, help="Validations without improvement before annealing.")
    validate_chars: int = setting(POSITIVE_INTEGER, help="Training characters between validation points (annealing, best model).")
    checkpoint_minutes: float = setting(NON_NEGATIVE_NUMBER.noted(" (0: a checkpoint at every step)"), help="Minutes between checkpoints.")
    valid_chars: int = setting(POSITIVE_INTEGER, help="Characters of valid (and test) used for perplexity.")
