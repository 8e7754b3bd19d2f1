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

`CharlmRun` is one `train-charlm` run as the library takes it (`train_charlm.train_charlm_command`): what the command's
options give (`CharlmRun.from_options`), or what an experiment's `adapt:` block asks (flairsuite/experiments/adaptation.py).
"""

import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, NamedTuple, Optional

from flairsuite import settings_schema as rules
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.rawtext.settings import PrepareConfig, TextRun
from flairsuite.settings_schema import OPTIONS, RULE, CheckedSettings, Rule, checked_keys, interval, one_of, setting

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


DIRECTION_CHOICES = ("forward", "backward", "both")
PRESETS = ("cpu", "paper")
PRECISIONS = ("auto", "float32", "bfloat16")
MODEL_DTYPES = ("float32", "float16")
BUDGET_HOURS = rules.NUMBER.or_null("the preset's budget")  # the budget's own rules: pretraining.budget_from, in its words
BUDGET_CHARS = rules.INTEGER.or_null("the preset's budget")
HYPER_GIVEN = Rule("a mapping of hyper-parameter options to the values given", lambda v: isinstance(v, Mapping))


@dataclass(frozen=True, kw_only=True)
class CharlmRun(TextRun):
    """One `train-charlm` run: every value it takes, each checked as the run is made (a bad one: a one-line error naming
    its option). Fields with help generate the command's options; `corpus`, `exclude`, `heldout_fraction`, `seed`
    (`TextRun`), `new_chars` and `unk_fraction` are `PrepareConfig`'s settings (rule, default and option declared there),
    `hyper` the `Hyper` options given (the recipe's preset or the `--init` model supplies the others). `out_dir` to
    `corpora_dir` have no default: the command's own options declare them (`--out`, the flags, cli/group.py's shared
    options), and a run built in code says them."""

    wording = OPTIONS

    out_dir: Optional[str] = setting(rules.TEXT.or_null("charlm/ under $FLAIRSUITE_HOME"))
    resume: bool = setting(rules.FLAG)
    force: bool = setting(rules.FLAG)
    threads: Optional[int] = setting(rules.POSITIVE_INTEGER.or_null("the cores other processes leave free"))
    corpora_dir: Optional[str] = setting(rules.TEXT.or_null("$FLAIRSUITE_CORPORA, else ./corpora under $FLAIRSUITE_HOME"))
    lang: Optional[str] = setting(
        rules.TEXT.or_null("the --init model's"), None,
        help="Language of the recipe (de, en, da, zh); also selects the NER sets kept out of training. With --init: the model's, unless given.",
    )
    init: Optional[str] = setting(
        rules.TEXT.or_null("a new pair"), None, metavar="PAIR",
        help="Continue a trained pair on the --corpus text (e.g. de or charlm/de: charlm/de-forward, charlm/de-backward): its dictionary, "
        "hyper-parameters and weights; the learning rate restarts at its last one (docs/language-models.md). Needs --name.",
    )
    direction: str = setting(one_of(DIRECTION_CHOICES), "both")
    preset: str = setting(
        one_of(PRESETS), "cpu",
        help="Recipe preset: cpu (2 cores; de: 82 M characters, ~1.5 h a direction; en, da, zh: one CPU-hour a direction) or paper (Akbik et al. 2018).",
    )
    max_hours: Optional[float] = setting(
        BUDGET_HOURS, None,
        help="Training time per direction [default: the preset's budget: cpu de 82 M characters, en/da/zh one CPU-hour; paper 1 h].",
    )
    max_chars: Optional[int] = setting(BUDGET_CHARS, None, help="Characters to train on per direction (a total: a resumed model's count it).")
    max_cpu_hours: Optional[float] = setting(
        BUDGET_HOURS, None,
        help="CPU time per direction: the process's, all its threads (a total, as --max-chars); whatever comes first of the limits given.",
    )
    name: Optional[str] = setting(
        rules.TEXT.or_null("LANG"), None,
        help="Model folder prefix [default: LANG]: models go to charlm/NAME-forward, charlm/NAME-backward.",
    )
    precision: str = setting(
        one_of(PRECISIONS), "auto",
        help="Training steps' arithmetic: bfloat16 runs them under autocast (1.6x the characters/s at the same perplexity per character "
        "on a Xeon with avx512_bf16); weights, optimizer and validation stay float32; auto: bfloat16 where the CPU or GPU computes it "
        "natively, else float32. Not part of a checkpoint's settings: a run may change it on --resume.",
    )
    model_dtype: str = setting(
        one_of(MODEL_DTYPES), "float32",
        help="Weights of best-lm.pt: float16 halves the file (a hidden-1024 LM in 9.7 MB instead of 19.3); plain Flair loads it "
        "into a float32 model. Checkpoints stay float32.",
    )
    new_chars: str = setting(PrepareConfig.rule("new_chars"), PrepareConfig.new_chars)
    unk_fraction: float = setting(PrepareConfig.rule("unk_fraction"), PrepareConfig.unk_fraction)
    hyper: Mapping[str, Any] = field(default_factory=dict, metadata={RULE: HYPER_GIVEN})

    def check_together(self) -> None:
        for name, value in self.hyper.items():
            if name not in Hyper.keys():
                raise unknown_name_error("hyper-parameter", str(name), list(Hyper.keys()))
            Hyper.check_value(name, value)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "CharlmRun":
        """The run the command's parsed options ask for: the hyper-parameter options given (not None) as `hyper`. An
        unknown or missing option, or a bad value: a one-line error."""
        hyper = {name: options[name] for name in Hyper.keys() if options.get(name) is not None}
        rest = {key: value for key, value in options.items() if key not in Hyper.keys()}
        known = [name for name in cls.keys() if name != "hyper"]
        required = [declared.name for declared in fields(cls) if declared.default is MISSING and declared.default_factory is MISSING]
        return cls(**checked_keys(rest, known, required, where="train-charlm", kind="option"), hyper=hyper)
