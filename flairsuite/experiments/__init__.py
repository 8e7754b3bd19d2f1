"""Experiments: one YAML file describes a grid of tagging runs (experiments/README.md); here it is read and checked
(`reading`, `validation`, `config`), expanded into runs (`grid`) and run (`runner`, `ray_runner`), with its `adapt:`
block (`adaptation`), its `transfer:` block (`transfer`) and its active-learning simulation (`simulation`)."""

from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.grid import Run, runs
from flairsuite.experiments.identity import fingerprint
from flairsuite.experiments.reading import Experiment, load_experiment, read_experiment

__all__ = ["CorpusChoice", "Experiment", "ExperimentConfig", "Run", "fingerprint", "load_experiment", "read_experiment", "runs"]
