"""`flairsuite tag`: run every cell of an experiment grid, skipping finished runs, and print the table.

Layout of `results/<experiment>/`:

- `experiment.json`: the config's fingerprint and file text; a different config under the same
  name is refused unless `--force`, which also removes runs the new grid no longer has.
- `<corpus>/<stack>/<tagger>/seed-<n>/`: `model.pt` (a plain Flair `SequenceTagger`),
  `predictions.tsv` (test tokens, gold tag, raw predicted tag: the decoder's output before any
  span repair), `metrics.json` (flairsuite/results/collect.py; written last, so its presence marks
  a finished run) and, while training, `checkpoint.pt` (a killed run continues at its last epoch).
"""

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import flair
import torch
from flair.data import Dictionary
from flair.embeddings import StackedEmbeddings, TokenEmbeddings
from tqdm import tqdm

import flairsuite
from flairsuite.atomic import atomic_file, write_json, write_text
from flairsuite.corpora.registry import dataset
from flairsuite.embeddings import artifact_digest, stack
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.config import CorpusChoice, ExperimentConfig, Run, digest, fingerprint, load_experiment, run_record, runs
from flairsuite.results.collect import METRICS_FILE, read_run
from flairsuite.tagging.cache import cached_vectors, frozen
from flairsuite.tagging.data import LabeledSplit, load_labeled, subsample_note
from flairsuite.tagging.features import Part, SplitFeatures
from flairsuite.tagging.scoring import flair_f1, strict_scores
from flairsuite.tagging.train import decode, train_tagger
from flairsuite.taggers import build_tagger

STATE_FILE = "experiment.json"
MODEL_FILE = "model.pt"
PREDICTIONS_FILE = "predictions.tsv"
CHECKPOINT_FILE = "checkpoint.pt"
LABEL_TYPE = "ner"
TRAIN_WITH_DEV = "train+dev"  # the training split of `train_with_dev` runs (cached on its own)


@dataclass
class GridData:
    """Corpora and cached embedding arrays loaded so far, shared by the runs of one grid."""

    home: Path
    corpora_root: Path
    corpora: dict[str, dict[str, LabeledSplit]]
    arrays: dict[tuple[str, str, str], Any]
    computed: int = 0

    def splits(self, corpus: CorpusChoice) -> dict[str, LabeledSplit]:
        """Train, dev and test of `corpus` (read once)."""
        if corpus.key not in self.corpora:
            splits = load_labeled(corpus.name, corpus.options, corpus.subsample, self.corpora_root)
            train, dev = splits["train"], splits["dev"]
            splits[TRAIN_WITH_DEV] = LabeledSplit(train.sentences + dev.sentences, train.tags + dev.tags)
            self.corpora[corpus.key] = splits
        return self.corpora[corpus.key]

    def array(self, corpus: CorpusChoice, spec: str, split: str) -> Any:
        """The cached vectors of `spec` on one split of `corpus` (computed once, ever)."""
        key = (corpus.key, spec, split)
        if key not in self.arrays:
            sentences = self.splits(corpus)[split].sentences
            self.arrays[key], computed = cached_vectors(spec, sentences, self.home, f"embed {corpus.key} {split} {spec}")
            self.computed += computed
        return self.arrays[key]


def embedding_modules(embeddings: TokenEmbeddings) -> list[TokenEmbeddings]:
    """The embeddings of a stack in order (a single embedding: itself)."""
    return list(embeddings.embeddings) if isinstance(embeddings, StackedEmbeddings) else [embeddings]


def features(run: Run, modules: list[TokenEmbeddings], data: GridData, split: str) -> SplitFeatures:
    """One split of the run's corpus under its stack: cached arrays for frozen specs, the model's module otherwise."""
    parts: list[Part] = [
        data.array(run.corpus, spec, split) if frozen(spec) else module for spec, module in zip(run.embedding_specs, modules)
    ]
    return SplitFeatures(data.splits(run.corpus)[split], parts)


def tag_dictionary(corpus: CorpusChoice) -> Dictionary:
    """The entity types of the corpus, in registry order, marked as span labels (Flair adds O, B-, I-)."""
    dictionary = Dictionary(add_unk=False)
    dictionary.span_labels = True
    for entity_type in dataset(corpus.name, **corpus.options).types:
        dictionary.add_item(entity_type)
    return dictionary


def write_predictions(target: Path, split: LabeledSplit, predicted: list[list[str]]) -> None:
    """token TAB gold TAB raw predicted tag, a blank line after each sentence."""
    lines = []
    for sentence, gold, tags in zip(split.sentences, split.tags, predicted):
        lines += [f"{token.text}\t{g}\t{p}" for token, g, p in zip(sentence, gold, tags)] + [""]
    write_text(target, "\n".join(lines))


def save_model(model: torch.nn.Module, target: Path) -> None:
    """Flair's `save`, written atomically."""
    with atomic_file(target) as temp:
        model.save(temp)


def versions() -> dict[str, str]:
    """Library versions recorded with every run."""
    return {"flairsuite": flairsuite.__version__, "flair": flair.__version__, "torch": torch.__version__}


def train_run(run: Run, data: GridData, run_dir: Path, run_digest: str) -> dict[str, Any]:
    """Train, evaluate and save one run; returns its metrics (written last)."""
    started = time.perf_counter()
    model = build_tagger(run.tagger, stack(list(run.embedding_specs), data.home), tag_dictionary(run.corpus), LABEL_TYPE)
    modules = embedding_modules(model.embeddings)
    for spec, module in zip(run.embedding_specs, modules):
        module.requires_grad_(not frozen(spec))
    with_dev = run.train_settings["train_with_dev"]
    train, dev, test = (features(run, modules, data, split) for split in (TRAIN_WITH_DEV if with_dev else "train", "dev", "test"))
    progress = train_tagger(model, train, None if with_dev else dev, run.train_settings, run.seed, run_dir / CHECKPOINT_FILE, run.run_id)
    scores = {}
    for name, split in (("dev", dev), ("test", test)):
        predicted = decode(model, split)
        scores[name] = (strict_scores(split.split.tags, predicted), flair_f1(split.split.tags, predicted))
        if name == "test":
            write_predictions(run_dir / PREDICTIONS_FILE, split.split, predicted)
    save_model(model, run_dir / MODEL_FILE)
    return {
        **{key: value for key, value in run_record(run).items() if key not in ("corpus_options", "subsample")},
        "experiment": run.experiment,
        "corpus_options": run.corpus.options,
        "corpus_label": run.corpus.label,
        "subsample": subsample_note(run.corpus.subsample),
        "embeddings": run.embeddings,
        "entity_fix": False,
        "versions": versions(),
        "dev": scores["dev"][0],
        "test": scores["test"][0],
        "flair_f1": {"dev": scores["dev"][1], "test": scores["test"][1]},
        "epochs": progress.epoch,
        "best_epoch": progress.best_epoch,
        "history": progress.history,
        "seconds": round(time.perf_counter() - started, 1),
        "fingerprint": run_digest,
    }


def check_state(config: ExperimentConfig, text: str, out: Path, force: bool) -> None:
    """Refuse a changed config under an existing name unless `force`; record the config."""
    state_file, new = out / STATE_FILE, fingerprint(config)
    if state_file.is_file():
        old = read_state(state_file)
        if old.get("fingerprint") != new and not force:
            raise FlairsuiteError(
                f"{out} holds runs of a different '{config.name}' config: pass --force to retrain what changed, or choose a new name"
            )
    write_json(state_file, {"name": config.name, "fingerprint": new, "config": text})


def read_state(path: Path) -> dict[str, Any]:
    """experiment.json; a damaged one is a one-line error."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise FlairsuiteError(f"{path}: unreadable ({err}); delete it or pass --force") from None


def finished(run_dir: Path, run_digest: str, force: bool) -> bool:
    """Whether the run's metrics exist for exactly this run; stale results are an error unless `force`."""
    metrics = run_dir / METRICS_FILE
    if not metrics.is_file():
        return False
    if read_run(metrics).metrics.get("fingerprint") == run_digest:
        return True
    if not force:
        raise FlairsuiteError(f"{run_dir} was trained with other settings or embedding files: pass --force to retrain it")
    shutil.rmtree(run_dir)
    return False


def remove_stale(out: Path, wanted: set[Path]) -> list[Path]:
    """Delete finished run folders below `out` that the grid no longer has (after --force)."""
    stale = [path.parent for path in out.rglob(METRICS_FILE) if path.parent not in wanted]
    for run_dir in stale:
        shutil.rmtree(run_dir)
    return stale


def run_experiment(
    path: Path, home: Path, corpora_root: Path, force: bool = False, echo: Callable[[str], None] = print
) -> Path:
    """Train every unfinished run of the experiment file `path`; returns its results folder."""
    config = load_experiment(path)
    grid = runs(config)
    specs = sorted({spec for run in grid for spec in run.embedding_specs})
    digests = {spec: artifact_digest(spec, home) for spec in specs}  # a missing artifact fails here, before any work
    out = home / "results" / config.name
    check_state(config, path.read_text(encoding="utf-8"), out, force)
    if force:
        for stale in remove_stale(out, {out / run.run_id for run in grid}):
            echo(f"removed {stale} (not in the grid any more)")
    data = GridData(home, corpora_root, {}, {})
    todo = []
    for run in grid:
        run_digest = digest({**run_record(run), "artifacts": [digests[spec] for spec in run.embedding_specs]})
        if not finished(out / run.run_id, run_digest, force):
            todo.append((run, run_digest))
    echo(f"{config.name}: {len(grid)} runs, {len(grid) - len(todo)} finished before, {len(todo)} to train")
    started = time.perf_counter()
    for run, run_digest in tqdm(todo, desc=config.name, unit="run"):
        run_dir = out / run.run_id
        metrics = train_run(run, data, run_dir, run_digest)
        write_json(run_dir / METRICS_FILE, metrics)
        (run_dir / CHECKPOINT_FILE).unlink(missing_ok=True)
        tqdm.write(f"{run.run_id}: test F1 {metrics['test']['f1'] * 100:.2f} (dev {metrics['dev']['f1'] * 100:.2f}), "
                   f"{metrics['epochs']} epochs, {metrics['seconds']:.0f} s")
    echo(f"trained {len(todo)} runs in {time.perf_counter() - started:.0f} s; embeddings computed for {data.computed} "
         f"(corpus split, embedding) pairs, the rest read from the cache")
    return out
