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

from dataclasses import asdict, dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping, Optional

import torch

from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.runtime.precision import PRECISIONS
from flairsuite.settings_schema import (
    FLAG,
    NON_NEGATIVE_INTEGER,
    POSITIVE_INTEGER,
    POSITIVE_NUMBER,
    CheckedSettings,
    interval,
    one_of,
    setting,
)

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


@dataclass(frozen=True)
class TrainSettings(CheckedSettings):
    """How a tagger is trained; the defaults are the paper's (see the module docstring)."""

    learning_rate: float = setting(POSITIVE_NUMBER, 0.1)
    mini_batch_size: int = setting(POSITIVE_INTEGER, 32)
    max_epochs: int = setting(POSITIVE_INTEGER, 150)
    anneal_factor: float = setting(interval(0, 1, low_open=True, high_open=False), 0.5)
    patience: int = setting(NON_NEGATIVE_INTEGER, 3)
    optimizer: str = setting(one_of(tuple(OPTIMIZERS)), "sgd")
    train_with_dev: bool = setting(FLAG, False)
    schedule: str = setting(one_of(SCHEDULES), "plateau")
    warmup_fraction: float = setting(interval(0, 1, low_open=False, high_open=True), 0.1)  # of all steps, with schedule "linear"
    # sentences per epoch (drawn from shuffled passes over train); None: one pass
    epoch_samples: Optional[int] = setting(POSITIVE_INTEGER.or_null("one pass over train"), None)
    # batches of similar length from pools of this many batches (tagging/train.py); None: random
    bucket_batches: Optional[int] = setting(POSITIVE_INTEGER.or_null("batches in random order"), None)
    # "bfloat16" runs the training steps under autocast (tagging/train.py)
    precision: str = setting(one_of(PRECISIONS), "float32")
    # the parameters outside the embeddings (Flair's fine_tune option); None: learning_rate
    decoder_learning_rate: Optional[float] = setting(POSITIVE_NUMBER.or_null("learning_rate"), None)
    dev_every: int = setting(POSITIVE_INTEGER, 1)  # score dev after every n-th epoch and the last; above 1 only with schedule "linear"

    def check_together(self) -> None:
        if self.dev_every != 1 and self.schedule != "linear":
            raise FlairsuiteError(f"dev_every: {self.dev_every} needs schedule: linear "
                                  f"(schedule {self.schedule} anneals on the dev score of every epoch and keeps the best)")

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
            if key not in cls.keys():
                raise FlairsuiteError(f"{where}: {unknown_name_error('training setting', str(key), list(cls.keys()))}")
            cls.check_value(key, value, where)
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
