"""Fine-tuning a small BERT with a tagger head: `flairsuite tag` (fine_tune: true) against Flair's own
`ModelTrainer.fine_tune`, on the same model, corpus, head, settings and epochs, measured in one run.

    python benchmarks/finetune_speed.py                       # bert:de-cpu, Map-CRF, Sturm, 2 epochs, seeds 1-3
    python benchmarks/finetune_speed.py --epochs 1 --seeds 1 --subsample 0.2 --threads 2   # a quick look
    python benchmarks/finetune_speed.py --bucket-batches 0 --epochs 6 --seeds 1 2 3 4 5  # the same batch order as Flair

Both sides: AdamW (torch's defaults), learning rate 5e-5 (`--decoder-learning-rate`: the head's own), 10 % linear warm-up then linear decay to 0,
mini-batches of 16, gradient clipping at 5, one pass over train per epoch, the model of the last
epoch, dev F1 by the suite's scorer (seqeval strict IOB2 on raw tags). Every (side, seed) runs in a
fresh child process, so its peak RSS (VmHWM) is its own; sides alternate seed by seed so that a
change in the machine's load hits both. Printed: wall time per epoch (training and the dev pass
that both sides run after each epoch), peak RSS, dev F1 per seed and their mean ± std, the ratios,
and PASS/FAIL against the targets: suite ≥ 1.5x faster per epoch at ≤ equal peak RSS, mean dev F1
within one standard deviation of Flair's. Results are written to benchmarks/results/finetune_speed.json
(`--out` for another file).

One setting differs unless asked: the suite's batches come from pools of `--bucket-batches` batches
sorted by length (its fine-tuning default, 50), Flair's in random order. `--bucket-batches 0` gives the
suite random batches too, so that the epoch time compares the two loops at the same recipe and the dev
F1 the same training; the default compares what each side does out of the box.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "finetune_speed.json"
SIDES = ("flairsuite", "flair")
TARGET_SPEEDUP = 1.5


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def settings(args: argparse.Namespace) -> dict:
    """The fine-tuning settings of both sides, as the suite's experiment key `fine_tune_train` writes them (0 pools: random batches)."""
    return {"max_epochs": args.epochs, "epoch_samples": None, "mini_batch_size": 16, "learning_rate": 5e-5, "bucket_batches": args.bucket_batches or None,
            **({"decoder_learning_rate": args.decoder_learning_rate} if args.decoder_learning_rate else {})}


def suite_child(args: argparse.Namespace, home: Path) -> dict:
    """Fine-tune with `flairsuite tag` in this process; epochs, seconds, dev F1."""
    from click.testing import CliRunner

    from flairsuite.cli import cli

    corpus = {"name": args.corpus, **({"subsample": args.subsample} if args.subsample else {})}
    experiment = {"name": "finetune-speed", "corpora": [corpus], "embeddings": {"bert": [f"bert:{args.bert}"]}, "taggers": [args.tagger],
                  "seeds": [args.seed], "fine_tune": True, "fine_tune_train": settings(args)}
    path = home / "finetune-speed.yaml"
    path.write_text(json.dumps(experiment), encoding="utf-8")  # JSON is YAML
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["tag", str(path), "--threads", str(args.threads)], env={"FLAIRSUITE_HOME": str(home)}, catch_exceptions=False)
    seconds = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(result.output)
    metrics = json.loads(next((home / "results" / "finetune-speed").rglob("metrics.json")).read_text(encoding="utf-8"))
    # the run alone (training with the dev pass after each epoch, decoding dev and test, saving): seconds in metrics.json
    return {"epochs": metrics["epochs"], "run_seconds": metrics["seconds"], "process_seconds": seconds, "dev_f1": metrics["dev"]["f1"]}


def flair_child(args: argparse.Namespace, home: Path) -> dict:
    """Fine-tune with Flair's `ModelTrainer.fine_tune` in this process; epochs, seconds, dev F1."""
    import flair
    import torch
    from flair.data import Corpus
    from flair.trainers import ModelTrainer

    from flairsuite.embeddings import set_trainable, stack
    from flairsuite.experiments.corpus_choice import CorpusChoice
    from flairsuite.experiments.run_data import LABEL_TYPE, tag_dictionary
    from flairsuite.files.paths import corpora_dir
    from flairsuite.models.registry import build_tagger
    from flairsuite.tagging.data import load_labeled
    from flairsuite.tagging.scoring import strict_scores

    sys.path.insert(0, str(REPO / "experiments"))
    from parity_flair import raw_tags

    torch.set_num_threads(args.threads)
    splits = load_labeled(args.corpus, {}, args.subsample, corpora_dir())
    spec = CorpusChoice(args.corpus, {}).spec()
    sentences = {name: split.labeled_sentences(spec) for name, split in splits.items()}
    corpus = Corpus(sentences["train"], sentences["dev"], sentences["test"], name=args.corpus)
    flair.set_seed(args.seed)
    spec = f"bert:{args.bert}"
    embedding = stack([spec], REPO)
    set_trainable(spec, embedding, True)
    model = build_tagger(args.tagger, embedding, tag_dictionary(CorpusChoice(args.corpus, {})), LABEL_TYPE)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="finetune-flair-") as base:
        ModelTrainer(model, corpus).fine_tune(
            base, learning_rate=5e-5, mini_batch_size=16, max_epochs=args.epochs, warmup_fraction=0.1, decoder_learning_rate=args.decoder_learning_rate,
            save_final_model=False, create_file_logs=False, create_loss_file=False,
        )
    dev = strict_scores(splits["dev"].tags, raw_tags(model, sentences["dev"]))
    raw_tags(model, sentences["test"])  # the suite's run decodes test too
    seconds = time.perf_counter() - started
    return {"epochs": args.epochs, "run_seconds": seconds, "process_seconds": seconds, "dev_f1": dev["f1"]}


def child(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="finetune-speed-") as temp:
        home = Path(temp)
        (home / "bert").symlink_to(REPO / "bert")
        result = (suite_child if args.side == "flairsuite" else flair_child)(args, home)
    print(json.dumps({**result, "peak_rss_mb": peak_rss_mb()}))


def measure(args: argparse.Namespace, side: str, seed: int) -> dict:
    command = [sys.executable, __file__, "--child", side, "--seed", str(seed), "--bert", args.bert, "--tagger", args.tagger,
               "--corpus", args.corpus, "--epochs", str(args.epochs), "--threads", str(args.threads), "--bucket-batches", str(args.bucket_batches)]
    if args.subsample:
        command += ["--subsample", str(args.subsample)]
    if args.decoder_learning_rate:
        command += ["--decoder-learning-rate", str(args.decoder_learning_rate)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{side} seed {seed} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bert", default="de-cpu", help="model folder below bert/ [default: de-cpu]")
    parser.add_argument("--tagger", default="map-crf")
    parser.add_argument("--corpus", default="sturm")
    parser.add_argument("--subsample", type=float, default=None, help="a fixed share of train (both sides)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--decoder-learning-rate", type=float, default=None,
                        help="the head's own learning rate on both sides (Flair's fine_tune option) [default: none, 5e-5 for all]")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--bucket-batches", type=int, default=50,
                        help="the suite's pools of batches sorted by length; 0: random batches, as Flair [default: 50]")
    parser.add_argument("--out", type=Path, default=OUT, help=f"results file [default: {OUT.relative_to(REPO)}]")
    parser.add_argument("--child", choices=SIDES, dest="side", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        child(args)
        return
    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    for seed in args.seeds:
        for side in SIDES if seed % 2 else SIDES[::-1]:
            result = measure(args, side, seed)
            runs[side].append({"seed": seed, **result})
            print(f"{side:<11} seed {seed}: {result['run_seconds'] / result['epochs']:.0f} s/epoch, peak RSS {result['peak_rss_mb']:,.0f} MB, "
                  f"dev F1 {result['dev_f1'] * 100:.2f}", flush=True)
    per_epoch = {side: statistics.mean(r["run_seconds"] / r["epochs"] for r in runs[side]) for side in SIDES}
    rss = {side: max(r["peak_rss_mb"] for r in runs[side]) for side in SIDES}
    f1 = {side: [r["dev_f1"] * 100 for r in runs[side]] for side in SIDES}
    speedup = per_epoch["flair"] / per_epoch["flairsuite"]
    flair_std = statistics.stdev(f1["flair"]) if len(f1["flair"]) > 1 else float("nan")
    within = abs(statistics.mean(f1["flairsuite"]) - statistics.mean(f1["flair"])) <= flair_std
    print(f"\nbert:{args.bert} + {args.tagger} on {args.corpus}{f' ({args.subsample:.0%} of train)' if args.subsample else ''}, "
          f"{args.epochs} epochs, {args.threads} threads, seeds {' '.join(map(str, args.seeds))}, "
          f"suite's batches {f'pooled by length ({args.bucket_batches})' if args.bucket_batches else 'random, as Flair'}")
    print(f"{'':<12}{'s/epoch':>10}{'peak RSS MB':>13}{'dev F1':>18}")
    for side in SIDES:
        print(f"{side:<12}{per_epoch[side]:>10.0f}{rss[side]:>13,.0f}{mean_std(f1[side]):>18}")
    print(f"\n  {'PASS' if speedup >= TARGET_SPEEDUP else 'FAIL'}  flairsuite {speedup:.2f}x faster per epoch (target >= {TARGET_SPEEDUP}x)")
    print(f"  {'PASS' if rss['flairsuite'] <= rss['flair'] else 'FAIL'}  peak RSS {rss['flairsuite']:,.0f} MB vs Flair {rss['flair']:,.0f} MB (target <=)")
    print(f"  {'PASS' if within else 'FAIL'}  mean dev F1 within one std of Flair's ({mean_std(f1['flairsuite'])} vs {mean_std(f1['flair'])})")
    paired = [ours - theirs for ours, theirs in zip(f1["flairsuite"], f1["flair"])]  # the same seed (initial weights) on both sides
    print(f"        dev F1 suite - Flair seed by seed: {' '.join(f'{d:+.2f}' for d in paired)} (mean {statistics.mean(paired):+.2f})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    arguments = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in ("side", "seed")}
    record = {"args": arguments, "runs": runs, "seconds_per_epoch": per_epoch,
              "peak_rss_mb": rss, "speedup": speedup, "dev_f1_within_std": within}
    from flairsuite.files.atomic import write_json

    write_json(args.out, record)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
