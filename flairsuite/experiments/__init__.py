"""Experiment files: one YAML file describes a grid of tagging runs (see experiments/README.md)."""

from flairsuite.experiments.config import CorpusChoice, ExperimentConfig, Run, load_experiment, runs
from flairsuite.experiments.identity import fingerprint

__all__ = ["CorpusChoice", "ExperimentConfig", "Run", "fingerprint", "load_experiment", "runs"]
