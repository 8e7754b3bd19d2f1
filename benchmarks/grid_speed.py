"""Tagging-grid speed: the same grid trained by plain Flair's ModelTrainer and by `flairsuite tag`.

Grid: Sturm x 3 stacks (proposed = the two character LMs, proposed+word = + fastText, classic =
fastText) x 3 taggers (bilstm-crf, map-crf, map) x seeds, a fixed number of epochs, the suite's
per-tagger settings (optimizer, learning rate, dropout) on both sides. Each side runs in its own
process (peak RSS is per process), with the same torch thread count:

  flair        ModelTrainer.train(..., embeddings_storage_mode="cpu"), per run: embeddings computed
               in the first epoch and held on the sentences, best-on-dev model written as Flair does
  flairsuite   `run_experiment` in an empty home (so the embedding cache starts empty and its
               computation is counted), models, predictions and metrics written per run; in float32, or with
               --precision bfloat16 (the training setting `precision`) on a CPU with bfloat16 units

Test F1 of both is Flair's span F1 (Flair side: the final test evaluation of `ModelTrainer.train`;
flairsuite side: `flair_f1` of metrics.json, the same span decoding and micro F1).
Run `python benchmarks/grid_speed.py -h`; see benchmarks/README.md.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from common import run_main

from flairsuite.errors import FlairsuiteError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STACKS = {
    "proposed": ["charlm:de-forward", "charlm:de-backward"],
    "proposed+word": ["charlm:de-forward", "charlm:de-backward", "fasttext:de"],
    "classic": ["fasttext:de"],
}
TAGGERS = ["bilstm-crf", "map-crf", "map"]
TARGET_RATIO = 3.0
TARGET_RSS_GB = 1.5


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--epochs", type=int, default=3, help="epochs of every run (default 3)")
    add("--seeds", type=int, nargs="+", default=[1, 2], help="seeds (default 1 2)")
    add("--threads", type=int, default=2, help="torch threads of both sides (default 2)")
    add("--precision", choices=["float32", "bfloat16"], default="float32",
        help="flairsuite's training arithmetic (default float32; bfloat16 needs AVX-512 BF16 or AMX, Flair stays float32)")
    add("--corpora-dir", default=os.environ.get("FLAIRSUITE_CORPORA", str(ROOT / "corpora")), help="datasets folder (default: $FLAIRSUITE_CORPORA)")
    add("--out", type=Path, default=HERE / "results" / "grid_speed.json", help="results JSON")
    add("--side", choices=["flair", "flairsuite"], help=argparse.SUPPRESS)  # the child's job
    return parser.parse_args(argv)


def run_flair(args: argparse.Namespace, work: Path) -> dict[str, float]:
    """Every run of the grid with plain Flair's ModelTrainer; test F1 (Flair's final evaluation) per run id."""
    import flair
    from flair.trainers import ModelTrainer

    from flairsuite.corpora.loading import load_corpus
    from flairsuite.embeddings import stack
    from flairsuite.experiments.corpus_choice import CorpusChoice
    from flairsuite.experiments.run_data import tag_dictionary
    from flairsuite.models.registry import build_tagger, default_train
    from flairsuite.models.settings import OPTIMIZERS

    corpus = load_corpus("sturm", Path(args.corpora_dir))
    scores = {}
    for name, specs in STACKS.items():
        for tagger_name in TAGGERS:
            for seed in args.seeds:
                flair.set_seed(seed)
                model = build_tagger(tagger_name, stack(specs, ROOT), tag_dictionary(CorpusChoice("sturm", {})), "ner")
                settings = default_train(tagger_name)
                result = ModelTrainer(model, corpus).train(
                    work / f"{name}-{tagger_name}-{seed}", learning_rate=settings["learning_rate"], mini_batch_size=settings["mini_batch_size"],
                    max_epochs=args.epochs, anneal_factor=settings["anneal_factor"], patience=settings["patience"],
                    optimizer=OPTIMIZERS[settings["optimizer"]], embeddings_storage_mode="cpu",
                )
                scores[f"sturm/{name}/{tagger_name}/seed-{seed}"] = result["test_score"]
    return scores


def run_flairsuite(args: argparse.Namespace, work: Path) -> dict[str, float]:
    """The same grid with flairsuite in an empty home; test F1 per run id."""
    from flairsuite.experiments.reading import read_experiment
    from flairsuite.experiments.runner import run_experiment
    from flairsuite.results.collect import read_runs

    home = work / "home"
    home.mkdir()
    for folder in ("charlm", "wordvectors"):
        (home / folder).symlink_to(ROOT / folder)
    experiment = work / "grid.yaml"
    experiment.write_text(json.dumps({
        "name": "grid-speed", "corpora": ["sturm"], "embeddings": STACKS, "taggers": TAGGERS,
        "seeds": args.seeds, "train": {"max_epochs": args.epochs, "precision": args.precision},
    }))
    out = run_experiment(read_experiment(experiment), home, Path(args.corpora_dir), echo=lambda line: print(line, file=sys.stderr))
    return {run.metrics["run"]: run.metrics["flair_f1"]["test"] for run in read_runs(out)}


def child(args: argparse.Namespace) -> None:
    """One side in this process; prints its JSON result."""
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix=f"grid-{args.side}-") as work:
        started = time.perf_counter()
        scores = (run_flair if args.side == "flair" else run_flairsuite)(args, Path(work))
        seconds = time.perf_counter() - started
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps({"seconds": seconds, "peak_rss_gb": rss_gb, "test_f1": scores}))


def side(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Run one side in a child process and read its JSON line."""
    command = [sys.executable, __file__, "--side", name, "--epochs", str(args.epochs), "--threads", str(args.threads),
               "--corpora-dir", args.corpora_dir, "--precision", args.precision, "--seeds", *map(str, args.seeds)]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env)
    if result.returncode != 0:
        raise FlairsuiteError(f"the {name} side failed (exit code {result.returncode}; its error line is above)")
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> list[str]:
    """The comparison table and the verdicts."""
    flair, suite = results["flair"], results["flairsuite"]
    runs = sorted(flair["test_f1"])
    lines = [f"grid: sturm x {len(STACKS)} stacks x {len(TAGGERS)} taggers x {len(args.seeds)} seeds = {len(runs)} runs, "
             f"{args.epochs} epochs each, {args.threads} threads, flairsuite in {args.precision}",
             f"  {'side':<12}{'wall s':>9}{'peak RSS GB':>13}{'mean test F1':>14}"]
    for name, result in results.items():
        lines.append(f"  {name:<12}{result['seconds']:>9.0f}{result['peak_rss_gb']:>13.2f}{statistics.mean(result['test_f1'].values()) * 100:>14.2f}")
    lines.append(f"  {'run':<40}{'flair F1':>10}{'flairsuite F1':>15}")
    lines += [f"  {run:<40}{flair['test_f1'][run] * 100:>10.2f}{suite['test_f1'].get(run, float('nan')) * 100:>15.2f}" for run in runs]
    ratio = flair["seconds"] / suite["seconds"]
    differences = [suite["test_f1"][run] - flair["test_f1"][run] for run in runs]
    lines.append(f"  wall-time ratio flair / flairsuite: {ratio:.2f}x; test F1 difference (flairsuite - flair): "
                 f"mean {statistics.mean(differences) * 100:+.2f}, sd {statistics.stdev(differences) * 100:.2f} points")
    lines.append(f"  {'PASS' if ratio >= TARGET_RATIO else 'FAIL'}  flairsuite >= {TARGET_RATIO:g}x faster ({ratio:.2f}x)")
    lines.append(f"  {'PASS' if suite['peak_rss_gb'] <= TARGET_RSS_GB else 'FAIL'}  flairsuite peak RSS <= {TARGET_RSS_GB} GB ({suite['peak_rss_gb']:.2f} GB)")
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    import torch

    from flairsuite.runtime.precision import require_precision

    require_precision(args.precision, torch.device("cpu"), "grid_speed.py --precision bfloat16", "--precision float32")
    if args.side:
        child(args)
        return 0
    results = {name: side(args, name) for name in ("flair", "flairsuite")}
    lines = report(args, results)
    print("\n".join(lines))
    from flairsuite.files.atomic import write_json

    write_json(args.out, {"settings": {k: v for k, v in vars(args).items() if k not in ("out", "side")}, "results": results, "report": lines})
    return 0


if __name__ == "__main__":
    run_main(main)
