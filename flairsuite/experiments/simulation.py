"""`flairsuite tag` on an experiment with an `active_learning:` block: simulated annotation, round by round.

For every corpus x stack x round tagger x seed of the grid and every strategy: round 0 trains the tagger from
scratch on the seed set (`seed_size` train sentences drawn at random with the run's seed, the same for every
strategy); each later round adds `batch_size` sentences chosen from the pool (the train sentences not yet
annotated) by the strategy, with the model of the round before, and trains again from scratch. The pool's gold
tags are hidden: its sentences are served to the model from a split whose tags are all `O`, and only a chosen
sentence's gold tags join the training set. Dev (model selection, as in every run) and test are the corpus's own.
`random` draws uniformly (a generator seeded by the run's seed and the round); `uncertainty` and `entropy` rank
the pool by the measures of `flairsuite.models.uncertainty` and pick with `flairsuite.models.selection`
(near-duplicates kept apart). After the last round, each `final_check` tagger (e.g. BiLSTM-CRF) trains once on the
final selection; with `full_reference` the round tagger trains once per seed on all of train.

Resumable, and a rerun is identical: a round's choice is written to `selection.json` (atomically) before the
round's scores (`round-<k>.json`, written last, mark it finished); a killed simulation continues at its first
round without scores, from that round's epoch checkpoint, and always takes its sentences from `selection.json`.
Files: `flairsuite.experiments.simulation_report`. A changed `active_learning:` block or grid under the same name is
refused unless `--force`, which starts the simulations over; `final_check` alone may change: a rerun trains the checks
it lacks and keeps every round.
"""

import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Optional

import flair
import numpy as np
import torch
from tqdm import tqdm

from flairsuite.embeddings import artifact_digest, frozen
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.grid import Run, runs, train_settings
from flairsuite.experiments.identity import digest, fingerprint, run_record
from flairsuite.experiments.reading import Experiment
from flairsuite.experiments.rounds import check_rounds_state, round_record
from flairsuite.experiments.run_data import GridData, features, label_type, run_stack, tag_dictionary
from flairsuite.experiments.simulation_report import (
    CSV_FILE,
    FINAL_PREFIX,
    FULL_FOLDER,
    SELECTION_FILE,
    STATE_FILE,
    TABLE_FILE,
    round_file,
    rounds_frame,
    simulation_report,
    write_simulation_plot,
)
from flairsuite.experiments.simulation_settings import ActiveLearning
from flairsuite.files.atomic import write_json, write_text
from flairsuite.files.locks import claimed
from flairsuite.files.paths import results_dir
from flairsuite.files.summary_file import read_record
from flairsuite.models.registry import build_tagger
from flairsuite.models.selection import pick, ranked
from flairsuite.models.uncertainty import sentence_scores
from flairsuite.settings_schema import NON_NEGATIVE_INTEGER, TEXT, Rule
from flairsuite.tagging.data import LabeledSplit
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.tagger_training import train_tagger

CHECKPOINT_FILE = "checkpoint.pt"
SCORE_BATCH = 256  # pool sentences scored per batch

ROUNDS = Rule("a list of rounds, each {round, indices: [sentence numbers], measures}",
              lambda v: isinstance(v, list) and all(isinstance(r, dict) and isinstance(r.get("indices"), list)
                                                    and all(NON_NEGATIVE_INTEGER(i) for i in r["indices"]) for r in v))
SELECTION_RECORD = {"key": TEXT, "rounds": ROUNDS}


def simulation_folder(out: Path, run: Run, strategy: str) -> Path:
    """`<corpus>/<stack>/<tagger>/<strategy>/seed-<n>` below the experiment's results folder."""
    return out / run.corpus.key / run.embeddings / run.tagger / strategy / f"seed-{run.seed}"


def seed_set(pool_size: int, size: int, seed: int) -> list[int]:
    """The sentences annotated before the first selection: `size` of the pool drawn with `seed` (sorted)."""
    if size > pool_size:
        raise FlairsuiteError(f"active_learning: seed_size {size} is larger than the {pool_size} train sentences")
    return sorted(random.Random(seed).sample(range(pool_size), size))


def hidden(split: LabeledSplit) -> LabeledSplit:
    """The split with every gold tag replaced by `O`: the pool as the selection sees it."""
    return LabeledSplit(split.texts, split.spaces, [["O"] * len(tags) for tags in split.tags], breaks=split.breaks)


def subset(full: SplitFeatures, indices: list[int]) -> SplitFeatures:
    """The sentences `indices` of `full` as a split of their own (cached rows gathered into memory)."""
    split = full.split
    chosen = LabeledSplit([split.texts[i] for i in indices], [split.spaces[i] for i in indices], [split.tags[i] for i in indices],
                          breaks={new: split.breaks[old] for new, old in enumerate(indices) if old in split.breaks})
    rows = np.concatenate([np.arange(full.offsets[i], full.offsets[i + 1]) for i in indices])
    return SplitFeatures(chosen, [np.ascontiguousarray(part[rows]) if isinstance(part, np.ndarray) else part for part in full.parts])


def choose(strategy: str, model: torch.nn.Module, pool: SplitFeatures, candidates: list[int], n: int, rng: random.Random) -> tuple[list[int], list[float]]:
    """`n` of the pool sentences `candidates` (fewer if the pool is smaller) by `strategy`, with each one's measure (random: none)."""
    n = min(n, len(candidates))
    if strategy == "random":
        return sorted(rng.sample(candidates, n)), []
    values: dict[int, float] = {}
    with torch.no_grad():
        for batch in pool.longest_first(SCORE_BATCH, candidates):
            for index, found in zip(batch.order, sentence_scores(model, batch.tensor, batch.lengths)):
                values[index] = found.measure(strategy)
    measured = [values[i] for i in candidates]
    picked = [candidates[i] for i in pick(ranked(measured), [pool.split.texts[i] for i in candidates], n)]
    return picked, [round(values[i], 6) for i in picked]


class Simulation:
    """One strategy on one run of the grid (corpus, stack, round tagger, seed): its rounds, resumable."""

    def __init__(self, config: ExperimentConfig, run: Run, strategy: str, data: GridData, folder: Path, key: str) -> None:
        self.config, self.run, self.strategy, self.data, self.folder, self.key = config, run, strategy, data, folder, key
        self.settings: ActiveLearning = config.active_learning  # type: ignore[assignment]

    def cached(self, split: str) -> SplitFeatures:
        """One split of the run's corpus from the embedding cache (every embedding of a simulated stack is frozen)."""
        return features(self.run, [None] * len(self.run.embedding_specs), self.data, split)  # type: ignore[list-item]

    def selection(self) -> list[dict[str, Any]]:
        """The recorded rounds' choices: [{"round": k, "indices": [...], "measures": [...]}, ...]; round 0 is the seed set."""
        path = self.folder / SELECTION_FILE
        if not path.is_file():
            return []
        recorded = read_record(path, SELECTION_RECORD, remedy="delete the folder to simulate it again")
        if recorded["key"] != self.key:
            raise FlairsuiteError(f"{path}: recorded for other settings: pass --force to start the simulation over")
        return list(recorded["rounds"])

    def record(self, rounds: list[dict[str, Any]]) -> None:
        write_json(self.folder / SELECTION_FILE, {"key": self.key, "strategy": self.strategy, "seed": self.run.seed, "rounds": rounds})

    def train(self, tagger: str, train: SplitFeatures, desc: str, key: str, settings: Optional[dict[str, Any]] = None) -> tuple[torch.nn.Module, Any]:
        """A fresh `tagger` trained on `train` (dev: the corpus's), resuming its checkpoint in the folder."""
        run = self.run
        flair.set_seed(run.seed)
        model = build_tagger(tagger, run_stack(run, self.data.home), tag_dictionary(run.corpus), label_type(run.corpus))
        dev = self.cached("dev")
        progress = train_tagger(model, train, dev, settings or run.train_settings, run.seed, self.folder / CHECKPOINT_FILE, desc, key=key,
                                task=run.corpus.task.name)
        (self.folder / CHECKPOINT_FILE).unlink(missing_ok=True)
        return model, progress

    def scored(self, model: torch.nn.Module, progress: Any, started: float, **fields: Any) -> dict[str, Any]:
        """The record of a trained model: where it belongs, dev and test scores (`rounds.round_record`)."""
        return round_record(self.run, model, progress, started, self.cached("dev"), self.cached("test"), **fields)

    def simulate(self, echo: Callable[[str], None]) -> None:
        """Every round still without scores, then the final checks."""
        settings, run = self.settings, self.run
        self.folder.mkdir(parents=True, exist_ok=True)
        gold = self.cached("train")
        pool = SplitFeatures(hidden(gold.split), gold.parts)
        rounds = self.selection()
        if not rounds:
            rounds = [{"round": 0, "indices": seed_set(len(pool), settings.seed_size, run.seed), "measures": []}]
            self.record(rounds)
        for index in range(settings.rounds + 1):
            if round_file(self.folder, index).is_file() and (index == settings.rounds or len(rounds) > index + 1):
                continue
            annotated = sorted(i for entry in rounds[: index + 1] for i in entry["indices"])
            started = time.perf_counter()
            desc = f"{run.run_id} {self.strategy} round {index}"
            model, progress = self.train(run.tagger, subset(gold, annotated), desc, f"{self.key}:round-{index}")
            if index < settings.rounds and len(rounds) == index + 1:
                chosen = set(annotated)
                candidates = [i for i in range(len(pool)) if i not in chosen]
                rng = random.Random(run.seed * 1_000_003 + index)
                indices, measures = choose(self.strategy, model, pool, candidates, settings.batch_size, rng)
                rounds.append({"round": index + 1, "indices": indices, "measures": measures})
                self.record(rounds)  # before the round's scores: a rerun takes these sentences
            record = self.scored(model, progress, started, strategy=self.strategy, round=index, sentences=len(annotated),
                                 tokens=int(sum(gold.lengths[i] for i in annotated)))
            write_json(round_file(self.folder, index), record)
            echo(f"{desc}: {len(annotated)} sentences, test {run.corpus.task.metric_title} {record['test'] * 100:.2f}")
        final = sorted(i for entry in rounds[: settings.rounds + 1] for i in entry["indices"])
        for tagger in settings.final_check:
            target = self.folder / f"{FINAL_PREFIX}{tagger}.json"
            if target.is_file():
                continue
            started = time.perf_counter()
            model, progress = self.train(tagger, subset(gold, final), f"{run.run_id} {self.strategy} final {tagger}", f"{self.key}:final-{tagger}",
                                         train_settings(self.config, tagger, run.corpus))
            record = self.scored(model, progress, started, kind=f"{FINAL_PREFIX}{tagger}", strategy=self.strategy, sentences=len(final),
                                 final_tagger=tagger)
            write_json(target, record)
            echo(f"{run.run_id} {self.strategy} final {tagger}: test {record['test'] * 100:.2f}")


def full_reference(config: ExperimentConfig, run: Run, data: GridData, out: Path, key: str, echo: Callable[[str], None]) -> None:
    """The round tagger trained on all of train once per seed: `<corpus>/<stack>/<tagger>/full/seed-<n>.json`."""
    target = out / run.corpus.key / run.embeddings / run.tagger / FULL_FOLDER / f"seed-{run.seed}.json"
    if target.is_file():
        return
    folder = target.with_suffix("")  # the checkpoint while it trains
    folder.mkdir(parents=True, exist_ok=True)
    helper = Simulation(config, run, FULL_FOLDER, data, folder, key)
    started = time.perf_counter()
    train = helper.cached("train")
    model, progress = helper.train(run.tagger, train, f"{run.run_id} full", f"{key}:full")
    record = helper.scored(model, progress, started, kind=FULL_FOLDER, strategy=None, sentences=len(train), tokens=int(train.lengths.sum()))
    write_json(target, record)
    shutil.rmtree(folder, ignore_errors=True)
    echo(f"{run.run_id} on all of train ({len(train)} sentences): test {run.corpus.task.metric_title} {record['test'] * 100:.2f}")


def simulation_key(config: ExperimentConfig, digests: dict[str, str]) -> str:
    """What the rounds compute: the grid's runs, the block and the embedding files. `final_check` is left out (counted as empty),
    since the rounds do not depend on it: adding a check to a finished simulation trains only the check."""
    assert config.active_learning is not None
    block = {**config.active_learning.record(), "final_check": []}
    return digest({"grid": fingerprint(config), "active_learning": block, "artifacts": digests})


def run_simulation(experiment: Experiment, home: Path, corpora_root: Path, force: bool = False, echo: Callable[[str], None] = print,
                   cache: Optional[Path] = None, patterns: Sequence[str] = ()) -> Path:
    """Simulate every strategy on every run of the experiment; its results folder (tables and plot written there)."""
    config, path = experiment.config, experiment.path
    settings = config.active_learning
    if settings is None:
        raise FlairsuiteError(f"{path}: no active_learning block")
    if patterns:
        raise FlairsuiteError(f"{path}: --runs does not split an active_learning simulation: start a second process instead "
                              "(it skips the simulations the first one holds)")
    grid = runs(config)
    live = sorted({spec for run in grid for spec in run.embedding_specs if not frozen(spec)})
    if live:
        raise FlairsuiteError(f"{path}: active_learning: {live[0]} trains with the tagger, so rounds cannot retrain on cached embeddings: "
                              "use frozen embeddings (charlm:, fasttext:, bert: without fine-tuning)")
    digests = {spec: artifact_digest(spec, home) for spec in sorted({spec for run in grid for spec in run.embedding_specs})}
    key = simulation_key(config, digests)
    out = results_dir(home) / config.name
    data = GridData(home, corpora_root, cache=cache)
    sizes = {run.corpus.key: len(data.splits(run.corpus)["train"]) for run in grid}
    check_rounds_state(out, out / STATE_FILE, config, key, experiment.text, force, holds="a simulation", busy="simulated",
                       block="active_learning", train_sentences=sizes)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(run, strategy) for run in grid for strategy in settings.strategies]
    started = time.perf_counter()
    for run, strategy in tqdm(jobs, desc=f"{config.name} (simulations)", unit="sim"):
        folder = simulation_folder(out, run, strategy)
        with claimed(folder) as mine:
            if not mine:
                tqdm.write(f"{folder}: skipped, being simulated by another process")
                continue
            simulation = Simulation(config, run, strategy, data, folder, digest({"key": key, "run": run_record(run), "strategy": strategy}))
            simulation.simulate(tqdm.write)
    if settings.full_reference:
        for run in tqdm(grid, desc=f"{config.name} (all of train)", unit="run"):
            folder = out / run.corpus.key / run.embeddings / run.tagger / FULL_FOLDER
            with claimed(folder) as mine:  # one process trains the references
                if mine:
                    full_reference(config, run, data, out, digest({"key": key, "run": run_record(run)}), tqdm.write)
    frame = rounds_frame(out)
    write_text(out / CSV_FILE, frame.to_csv(index=False))
    write_text(out / TABLE_FILE, simulation_report(out) + "\n")
    write_simulation_plot(out)
    echo(f"simulated {len(jobs)} strategy x run pairs ({settings.rounds + 1} rounds each) in {time.perf_counter() - started:.0f} s; "
         f"embeddings computed for {data.computed} (corpus split, embedding) pairs; wrote {out / TABLE_FILE}, {out / CSV_FILE} and the plot")
    return out
