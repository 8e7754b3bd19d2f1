"""Experiment files: one YAML file describes a grid of tagging runs (see experiments/README.md)."""

from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.grid import Run, runs
from flairsuite.experiments.identity import fingerprint
from flairsuite.experiments.reading import load_experiment

__all__ = ["CorpusChoice", "ExperimentConfig", "Run", "fingerprint", "load_experiment", "runs"]
