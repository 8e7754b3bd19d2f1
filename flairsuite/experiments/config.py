"""The typed settings of an experiment file: what `experiments/validation.py` makes of its keys.

An experiment is the grid corpus x embedding stack (x fine-tuning) x tagger x seed (keys: experiments/README.md), or
the part of it that `only` keeps; `experiments/reading.py` reads a file, `experiments/validation.py` checks its keys
into an `ExperimentConfig`, `experiments/grid.py` expands that into runs.
"""

from dataclasses import dataclass, field
from typing import Any, Optional

from flairsuite.experiments.adaptation_settings import Adaptation
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.self_training_settings import SelfTraining
from flairsuite.experiments.simulation_settings import ActiveLearning
from flairsuite.experiments.transfer_settings import Transfer


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment file; `train` and `tagger_train` hold only the overrides it names (checked by `TrainSettings`)."""

    name: str
    corpora: list[CorpusChoice]
    embeddings: dict[str, tuple[str, ...]]
    taggers: list[str]
    seeds: list[int]
    train: dict[str, Any]
    tagger_train: dict[str, dict[str, Any]]
    entity_fix: tuple[bool, ...] = (False,)
    fine_tune: tuple[bool, ...] = (False,)
    fine_tune_train: dict[str, Any] = field(default_factory=dict)
    only: tuple[str, ...] = ()  # run-id patterns: the grid keeps the runs matching one (none: every run)
    active_learning: Optional[ActiveLearning] = None  # a simulation of annotation rounds (experiments/active_learning.py)
    adaptation: Optional[Adaptation] = None  # a pair adapted to own text before the runs (experiments/adaptation.py)
    self_training: Optional[SelfTraining] = None  # pseudo-labelling rounds per run (experiments/self_training.py)
    transfer: Optional[Transfer] = None  # other labelled corpora trained on first or beside (experiments/transfer.py)
