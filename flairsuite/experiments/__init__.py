"""Experiment files: one YAML file describes a grid of tagging runs (see experiments/README.md)."""

from flairsuite.experiments.config import CorpusChoice, ExperimentConfig, Run, fingerprint, load_experiment, runs

__all__ = ["CorpusChoice", "ExperimentConfig", "Run", "fingerprint", "load_experiment", "runs"]
