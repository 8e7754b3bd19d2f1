"""`flairsuite tag` on an experiment with a `self_training:` block: self-training studies, round by round.

Every corpus x stack x tagger x seed of the grid is one study. Round 0 trains the tagger from scratch on the labelled
part (all of train with `text:`; train without the held-back share with `hold_back:`) and tags the pool. For each
threshold, round r keeps the pool sentences whose pseudo-labels by the model of round r - 1 (round 0's for r = 1) have
a confidence at or above the threshold (`flairsuite.experiments.pseudo_labels`) and trains the tagger from scratch on
the labelled part plus those sentences under their pseudo-labels. Every round is selected on the corpus's dev split and
scored on dev and test; its record holds how many pool sentences were kept and, with `hold_back`, the F1 of those
pseudo-labels against the hidden gold tags. Training is the grid's (`train_tagger` on cached embeddings, the run's seed
and settings); the pool's gold tags never reach a training set. A study keeps the model of its best round on dev (the
earlier round on a tie) as `model.pt`, a Flair SequenceTagger as a grid run's, with its test tags (`predictions.tsv`) and
`model.json`, the run record a grid run's metrics.json holds, with the round: the self-trained tagger to predict with.

Resumable, and a rerun is identical: a round's model tags the pool (`labels-<r>.json`, atomically) before the round's
scores are written (`round-<r>.json`, last, marks it finished), and a round that beats the finished ones on dev saves its
model before its scores; a killed study continues at its first round without
scores, from that round's epoch checkpoint, and always trains on the recorded pseudo-labels. Files and the table:
`flairsuite.results.self_training_report`. A changed block, grid, text or embedding file under the same name is
refused unless `--force`, which starts the studies over.
"""

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Optional

import flair
import torch
from tqdm import tqdm

from flairsuite.embeddings import artifact_digest
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.grid import Run, runs
from flairsuite.experiments.identity import digest, fingerprint, run_record
from flairsuite.experiments.pseudo_labels import LABELS_RECORD, PseudoLabels, label_pool
from flairsuite.experiments.reading import Experiment
from flairsuite.experiments.rounds import check_rounds_state, round_record
from flairsuite.experiments.run_data import GridData, features, label_type, run_stack, tag_dictionary
from flairsuite.experiments.runner import MODEL_FILE, run_metrics, save_decoded, select
from flairsuite.experiments.self_training_pool import StudyData, hold_back_data, text_data, with_pseudo_labels
from flairsuite.experiments.self_training_settings import SelfTraining
from flairsuite.experiments.self_training_text import text_digest, text_split
from flairsuite.files.atomic import write_json, write_text
from flairsuite.files.locks import claimed
from flairsuite.files.paths import results_dir
from flairsuite.files.summary_file import read_record
from flairsuite.models.registry import build_tagger
from flairsuite.results.metrics_file import write_metrics
from flairsuite.results.self_training_report import (
    CHOSEN_FILE,
    CSV_FILE,
    POOL_FILE,
    STATE_FILE,
    TABLE_FILE,
    labels_file,
    round_file,
    round_name,
    rounds_frame,
    self_training_report,
    threshold_folder,
)
from flairsuite.settings_schema import TEXT
from flairsuite.tagging.cache import cached_vectors
from flairsuite.tagging.data import LabeledSplit
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.scoring import task_scores
from flairsuite.tagging.tagger_training import TaggerProgress, train_tagger

CHECKPOINT_FILE = "checkpoint.pt"
TEXT_SPLIT = "self-training text"


def study_folder(out: Path, run: Run) -> Path:
    """`<corpus>/<stack>/<tagger>/seed-<n>` below the experiment's results folder (the run's own id)."""
    return out / run.run_id


def log(line: str) -> None:
    """A progress line on stderr (stdout holds the tables)."""
    tqdm.write(line, file=sys.stderr)


class TextPools:
    """The user's text as one unlabelled split per corpus (its segmentation, its dev and test sentences left out), and its
    cached embedding arrays; each read or computed once."""

    def __init__(self, data: GridData, texts: Sequence[Path], max_sentences: Optional[int] = None) -> None:
        self.data, self.texts, self.max_sentences = data, texts, max_sentences
        self.splits: dict[str, tuple[LabeledSplit, int, int]] = {}

    def split(self, run: Run) -> tuple[LabeledSplit, int, int]:
        """The text's sentences for the run's corpus (at most `max_sentences`), how many equal a dev or test sentence (left
        out), and how many it holds apart from those before the cap (`self_training_text.text_split`)."""
        corpus = run.corpus
        if corpus.key not in self.splits:
            spec, splits = corpus.spec(), self.data.splits(corpus)
            unseen = [*splits["dev"].texts, *splits["test"].texts]
            self.splits[corpus.key] = text_split(self.texts, spec.segmentation, spec.max_tokens, unseen, self.max_sentences)
        return self.splits[corpus.key]

    def features(self, run: Run) -> SplitFeatures:
        """The text under the run's stack, every embedding's array from the cache (named by the text's tokens)."""
        split = self.split(run)[0]
        parts = []
        for spec in run.embedding_specs:
            key = (run.corpus.key, spec, TEXT_SPLIT)
            if key not in self.data.arrays:
                self.data.arrays[key], computed = cached_vectors(spec, split, self.data.home, f"embed {run.corpus.key} text {spec}", self.data.cache)
                self.data.computed += computed
            parts.append(self.data.arrays[key])
        return SplitFeatures(split, parts)


class Study:
    """Self-training on one run of the grid (corpus, stack, tagger, seed): its rounds for every threshold, resumable."""

    def __init__(self, config: ExperimentConfig, run: Run, data: GridData, texts: Optional[TextPools], folder: Path, key: str,
                 artifacts: dict[str, str]) -> None:
        self.config, self.run, self.data, self.texts, self.folder, self.key = config, run, data, texts, folder, key
        self.artifacts = artifacts  # each embedding spec's file digest, recorded with the kept model
        self.settings: SelfTraining = config.self_training  # type: ignore[assignment]

    def cached(self, split: str) -> SplitFeatures:
        """One split of the run's corpus from the embedding cache (every embedding of a studied stack is frozen)."""
        return features(self.run, [None] * len(self.run.embedding_specs), self.data, split)  # type: ignore[list-item]

    def study_data(self) -> StudyData:
        """The labelled part and the pool (module docstring of `self_training_pool`)."""
        train = self.cached("train")
        if self.settings.hold_back is not None:
            return hold_back_data(train, self.settings.hold_back, self.run.seed)
        assert self.texts is not None
        return text_data(train, self.texts.features(self.run))

    def record_pool(self, data: StudyData) -> None:
        """`pool.json`, once: the held-back train sentences (or the text's sentence count); one of other settings is refused."""
        path = self.folder / POOL_FILE
        if path.is_file():
            if read_record(path, {"key": TEXT}, remedy="delete the folder to study it again")["key"] != self.key:
                raise FlairsuiteError(f"{path}: recorded for other settings: pass --force to start the study over")
            return
        _, excluded, found = self.texts.split(self.run) if self.texts is not None else (None, 0, len(data.pool))
        write_json(path, {"key": self.key, "mode": self.settings.mode, "seed": self.run.seed, "labelled": len(data.labelled),
                          "pool": len(data.pool), "held_back": data.held_back, "left_out_dev_test": excluded,
                          **({"text_sentences": found} if found != len(data.pool) else {})})

    def train(self, train: SplitFeatures, folder: Path, desc: str, key: str) -> tuple[torch.nn.Module, TaggerProgress]:
        """A fresh tagger trained on `train` (dev: the corpus's), resuming its checkpoint in `folder`."""
        run = self.run
        flair.set_seed(run.seed)
        model = build_tagger(run.tagger, run_stack(run, self.data.home), tag_dictionary(run.corpus), label_type(run.corpus))
        progress = train_tagger(model, train, self.cached("dev"), run.train_settings, run.seed, folder / CHECKPOINT_FILE, desc, key=key,
                                task=run.corpus.task.name)
        (folder / CHECKPOINT_FILE).unlink(missing_ok=True)
        return model, progress

    def labels(self, model: torch.nn.Module, data: StudyData, floor: float, target: Path) -> PseudoLabels:
        """The model's pseudo-labels of the pool, written to `target` unless recorded there already (then those are read)."""
        if target.is_file():
            return self.read_labels(target)
        found = label_pool(model, data.pool, floor, data.pool_gold, self.run.corpus.task.name)
        write_json(target, {"key": self.key, **found.record()})
        return found

    def read_labels(self, path: Path) -> PseudoLabels:
        record = read_record(path, {"key": TEXT, **LABELS_RECORD}, remedy="delete it and the rounds after it to tag the pool again")
        if record["key"] != self.key:
            raise FlairsuiteError(f"{path}: recorded for other settings: pass --force to start the study over")
        return PseudoLabels.of_record(record)

    def scored(self, model: torch.nn.Module, progress: TaggerProgress, started: float, **fields: Any) -> dict[str, Any]:
        """The record of a round: where it belongs, what it trained on (`fields`), dev and test scores (`rounds.round_record`)."""
        return round_record(self.run, model, progress, started, self.cached("dev"), self.cached("test"), **fields)

    def keep_if_best(self, model: torch.nn.Module, record: dict[str, Any], progress: TaggerProgress, started: float) -> None:
        """Keep `model` as the study's model where its dev score beats every finished round's: model.pt, predictions.tsv (test)
        and model.json, the run record a grid run's metrics.json holds (history, scores, settings, versions) with the round
        (`round`, `self_training`). The round's scores are written after this, so a study killed in between trains the round
        again and keeps it again."""
        finished = rounds_frame(self.folder)
        if not finished.empty and record["dev"] <= finished["dev"].max():
            return
        dev, test = self.cached("dev"), self.cached("test")
        raw = save_decoded(self.run, model, dev, test, self.folder)
        (metrics,) = run_metrics(self.run, self.data.home, progress, dev, test, raw, started, self.key, self.artifacts, fixes=(False,)).values()
        chosen = {key: record[key] for key in ("threshold", "round", "labelled", "pool", "kept", "kept_tokens", "pseudo")}
        write_metrics(self.folder / CHOSEN_FILE, {**metrics, "round": round_name(record["threshold"], record["round"]), "self_training": chosen})

    def pseudo_score(self, data: StudyData, kept: list[int], labels: PseudoLabels) -> Optional[float]:
        """The main score of the kept pseudo-labels against the pool's gold tags (None: gold unknown, or nothing kept)."""
        if data.pool_gold is None or not kept:
            return None
        task = self.run.corpus.task
        return task_scores(task.name, [data.pool_gold[i] for i in kept], [labels.tags[i] for i in kept])[task.metric]

    def round_zero(self, data: StudyData, echo: Callable[[str], None]) -> PseudoLabels:
        """Round 0 (the labelled part only) and its pseudo-labels of the pool, for every threshold's round 1."""
        target = labels_file(self.folder, 0)
        if round_file(self.folder, 0).is_file():
            return self.read_labels(target)
        started, desc = time.perf_counter(), f"{self.run.run_id} round 0"
        model, progress = self.train(data.labelled, self.folder, desc, f"{self.key}:round-0")
        labels = self.labels(model, data, min(self.settings.thresholds), target)
        record = self.scored(model, progress, started, threshold=None, round=0, labelled=len(data.labelled), pool=len(data.pool), kept=0,
                             kept_tokens=0, pseudo=None, pool_scores=labels.pool_scores)
        self.keep_if_best(model, record, progress, started)
        write_json(round_file(self.folder, 0), record)
        echo(f"{desc}: {len(data.labelled)} labelled sentences, test {self.run.corpus.task.metric_title} {record['test'] * 100:.2f}")
        return labels

    def threshold_rounds(self, data: StudyData, threshold: float, labels: PseudoLabels, echo: Callable[[str], None]) -> None:
        """Rounds 1 .. `rounds` at `threshold`, each on the pseudo-labels of the round before."""
        folder = threshold_folder(self.folder, threshold)
        folder.mkdir(parents=True, exist_ok=True)
        last = self.settings.rounds
        for index in range(1, last + 1):
            if index > 1:
                labels = self.read_labels(labels_file(folder, index - 1))
            if round_file(folder, index).is_file():
                continue
            kept = labels.kept(threshold)
            desc = f"{self.run.run_id} threshold {threshold:g} round {index}"
            if kept:
                record = self.trained_round(data, threshold, index, kept, labels, folder, desc)
            else:
                record = self.round_zero_again(data, threshold, index, folder)
            write_json(round_file(folder, index), record)
            echo(f"{desc}: kept {len(kept)} of {len(data.pool)} pool sentences, test {self.run.corpus.task.metric_title} "
                 f"{record['test'] * 100:.2f}")

    def trained_round(self, data: StudyData, threshold: float, index: int, kept: list[int], labels: PseudoLabels, folder: Path,
                      desc: str) -> dict[str, Any]:
        """Round `index` at `threshold`: trained on the labelled part and the `kept` pool sentences under `labels`, then (unless it
        is the last round) its own pseudo-labels of the pool recorded; its record."""
        started = time.perf_counter()
        train = with_pseudo_labels(data.labelled, data.pool, kept, labels.tags)
        model, progress = self.train(train, folder, desc, f"{self.key}:threshold-{threshold!r}:round-{index}")
        after = self.labels(model, data, threshold, labels_file(folder, index)) if index < self.settings.rounds else None
        record = self.scored(model, progress, started, threshold=threshold, round=index, labelled=len(data.labelled), pool=len(data.pool),
                             kept=len(kept), kept_tokens=int(sum(data.pool.lengths[i] for i in kept)),
                             pseudo=self.pseudo_score(data, kept, labels), pool_scores=None if after is None else after.pool_scores)
        self.keep_if_best(model, record, progress, started)
        return record

    def round_zero_again(self, data: StudyData, threshold: float, index: int, folder: Path) -> dict[str, Any]:
        """A round that keeps no pool sentence trains round 0's run again (same sentences, seed and settings): its record is round
        0's, and its pseudo-labels round 0's at this threshold; nothing is trained."""
        zero = read_record(round_file(self.folder, 0), remedy="delete the study's folder to study it again")
        if index < self.settings.rounds and not labels_file(folder, index).is_file():
            first = self.read_labels(labels_file(self.folder, 0))
            same = PseudoLabels(first.confidences, {i: first.tags[i] for i in first.kept(threshold)}, threshold, first.pool_scores)
            write_json(labels_file(folder, index), {"key": self.key, **same.record()})
        return {**zero, "threshold": threshold, "round": index, "kept": 0, "kept_tokens": 0, "pseudo": None, "seconds": 0.0,
                "same_as": "round 0 (no pool sentence kept)"}

    def study(self, echo: Callable[[str], None]) -> None:
        """Every round still without scores."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data = self.study_data()
        self.record_pool(data)
        labels = self.round_zero(data, echo)
        for threshold in self.settings.thresholds:
            self.threshold_rounds(data, threshold, labels, echo)


def study_key(config: ExperimentConfig, digests: dict[str, str], text_digests: list[str]) -> str:
    """What the studies compute: the grid's runs, the block (its texts by checksum) and the embedding files."""
    assert config.self_training is not None
    return digest({"grid": fingerprint(config), "self_training": config.self_training.record(text_digests), "artifacts": digests})


def run_self_training(experiment: Experiment, home: Path, corpora_root: Path, force: bool = False, echo: Callable[[str], None] = print,
                      cache: Optional[Path] = None, patterns: Sequence[str] = ()) -> Path:
    """Every study of the experiment (those matching `patterns`: a second process may take others); its results folder."""
    config, path = experiment.config, experiment.path
    settings = config.self_training
    if settings is None:
        raise FlairsuiteError(f"{path}: no self_training block")
    grid = runs(config)
    with_dev = [run for run in grid if run.train_settings["train_with_dev"]]
    if with_dev:
        raise FlairsuiteError(f"{path}: self_training: run {with_dev[0].run_id} trains with dev, yet every round is chosen and scored on dev: "
                              "remove train_with_dev")
    chosen = select(grid, patterns)
    digests = {spec: artifact_digest(spec, home) for spec in sorted({spec for run in grid for spec in run.embedding_specs})}
    key = study_key(config, digests, [text_digest(text) for text in settings.texts])
    out = results_dir(home) / config.name
    check_rounds_state(out, out / STATE_FILE, config, key, experiment.text, force, holds="self-training", busy="studied",
                       block="self_training")
    data = GridData(home, corpora_root, cache=cache)
    texts = TextPools(data, settings.texts, settings.max_sentences) if settings.texts else None
    started, before = time.perf_counter(), len(rounds_frame(out))
    for run in tqdm(chosen, desc=f"{config.name} (self-training)", unit="study"):
        folder = study_folder(out, run)
        with claimed(folder) as mine:
            if not mine:
                log(f"{folder}: skipped, being studied by another process")
                continue
            Study(config, run, data, texts, folder, digest({"key": key, "run": run_record(run)}), digests).study(log)
    frame = rounds_frame(out)
    write_text(out / CSV_FILE, frame.to_csv(index=False))
    write_text(out / TABLE_FILE, self_training_report(out) + "\n")
    rounds = 1 + len(settings.thresholds) * settings.rounds
    echo(f"studied {len(chosen)} runs ({rounds} rounds each, {len(frame) - before} scored now, the rest before) in "
         f"{time.perf_counter() - started:.0f} s; embeddings computed for {data.computed} (split, embedding) pairs; wrote "
         f"{out / TABLE_FILE} and {out / CSV_FILE}; each study's best round on dev is its {MODEL_FILE} ({CHOSEN_FILE}: its run record "
         "and round)")
    return out
