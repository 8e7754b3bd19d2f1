"""The grid of an experiment: its runs (corpus x embedding stack x fine-tuning x transfer mode x tagger x seed, in the file's
order, or the part that `only` keeps), each with its complete training settings."""

import fnmatch
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from flairsuite.embeddings import frozen
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.transfer_settings import NO_TRANSFER, TransferRun, transfer_run
from flairsuite.models.registry import fine_tune_train, tagger_spec
from flairsuite.results.metrics_file import FINE_TUNED


@dataclass(frozen=True)
class Run:
    """One cell of the grid, with its complete training settings (`train_settings`: a `TrainSettings` as a plain dict)."""

    experiment: str
    corpus: CorpusChoice
    embeddings: str
    embedding_specs: tuple[str, ...]
    tagger: str
    seed: int
    train_settings: dict[str, Any]
    entity_fix: tuple[bool, ...] = (False,)
    fine_tune: bool = False
    transfer: Optional[TransferRun] = None  # trained on other corpora first or beside (the `transfer:` block); None: not

    @property
    def run_id(self) -> str:
        """The run's folder below results/<experiment>/, e.g. `sturm/proposed+word/map-crf/seed-1`; fine-tuned: `sturm/bert/ft/map/seed-1`;
        with transfer: `sturm/proposed/transfer-joint/map-crf/seed-1`."""
        segments = [FINE_TUNED] * self.fine_tune + ([self.transfer.segment] if self.transfer is not None else [])
        return "/".join([self.corpus.key, self.embeddings, *segments, self.tagger, f"seed-{self.seed}"])


def tunable(specs: tuple[str, ...]) -> bool:
    """Whether fine-tuning changes the stack `specs`: one of its embeddings is fixed unless the tagger fine-tunes (`bert:`)."""
    return any(frozen(spec) and not frozen(spec, fine_tune=True) for spec in specs)


def train_settings(config: ExperimentConfig, tagger: str, corpus: Optional[CorpusChoice] = None, fine_tune: bool = False) -> dict[str, Any]:
    """The settings of a run as a plain dict (fingerprinted as it is; `TrainSettings.record`).

    Frozen: the tagger's defaults, overridden by `train`, then by `tagger_train[tagger]`, then by the
    corpus entry's own `train` and `tagger_train[tagger]` (e.g. an epoch cap on full LER). Fine-tuned:
    the fine-tuning defaults for the corpus (`registry.fine_tune_train`), overridden by `fine_tune_train`.
    """
    if fine_tune:
        dataset_name = corpus.name if corpus is not None and corpus.own is None else ""
        return fine_tune_train(dataset_name).overridden(config.fine_tune_train).record()
    own: tuple[dict[str, Any], ...] = () if corpus is None else (corpus.train, corpus.tagger_train.get(tagger, {}))
    return tagger_spec(tagger).train.overridden(config.train, config.tagger_train.get(tagger, {}), *own).record()


def runs(config: ExperimentConfig) -> list[Run]:
    """The runs of the experiment, in the file's order: the `cross` product, or the part of it that `only` keeps."""
    grid = cross(config)
    return match_runs(grid, config.only)[0] if config.only else grid


def match_runs(grid: list[Run], patterns: Sequence[str]) -> tuple[list[Run], list[str]]:
    """The runs whose id matches one of the shell-style `patterns`, and the patterns that match none."""
    unmatched = [pattern for pattern in patterns if not any(fnmatch.fnmatchcase(run.run_id, pattern) for run in grid)]
    return [run for run in grid if any(fnmatch.fnmatchcase(run.run_id, pattern) for pattern in patterns)], unmatched


def cross(config: ExperimentConfig) -> list[Run]:
    """Every run of the grid corpus x embedding stack x fine-tuning x transfer mode x tagger x seed, in the file's order.

    Fine-tuned runs only for stacks that fine-tuning changes (`tunable`); transfer modes only with a `transfer:` block.
    """
    modes = config.transfer.modes if config.transfer is not None else (NO_TRANSFER,)
    grid = []
    for corpus, stack, tune, mode, tagger, seed in itertools.product(config.corpora, config.embeddings, config.fine_tune, modes, config.taggers,
                                                                    config.seeds):
        if not tune or tunable(config.embeddings[stack]):
            settings = train_settings(config, tagger, corpus, tune)
            grid.append(Run(config.name, corpus, stack, config.embeddings[stack], tagger, seed, settings, config.entity_fix, tune,
                            transfer_run(config.transfer, mode, settings)))
    return grid
