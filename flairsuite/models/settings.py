"""Tagger training settings: one frozen dataclass that holds the defaults and checks every value.

`TrainSettings()` are the paper's settings (Akbik et al. 2018): SGD with learning rate 0.1,
mini-batches of 32, up to 150 epochs, the learning rate halved after more than 3 epochs without a
dev gain, no training on dev. The registry derives each tagger's defaults from it
(`flairsuite.models.registry.PAPER_TRAIN`, `LINEAR_TRAIN`); an experiment's `train` and
`tagger_train` mappings override single settings and are checked here, with the one-line messages
the experiment loader reports (`train.max_epochs must be a positive integer (found 0)`).

Fine-tuning a BERT with the tagger (`fine_tune: true`) trains differently: AdamW, a learning rate
warmed up linearly over the first `warmup_fraction` of all steps and then decayed linearly to 0
(`schedule: linear`, Flair's `ModelTrainer.fine_tune`), and epochs of `epoch_samples` sentences
instead of one pass over train (the registry's `fine_tune_train`). `decoder_learning_rate` (Flair's
`fine_tune` option of that name) trains the parameters outside the embeddings — the head, a CRF's
transitions, LCRF-NER's weights, a BiLSTM — at their own rate; Flair's default, and this class's, is
none (everything at `learning_rate`).

Run records and fingerprints hold the settings as a plain dict (`record()`), values as written: an
override `learning_rate: 1` stays the int 1, so a fingerprint never changes because of this class.
The settings added later (`LATER_SETTINGS`: fine-tuning, batching, precision) are left out of a record while all of them
hold their defaults, so the records of the runs from before them stay as they were.

`dev_every` (score dev after every n-th epoch and after the last) is in a record only where it is not 1, and never in
a run's fingerprint (`fingerprinted`): it is allowed only with the linear schedule, where the model of the last epoch
is kept and dev scores only fill the history, so it cannot change the trained model or its test scores
(tests/test_dev_every.py trains with 1 and 3 and compares the weights). It saves the dev decoding on a large dev set:
on the LER sample a fine-tuning epoch took 2.9 min on one thread, 1.9 of them training, the rest mostly LER's 6,666
dev sentences.
"""

from dataclasses import asdict, dataclass, fields, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional

import torch

from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.training import PRECISIONS
from flairsuite.values import is_int, is_number, is_positive_number, show

# Adam and AdamW step through torch's fused kernel (CPU and CUDA): on the 11 M parameters of bert/de-cpu a step takes
# 26 ms against the default loop's 151 (benchmarks/optimizer_step.py, one Zen 3 thread), where that loop's step was a
# quarter of a fine-tuning epoch; parameters equal to rounding (2e-8). `train-bert` uses it too; SGD keeps torch's default.
FUSED = frozenset({"adam", "adamw"})
OPTIMIZERS: Mapping[str, type[torch.optim.Optimizer]] = MappingProxyType(
    {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
)
SCHEDULES = ("plateau", "linear")  # anneal on a dev plateau and keep the best dev epoch | warm-up, linear decay, last epoch
# recorded only where one differs from its default
LATER_SETTINGS = ("schedule", "warmup_fraction", "epoch_samples", "bucket_batches", "precision", "decoder_learning_rate", "dev_every")
# left out of every record while at its default: no record from before it changes
OMITTED_AT_DEFAULT = ("precision", "decoder_learning_rate", "dev_every")
NOT_FINGERPRINTED = ("dev_every",)  # never in a run's fingerprint: it cannot change the trained model (see the module docstring)

# setting -> (what its value must be, the test)
CHECKS: Mapping[str, tuple[str, Callable[[Any], bool]]] = MappingProxyType(
    {
        "learning_rate": ("a positive number", is_positive_number),
        "mini_batch_size": ("a positive integer", lambda v: is_int(v) and v > 0),
        "max_epochs": ("a positive integer", lambda v: is_int(v) and v > 0),
        "anneal_factor": ("a number in (0, 1]", lambda v: is_number(v) and 0 < v <= 1),
        "patience": ("a non-negative integer", lambda v: is_int(v) and v >= 0),
        "optimizer": (f"one of: {', '.join(OPTIMIZERS)}", lambda v: isinstance(v, str) and v in OPTIMIZERS),
        "train_with_dev": ("true or false", lambda v: isinstance(v, bool)),
        "schedule": (f"one of: {', '.join(SCHEDULES)}", lambda v: isinstance(v, str) and v in SCHEDULES),
        "warmup_fraction": ("a number in [0, 1)", lambda v: is_number(v) and 0 <= v < 1),
        "epoch_samples": ("a positive integer, or null for one pass over train", lambda v: v is None or (is_int(v) and v > 0)),
        "bucket_batches": ("a positive integer, or null for batches in random order", lambda v: v is None or (is_int(v) and v > 0)),
        "precision": (f"one of: {', '.join(PRECISIONS)}", lambda v: isinstance(v, str) and v in PRECISIONS),
        "decoder_learning_rate": ("a positive number, or null for learning_rate", lambda v: v is None or is_positive_number(v)),
        "dev_every": ("a positive integer", lambda v: is_int(v) and v > 0),
    }
)


def _check(key: str, value: Any, where: Optional[str] = None) -> None:
    """A one-line error unless `value` suits setting `key`; `where` (e.g. `tagger_train.map`) prefixes the key."""
    description, test = CHECKS[key]
    if not test(value):
        raise FlairsuiteError(f"{f'{where}.' if where else ''}{key} must be {description} (found {show(value)})")


@dataclass(frozen=True)
class TrainSettings:
    """How a tagger is trained; the defaults are the paper's (see the module docstring)."""

    learning_rate: float = 0.1
    mini_batch_size: int = 32
    max_epochs: int = 150
    anneal_factor: float = 0.5
    patience: int = 3
    optimizer: str = "sgd"  # a key of OPTIMIZERS
    train_with_dev: bool = False
    schedule: str = "plateau"  # a key of SCHEDULES
    warmup_fraction: float = 0.1  # of all steps, with schedule "linear"
    epoch_samples: Optional[int] = None  # sentences per epoch (drawn from shuffled passes over train); None: one pass
    bucket_batches: Optional[int] = None  # batches of similar length from pools of this many batches (tagging/train.py); None: random
    precision: str = "float32"  # a key of PRECISIONS: "bfloat16" runs the training steps under autocast (tagging/train.py)
    decoder_learning_rate: Optional[float] = None  # the parameters outside the embeddings (Flair's fine_tune option); None: learning_rate
    dev_every: int = 1  # score dev after every n-th epoch and the last; above 1 only with schedule "linear"

    def __post_init__(self) -> None:
        for setting in fields(self):
            _check(setting.name, getattr(self, setting.name))
        if self.dev_every != 1 and self.schedule != "linear":
            raise FlairsuiteError(f"dev_every: {self.dev_every} needs schedule: linear "
                                  f"(schedule {self.schedule} anneals on the dev score of every epoch and keeps the best)")

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The names of the settings, in declaration order."""
        return tuple(setting.name for setting in fields(cls))

    @classmethod
    def check_overrides(cls, where: str, data: Any) -> dict[str, Any]:
        """`data` (a mapping of some settings, or None) as a dict, checked key by key in its order.

        `where` names it in errors: `train`, `tagger_train.map`.
        """
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            raise FlairsuiteError(f"{where} must be a mapping of training settings, e.g. {{max_epochs: 20}}")
        for key, value in data.items():
            if key not in CHECKS:
                raise FlairsuiteError(f"{where}: {unknown_name_error('training setting', str(key), list(cls.keys()))}")
            _check(key, value, where)
        return dict(data)

    @classmethod
    def from_mapping(cls, where: str, data: Any, base: Optional["TrainSettings"] = None) -> "TrainSettings":
        """`base` (default: the paper's settings) with the settings in `data` replaced, checked as by `check_overrides`."""
        return replace(base if base is not None else cls(), **cls.check_overrides(where, data))

    def overridden(self, *overrides: Mapping[str, Any]) -> "TrainSettings":
        """These settings with those of each mapping in `overrides` replaced, later ones winning (keys must be known)."""
        merged: dict[str, Any] = {}
        for override in overrides:
            merged.update(override)
        return replace(self, **merged)

    def record(self) -> dict[str, Any]:
        """The settings as a plain dict for run records; without those of `LATER_SETTINGS` while all of them hold their
        defaults, and without those of `OMITTED_AT_DEFAULT` while each holds its own."""
        record, default = asdict(self), TrainSettings()
        omitted = {key for key in OMITTED_AT_DEFAULT if record[key] == getattr(default, key)}
        if all(record[key] == getattr(default, key) for key in LATER_SETTINGS):
            omitted |= set(LATER_SETTINGS)
        return {key: value for key, value in record.items() if key not in omitted}

    @staticmethod
    def fingerprinted(record: Mapping[str, Any]) -> dict[str, Any]:
        """A `record()` without the settings that cannot change the trained model (`NOT_FINGERPRINTED`)."""
        return {key: value for key, value in record.items() if key not in NOT_FINGERPRINTED}

    def make_optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        """The torch optimizer that `optimizer` names over parameter `groups`, at `learning_rate`; Adam and AdamW as torch's
        fused kernels (`FUSED`)."""
        options = {"fused": True} if self.optimizer in FUSED else {}
        return OPTIMIZERS[self.optimizer](groups, lr=self.learning_rate, **options)
