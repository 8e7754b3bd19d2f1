"""The plain-Flair side of a parity check: train an experiment's runs with Flair's own `ModelTrainer`.

`flairsuite tag EXPERIMENT.yaml` trains each run with the suite's loop on cached embeddings; this
script trains the very same runs (same corpus splits, embedding stack, tagger built by the suite's
registry, seeds and training settings) with `flair.trainers.ModelTrainer.train`, then decodes dev
and test with the trained model's `predict` and scores the raw token tags with the suite's scorer
(seqeval strict IOB2, `flairsuite.tagging.scoring`). Each run writes
`results/<experiment>-flair/<run>/metrics.json` in the collector's schema, so

    python experiments/parity_flair.py experiments/parity-de.yaml --threads 1
    flairsuite tag experiments/parity-de.yaml --threads 1
    python experiments/parity_compare.py results/parity-de results/parity-de-flair

compares both sides run for run. Finished runs are skipped; Flair's trainer cannot resume a killed
run, so a killed run starts over. Settings map one to one: learning_rate, mini_batch_size,
max_epochs, anneal_factor, patience (Flair anneals on dev F1 as the suite does), optimizer,
train_with_dev; Flair's defaults elsewhere (min learning rate 1e-4, shuffled batches,
`embeddings_storage_mode="cpu"`, the best dev epoch kept).
"""

import argparse
import fnmatch
import shutil
import sys
import tempfile
import time
from pathlib import Path

import flair
import torch
from flair.data import Corpus, Sentence
from flair.models import SequenceTagger
from flair.trainers import ModelTrainer
from flair.trainers.plugins.loggers.metric_history import MetricHistoryPlugin
from tqdm import tqdm

import flairsuite
from flairsuite.embeddings import stack
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import runs
from flairsuite.experiments.identity import run_record
from flairsuite.experiments.reading import load_experiment
from flairsuite.experiments.run_data import LABEL_TYPE, tag_dictionary
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import corpora_dir, home, results_dir
from flairsuite.models.registry import build_tagger
from flairsuite.models.settings import OPTIMIZERS
from flairsuite.results.metrics_file import METRICS_FILE
from flairsuite.tagging.data import load_labeled, subsample_note
from flairsuite.tagging.scoring import flair_f1, strict_scores


def raw_tags(model: SequenceTagger, sentences: list[Sentence]) -> list[list[str]]:
    """The decoder's raw per-token tags (Flair's `predict` with token predictions), sentence by sentence."""
    model.predict(sentences, mini_batch_size=64, force_token_predictions=True, label_name="predicted")
    tags = [[token.get_label("predicted").value for token in sentence] for sentence in sentences]
    for sentence in sentences:
        sentence.remove_labels("predicted")
        for token in sentence:
            token.remove_labels("predicted")
    return tags


def train_one(run, out: Path, root: Path, corpora: Path) -> dict:
    """Train `run` with Flair's ModelTrainer; its metrics in the collector's schema."""
    settings = run.train_settings
    splits = load_labeled(run.corpus.name, run.corpus.options, run.corpus.subsample, corpora)
    sentences = {name: split.labeled_sentences(run.corpus.spec()) for name, split in splits.items()}
    corpus = Corpus(sentences["train"], sentences["dev"], sentences["test"], name=run.corpus.key)
    flair.set_seed(run.seed)
    model = build_tagger(run.tagger, stack(list(run.embedding_specs), root), tag_dictionary(run.corpus), LABEL_TYPE)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parity-flair-") as base:
        result = ModelTrainer(model, corpus).train(
            base,
            learning_rate=settings["learning_rate"],
            mini_batch_size=settings["mini_batch_size"],
            max_epochs=settings["max_epochs"],
            anneal_factor=settings["anneal_factor"],
            patience=settings["patience"],
            optimizer=OPTIMIZERS[settings["optimizer"]],
            train_with_dev=settings["train_with_dev"],
            embeddings_storage_mode="cpu",
            save_final_model=False,
            create_file_logs=False,
            create_loss_file=False,
            plugins=[MetricHistoryPlugin()],  # the dev score per epoch, in the result's "dev_score_history"
        )
        best = Path(base) / "best-model.pt"
        if best.is_file():  # the best dev epoch, as the suite keeps it
            model = SequenceTagger.load(best)
    seconds = time.perf_counter() - started
    history = [{"epoch": i + 1, "dev_f1": score} for i, score in enumerate(result.get("dev_score_history", []))]
    gold = {name: splits[name].tags for name in ("dev", "test")}
    predicted = {name: raw_tags(model, sentences[name]) for name in ("dev", "test")}
    record = {key: value for key, value in run_record(run).items() if key not in ("corpus_options", "subsample", "entity_fix")}
    return {
        **record,
        "experiment": out.name,
        "run": run.run_id,
        "corpus_options": run.corpus.options,
        "corpus_label": run.corpus.label,
        "subsample": subsample_note(run.corpus.subsample),
        "embeddings": run.embeddings,
        "entity_fix": False,
        "trainer": "flair.trainers.ModelTrainer",
        "versions": {"flairsuite": flairsuite.__version__, "flair": flair.__version__, "torch": torch.__version__},
        "dev": strict_scores(gold["dev"], predicted["dev"]),
        "test": strict_scores(gold["test"], predicted["test"]),
        "flair_f1": {name: flair_f1(gold[name], predicted[name]) for name in ("dev", "test")},
        "epochs": len(history) or settings["max_epochs"],
        "history": history,
        "seconds": round(seconds, 1),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", type=Path, help="an experiment file (the suite side trains it with `flairsuite tag`)")
    parser.add_argument("--runs", action="append", default=[], help="shell-style run-id patterns (repeatable), as `flairsuite tag --runs`")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--corpora-dir", default=None, help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        config = load_experiment(args.experiment)
        out = results_dir() / f"{config.name}-flair"
        chosen = [run for run in runs(config) if not args.runs or any(fnmatch.fnmatchcase(run.run_id, p) for p in args.runs)]
        if not chosen:
            raise FlairsuiteError(f"--runs {' '.join(args.runs)}: no run id matches")
        todo = [run for run in chosen if not (out / run.run_id / METRICS_FILE).is_file()]
        print(f"{out.name}: {len(chosen)} runs, {len(chosen) - len(todo)} finished before, {len(todo)} to train with Flair's ModelTrainer")
        for run in tqdm(todo, desc=out.name, unit="run"):
            run_dir = out / run.run_id
            shutil.rmtree(run_dir, ignore_errors=True)
            metrics = train_one(run, out, home(), corpora_dir(args.corpora_dir))
            write_json(run_dir / METRICS_FILE, metrics)
            tqdm.write(f"{run.run_id}: test F1 {metrics['test']['f1'] * 100:.2f} (dev {metrics['dev']['f1'] * 100:.2f}), {metrics['seconds']:.0f} s")
    except FlairsuiteError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
