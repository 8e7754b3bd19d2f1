"""The hyper-parameters of one character LM, declared once: a recipe preset (presets/*.yaml) gives their values,
`train-charlm` options generated from these fields (flairsuite/cli/settings_options.py) override them.

A value the LM cannot train with (NaN and infinities included) is a one-line error naming its option. Torch-free, so
that `flairsuite train-charlm --help` reads the declarations without loading the trainer.

Noise (`noise`, `noise_alphabet`; the scheme: `flairsuite.charlm.noise`) is written `KIND[:P]`: `smlm` (Schweter and
Baiter 2019: the training text itself corrupted) or `smlm-denoise` (only the inputs; the targets stay the clean
text), P the share of characters replaced, in (0, 0.5], default 0.1; `none` (the default) trains on the text as it is.
A given value is kept in its full spelling (`smlm` is recorded as `smlm:0.1`). The two fields are left out of
`record()` while they hold their defaults, so the summary.json and checkpoint of a run without noise are those of
before the fields existed.
"""

import math
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, Optional

from flairsuite import settings_schema as rules
from flairsuite.errors import FlairsuiteError
from flairsuite.settings_schema import OPTIONS, CheckedSettings, Rule, interval, setting

NO_NOISE = "none"
NOISE_KINDS = ("smlm", "smlm-denoise")  # the paper's (text corrupted), and inputs only (a denoising LM)
DEFAULT_NOISE_SHARE = 0.1  # the paper's best: 90 % of the characters kept
MAX_NOISE_SHARE = 0.5
NOISE_KEYS = ("noise", "noise_alphabet")  # left out of records while at their defaults


class Noise(NamedTuple):
    """A parsed `--noise`: its kind (`smlm`, `smlm-denoise`) and the share of characters replaced."""

    kind: str
    share: float

    @property
    def corrupts_targets(self) -> bool:
        """Whether the targets are the corrupted text too (the paper's `smlm`), not the clean next characters."""
        return self.kind == "smlm"

    def spelling(self) -> str:
        return f"{self.kind}:{self.share!r}"


def parse_noise(value: Any) -> Optional[Noise]:
    """`KIND[:P]` as a `Noise`; None for `none` and for anything that is not a valid noise (the rule tells them apart)."""
    if not isinstance(value, str) or value == NO_NOISE:
        return None
    kind, colon, share_text = value.partition(":")
    if kind not in NOISE_KINDS:
        return None
    try:
        share = float(share_text) if colon else DEFAULT_NOISE_SHARE
    except ValueError:
        return None
    return Noise(kind, share) if math.isfinite(share) and 0 < share <= MAX_NOISE_SHARE else None


NOISE = Rule(
    f"{NO_NOISE}, {'[:P] or '.join(NOISE_KINDS)}[:P] with P the share of characters replaced, in (0, {MAX_NOISE_SHARE:g}]",
    lambda v: v == NO_NOISE or parse_noise(v) is not None,
)
PATHS = Rule("a list of file or folder paths", lambda v: isinstance(v, tuple) and all(isinstance(path, str) and path for path in v))


@dataclass(frozen=True)
class Hyper(CheckedSettings):
    """Hyper-parameters of one character LM (a recipe preset, with command-line overrides)."""

    wording = OPTIONS

    hidden_size: int = setting(rules.POSITIVE_INTEGER, help="LSTM hidden size.")
    nlayers: int = setting(rules.POSITIVE_INTEGER, help="LSTM layers.", option="layers")
    embedding_size: int = setting(rules.POSITIVE_INTEGER, help="Character embedding size.")
    sequence_length: int = setting(rules.POSITIVE_INTEGER, help="Truncated-BPTT window (characters).")
    sequence_length_start: int = setting(rules.POSITIVE_INTEGER, help="Window at the start of the ramp to --sequence-length.")
    ramp_chars: int = setting(rules.NON_NEGATIVE_INTEGER, help="Characters over which the window grows (0: no ramp).")
    batch_size: int = setting(rules.POSITIVE_INTEGER, help="Parallel character streams per batch.")
    learning_rate: float = setting(rules.POSITIVE_NUMBER, help="SGD learning rate.")
    clip: float = setting(rules.POSITIVE_NUMBER, help="Gradient norm clipping.")
    dropout: float = setting(interval(0, 1, low_open=False, high_open=True), help="Dropout.")
    anneal_factor: float = setting(interval(0, 1, low_open=True, high_open=False).noted(" (1: no annealing)"),
                                   help="Learning rate factor after a validation plateau.")
    patience: int = setting(rules.NON_NEGATIVE_INTEGER, help="Validations without improvement before annealing.")
    validate_chars: int = setting(rules.POSITIVE_INTEGER, help="Training characters between validation points (annealing, best model).")
    checkpoint_minutes: float = setting(rules.NON_NEGATIVE_NUMBER.noted(" (0: a checkpoint at every step)"), help="Minutes between checkpoints.")
    valid_chars: int = setting(rules.POSITIVE_INTEGER, help="Characters of valid (and test) used for perplexity.")
    noise: str = setting(
        NOISE, NO_NOISE, metavar="KIND[:P]",
        help="Synthetic noise on the training text (Schweter and Baiter 2019): smlm:P replaces a share P of the characters "
        "(default 0.1), a fifth of them by a mask symbol, the rest by a random character of the --noise-alphabet; smlm corrupts "
        "the text itself (inputs and targets, as the paper does), smlm-denoise only the inputs (the targets stay the clean text). "
        "Validation and perplexity read clean text. [default: none]",
    )
    noise_alphabet: tuple[str, ...] = setting(
        PATHS, (), metavar="PATH",
        help="Text files or folders whose characters the noise injects (repeatable) [default: the training text's characters].",
    )

    def __post_init__(self) -> None:
        if isinstance(self.noise_alphabet, list):  # as a summary.json records it
            object.__setattr__(self, "noise_alphabet", tuple(self.noise_alphabet))
        super().__post_init__()
        parsed = parse_noise(self.noise)
        if parsed is not None:
            object.__setattr__(self, "noise", parsed.spelling())

    def check_together(self) -> None:
        if self.noise_alphabet and self.noise == NO_NOISE:
            raise FlairsuiteError("--noise-alphabet needs --noise (e.g. --noise smlm:0.1)")

    @property
    def noise_scheme(self) -> Optional[Noise]:
        """The parsed `noise`; None without noise."""
        return parse_noise(self.noise)

    def record(self) -> dict[str, Any]:
        """The hyper-parameters as summary.json and checkpoints hold them: the noise fields only where they are set."""
        return {key: value for key, value in asdict(self).items() if key not in NOISE_KEYS or value != getattr(Hyper, key)}
