"""Character-LM training speed: plain Flair's LanguageModelTrainer against flairsuite's trainer.

For each hidden size, on the same prepared text with the same hyper-parameters and the same
wall-clock budget, it trains (each in its own process, forward direction, CPU):
  flairsuite            flairsuite.charlm.run.train_direction, validating every --validate-chars
  flair (defaults)      LanguageModelTrainer over split files of the train text
  flair (allocator)     the same, started with the glibc malloc settings flairsuite applies itself
and prints chars/s, GFLOP/s against the sgemm peak measured in this run, and the time each needs to
reach the validation perplexity Flair ends its budget with. Run `python benchmarks/charlm_speed.py -h`;
see benchmarks/README.md.
"""

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import flair
import numpy as np
import torch
from common import machine, run_main
from flair.data import Dictionary
from flair.models import LanguageModel

from flairsuite.charlm.batches import StreamBatches
from flairsuite.charlm.recipes import recipe
from flairsuite.charlm.settings import Hyper
from flairsuite.charlm.trainer import evaluate, evaluation_batches
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import corpora_dir, prepared_dir
from flairsuite.rawtext.language import raw_set as raw_set_of
from flairsuite.rawtext.prepare import PreparedCorpus, char_dictionary, prepare
from flairsuite.rawtext.settings import PrepareConfig

HERE = Path(__file__).resolve().parent
CHILD = HERE / "charlm_speed_child.py"
ALLOCATOR_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "68719476736", "MALLOC_TOP_PAD_": "1073741824"}
FLAIR_CONFIGS = {"flair (defaults)": {}, "flair (allocator)": ALLOCATOR_ENV}
SGEMM_SIZE = 4096
SGEMM_REPEATS = 7
STARTUP_SECONDS = 600  # model, corpus and first imports; never part of the budget
TARGET_PEAK_FRACTION = 0.8
TARGET_TIME_FRACTION = 0.5
TARGET_HIDDEN = 512


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--budget", type=float, default=300, help="wall-clock seconds of training per run (default 300)")
    add("--hidden", type=int, nargs="+", default=[256, 512, 1024], help="hidden sizes (default 256 512 1024)")
    add("--threads", type=int, default=0, help="torch threads of every run and of the sgemm peak (default: torch's)")
    add("--valid-chars", type=int, default=50_000, help="validation slice, the same for both (default 50000)")
    add("--validate-chars", type=int, default=200_000, help="training characters between flairsuite's validations (default 200,000)")
    add("--split-chars", type=int, default=0, help="characters per Flair split file (default: automatic, see README)")
    add("--flair-validations", type=int, default=6, help="validations the automatic split size aims at (default 6)")
    add("--sequence-length", type=int, default=250)
    add("--sequence-length-start", type=int, help="flairsuite's first BPTT window (default: the recipe's)")
    add("--ramp-chars", type=int, help="characters over which flairsuite's window grows (default: the recipe's; 0: none)")
    add("--batch-size", type=int, default=100)
    add("--lr", type=float, default=20.0)
    add("--clip", type=float, default=0.25)
    add("--dropout", type=float, default=0.1)
    add("--seed", type=int, default=1)
    add("--lang", default="de", help="language of the recipe whose raw-text set is prepared (default de)")
    add("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    add("--prepared-dir", help="prepared-corpus cache (default: <home>/cache/prepared, as train-charlm)")
    add("--work-dir", help="where the temporary run folders go (default: the system's temp folder)")
    add("--keep", action="store_true", help="keep the run folders (logs, models) instead of deleting them")
    add("--out", type=Path, default=HERE / "results" / "charlm_speed.json", help="results JSON")
    args = parser.parse_args(argv)
    if args.budget <= 0 or args.valid_chars <= 0 or args.validate_chars <= 0 or min(args.hidden) <= 0:
        parser.error("--budget, --valid-chars, --validate-chars and --hidden must be positive")
    return args


# ---------------------------------------------------------------- measuring


def sgemm_peak(threads: int) -> float:
    """GFLOP/s of a 4096² fp32 matmul at `threads` threads: the median of a few runs.

    On a shared VM single runs swing widely (48 to 165 GFLOP/s seen here); the median is the
    machine's sustained rate, the best single run a spike no training loop can be held to.
    """
    torch.set_num_threads(threads)
    a, b = torch.randn(SGEMM_SIZE, SGEMM_SIZE), torch.randn(SGEMM_SIZE, SGEMM_SIZE)
    torch.mm(a, b)
    times = []
    for _ in range(SGEMM_REPEATS):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * SGEMM_SIZE**3 / statistics.median(times) / 1e9


def flops_per_char(hyper: Hyper, dictionary: Dictionary) -> int:
    """3 · 2 · (LSTM + decoder weights): forward and backward multiply-adds per trained character."""
    model = LanguageModel(dictionary, True, hyper.hidden_size, hyper.nlayers, hyper.embedding_size)
    weights = [p for name, p in model.named_parameters() if name.startswith("rnn.weight") or name == "decoder.weight"]
    return 6 * sum(p.numel() for p in weights)


def encode(text: str, dictionary: Dictionary) -> np.ndarray:
    """`text` as ids of `dictionary` (each model's own; unknown characters become its `<unk>`)."""
    lookup = {char: dictionary.get_idx_for_item(char) for char in set(text)}
    return np.fromiter((lookup[char] for char in text), dtype=np.int64, count=len(text))


# ---------------------------------------------------------------- Flair's corpus layout


def flair_char_count(path: Path, delimiter: str = "\n") -> int:
    """How many ids Flair's TextDataset makes of a file (documents split on the delimiter, empty ones dropped)."""
    with path.open("r", encoding="utf-8") as handle:
        return sum(len(doc) + 1 for doc in handle.read().split(delimiter) if doc)


def trained_chars(ids: int, batch_size: int) -> int:
    """Characters Flair predicts in one split of `ids` ids (its _batchify trims to rows of `batch_size`)."""
    return batch_size * max(ids // batch_size - 1, 0)


def write_splits(train_text: Path, folder: Path, split_chars: int) -> list[int]:
    """Cut the train text at line ends into files of about `split_chars` characters; Flair's ids per file."""
    folder.mkdir(parents=True)
    paths: list[Path] = []
    lines: list[str] = []
    size = 0

    def flush() -> None:
        path = folder / f"split_{len(paths):05d}.txt"
        path.write_text("".join(lines), encoding="utf-8", newline="")
        paths.append(path)

    with train_text.open(encoding="utf-8", newline="\n") as handle:
        for line in handle:
            lines.append(line)
            size += len(line)
            if size >= split_chars:
                flush()
                lines, size = [], 0
    if lines:
        flush()
    return [flair_char_count(path) for path in paths]


def flair_corpus(corpus: PreparedCorpus, folder: Path, split_chars: int, valid_text: str) -> list[int]:
    """A Flair TextCorpus folder (train/ split files, valid.txt, test.txt); ids per split file."""
    counts = write_splits(corpus.text_path("train"), folder / "train", split_chars)
    (folder / "valid.txt").write_text(valid_text, encoding="utf-8", newline="")
    with corpus.text_path("test").open(encoding="utf-8", newline="") as handle:
        (folder / "test.txt").write_text(handle.read(len(valid_text)), encoding="utf-8", newline="")
    return counts


def auto_split_chars(chars_per_second: float, args: argparse.Namespace) -> int:
    """Split size at which Flair, as fast as flairsuite, validates --flair-validations times (50 k to 2 M chars)."""
    smallest = 2 * args.batch_size * args.sequence_length
    size = int(chars_per_second * args.budget / args.flair_validations) // 1000 * 1000
    return min(max(size, smallest), 2_000_000)


# ---------------------------------------------------------------- child processes


def child_env(threads: int, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a run: CPU only, `threads` OpenMP threads, glibc malloc defaults unless `extra` sets them."""
    env = {k: v for k, v in os.environ.items() if k not in ALLOCATOR_ENV}
    return {**env, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": str(threads), "PYTHONUNBUFFERED": "1", **extra}


def log_tail(path: Path, lines: int = 20) -> str:
    """The last non-empty lines of a log (progress bars' carriage returns count as line ends)."""
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join([line for line in text.replace("\r", "\n").splitlines() if line.strip()][-lines:])


def failure(name: str, folder: Path, what: str) -> FlairsuiteError:
    return FlairsuiteError(f"{name}: {what}; last lines of {folder / 'log.txt'}:\n{log_tail(folder / 'log.txt')}")


def run_folder(work: Path, name: str) -> Path:
    folder = work / name
    folder.mkdir()
    return folder


def launch(spec: dict[str, Any], folder: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start a child run in its own process group, logging to `folder/log.txt`."""
    write_json(folder / "spec.json", spec)
    with (folder / "log.txt").open("w") as log:
        return subprocess.Popen(
            [sys.executable, str(CHILD), str(folder / "spec.json")],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder, start_new_session=True,
        )


def kill(process: subprocess.Popen) -> None:
    """Kill a child run with everything it started (DataLoader workers)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def wait_until(process: subprocess.Popen, deadline: float, ready: Optional[Path] = None) -> bool:
    """Wait until `deadline` (time.time()), until `ready` exists, or until the process exits; whether it still runs."""
    while time.time() < deadline and process.poll() is None and not (ready and ready.exists()):
        time.sleep(0.2)
    return process.poll() is None


def run_flairsuite(name: str, spec: dict[str, Any], folder: Path, threads: int) -> dict[str, Any]:
    """Train with flairsuite for the budget (its own clock); its summary.json."""
    process = launch(spec, folder, child_env(threads, {}))
    try:
        if wait_until(process, time.time() + STARTUP_SECONDS + 2 * spec["budget"]):
            raise failure(name, folder, f"still running {STARTUP_SECONDS + 2 * spec['budget']:.0f} s after its start")
    finally:
        kill(process)
    if process.returncode != 0:
        raise failure(name, folder, f"exited with status {process.returncode}")
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def run_flair(name: str, spec: dict[str, Any], folder: Path, threads: int, env: dict[str, str]) -> list[dict[str, Any]]:
    """Train with plain Flair and kill it `budget` seconds after `trainer.train` began; its timed events."""
    process = launch(spec, folder, child_env(threads, env))
    started = folder / "started.json"
    try:
        if not wait_until(process, time.time() + STARTUP_SECONDS, started):
            raise failure(name, folder, f"exited with status {process.returncode} before training began")
        if not started.exists():
            raise failure(name, folder, f"did not begin training within {STARTUP_SECONDS} s")
        t0 = json.loads(started.read_text(encoding="utf-8"))["t0"]
        if not wait_until(process, t0 + spec["budget"]):
            raise failure(name, folder, f"exited with status {process.returncode} before its budget was spent")
    finally:
        kill(process)
    events = folder / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines() if events.exists() else []
    return [json.loads(line) for line in lines]


# ---------------------------------------------------------------- per-run results


@dataclass
class Scale:
    """What every run at one hidden size is measured against."""

    hyper: Hyper
    text: str  # the capped valid text
    budget: float
    flops: int  # per trained character
    peak: float  # sgemm GFLOP/s
    eval_seconds: float = 0.0  # one validation pass, timed on flairsuite's model (the same work for every run)

    def rates(self, chars: int, seconds: float, validations: int) -> dict[str, Any]:
        """chars/s and GFLOP/s over the run's wall time; shares of the sgemm peak with and without validation."""
        per_second = chars / seconds if seconds > 0 else 0.0
        train_seconds = seconds - validations * self.eval_seconds  # an estimate: each validation as long as ours
        return {
            "chars": chars,
            "seconds": round(seconds, 2),
            "validations": validations,
            "chars_per_second": round(per_second),
            "gflops": round(per_second * self.flops / 1e9, 2),
            "peak_fraction": round(per_second * self.flops / 1e9 / self.peak, 4),
            "peak_fraction_excl_validation": (
                round(chars / train_seconds * self.flops / 1e9 / self.peak, 4) if chars and train_seconds > 0 else None
            ),
        }

    def batches(self, model: LanguageModel) -> StreamBatches:
        return evaluation_batches(encode(self.text, model.dictionary), self.hyper, forward=True)

    def valid_ppl(self, model_path: Path) -> float:
        """Perplexity per character of a saved model on the valid text, by flairsuite's `evaluate`."""
        model = LanguageModel.load_language_model(model_path)
        return math.exp(evaluate(model, self.batches(model), self.hyper.sequence_length))

    def time_validation(self, model_path: Path, repeats: int = 3) -> float:
        """Seconds of the fastest of a few validation passes of a saved model."""
        model = LanguageModel.load_language_model(model_path)
        batches = self.batches(model)
        fastest = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            evaluate(model, batches, self.hyper.sequence_length)
            fastest = min(fastest, time.perf_counter() - start)
        return fastest


def flairsuite_result(summary: dict[str, Any], folder: Path, scale: Scale) -> dict[str, Any]:
    """flairsuite's rates over its own clock (validations and checkpoints included) and its best model's perplexity."""
    ppl = scale.valid_ppl(folder / "best-lm.pt")
    history = [{k: point[k] for k in ("chars", "seconds", "valid_ppl")} for point in summary["history"]]
    best = min(history, key=lambda point: point["valid_ppl"])
    seconds = summary["chars_seen"] / summary["chars_per_second"]  # summary's "hours" is rounded too coarsely
    return {
        **scale.rates(summary["chars_seen"], seconds, len(history)),
        "end_ppl": round(ppl, 4),
        "end_ppl_reached_at": round(best["seconds"] + scale.eval_seconds, 1),
        "history": history,
    }


def flair_chars(splits: int, per_split: list[int]) -> int:
    """Characters Flair trained on in its first `splits` splits (in file order in epoch 1, shuffled later)."""
    epochs, rest = divmod(splits, len(per_split))
    partial = sum(per_split[:rest]) if epochs == 0 else rest * sum(per_split) // len(per_split)
    return epochs * sum(per_split) + partial


def flair_result(events: list[dict[str, Any]], split_ids: list[int], folder: Path, scale: Scale) -> dict[str, Any]:
    """Flair's rates up to its last validation within the budget (the split the budget cuts off is lost)."""
    validated = [e for e in events if e["event"] == "validated" and e["seconds"] <= scale.budget]
    bests = [e["seconds"] for e in events if e["event"] == "best"]
    splits = validated[-1]["splits"] if validated else 0
    chars = flair_chars(splits, [trained_chars(n, scale.hyper.batch_size) for n in split_ids])
    ppl = scale.valid_ppl(folder / "best-lm.pt") if bests else None
    return {
        **scale.rates(chars, validated[-1]["seconds"] if validated else 0.0, splits),
        "end_ppl": None if ppl is None else round(ppl, 4),
        "end_ppl_reached_at": bests[-1] if bests else None,
        "events": events,
    }


def time_to_reach(history: list[dict[str, Any]], target: float, eval_seconds: float) -> Optional[float]:
    """Seconds until flairsuite's first validation at or below `target` finished (None: not within the budget)."""
    for point in history:
        if point["valid_ppl"] <= target:
            return round(point["seconds"] + eval_seconds, 1)
    return None


# ---------------------------------------------------------------- the benchmark


def base_hyper(args: argparse.Namespace) -> tuple[str, Hyper]:
    """The recipe's raw-text set, and its cpu preset with the benchmark's settings."""
    raw_set, preset = raw_set_of(args.lang), recipe(args.lang, "cpu")
    window_schedule = {"sequence_length_start": args.sequence_length_start, "ramp_chars": args.ramp_chars}
    return raw_set, Hyper(
        **{
            **preset,
            **{key: value for key, value in window_schedule.items() if value is not None},
            "sequence_length": args.sequence_length,
            "batch_size": args.batch_size,
            "learning_rate": args.lr,
            "clip": args.clip,
            "dropout": args.dropout,
            "validate_chars": args.validate_chars,
            "valid_chars": args.valid_chars,
        }
    )


def bench_size(
    hyper: Hyper, corpus: PreparedCorpus, text: str, args: argparse.Namespace, work: Path, peak: float
) -> dict[str, Any]:
    """All runs at one hidden size: flairsuite first (its speed sizes Flair's split files), then each Flair setting."""
    h = hyper.hidden_size
    scale = Scale(hyper, text, args.budget, flops_per_char(hyper, char_dictionary(corpus.chars)), peak)
    spec = {
        "hyper": hyper.record(),
        "prepared": str(corpus.path),
        "budget": args.budget,
        "threads": args.threads,
        "seed": args.seed,
    }
    folder = run_folder(work, f"h{h}-flairsuite")
    print(f"hidden {h}: flairsuite, {args.budget:.0f} s ...", flush=True)
    fs_spec = {**spec, "trainer": "flairsuite", "out": str(folder)}
    summary = run_flairsuite(f"hidden {h} flairsuite", fs_spec, folder, args.threads)
    scale.eval_seconds = scale.time_validation(folder / "best-lm.pt")
    results = {"flairsuite": flairsuite_result(summary, folder, scale)}
    split_chars = args.split_chars or auto_split_chars(results["flairsuite"]["chars_per_second"], args)
    corpus_folder = work / f"h{h}-flair-corpus"
    split_ids = flair_corpus(corpus, corpus_folder, split_chars, text[: args.valid_chars])
    for name, env in FLAIR_CONFIGS.items():
        folder = run_folder(work, f"h{h}-{name.replace(' (', '-').rstrip(')')}")
        print(f"hidden {h}: {name}, split files of {split_chars:,} chars, {args.budget:.0f} s ...", flush=True)
        flair_spec = {**spec, "trainer": "flair", "out": str(folder), "flair_corpus": str(corpus_folder)}
        events = run_flair(f"hidden {h} {name}", flair_spec, folder, args.threads, env)
        results[name] = flair_result(events, split_ids, folder, scale)
    shutil.rmtree(corpus_folder)
    compare(results, scale.eval_seconds)
    return {
        "hidden_size": h,
        "flops_per_char": scale.flops,
        "eval_seconds": round(scale.eval_seconds, 2),
        "split_chars": split_chars,
        "runs": results,
    }


def compare(results: dict[str, Any], eval_seconds: float) -> None:
    """Time flairsuite needs to reach each Flair run's end-of-budget perplexity."""
    fs = results["flairsuite"]
    for name in FLAIR_CONFIGS:
        target = results[name]["end_ppl"]
        reached = time_to_reach(fs["history"], target, eval_seconds) if target else None
        results[name]["flairsuite_seconds_to_end_ppl"] = reached


# ---------------------------------------------------------------- report


def fmt(value: Optional[float], pattern: str, missing: str = "-") -> str:
    return missing if value is None else format(value, pattern)


def size_table(size: dict[str, Any], budget: float, peak: float) -> list[str]:
    """The table of one hidden size, and when flairsuite reaches each Flair run's end perplexity."""
    h, flops, runs = size["hidden_size"], size["flops_per_char"], size["runs"]
    lines = [
        "",
        f"hidden {h}: {flops / 6e6:.2f} M LSTM+decoder weights, {flops / 1e6:.1f} MFLOP per char; "
        f"sgemm bound {peak * 1e9 / flops:,.0f} chars/s; Flair split files of {size['split_chars']:,} chars",
        f"  {'run':<19}{'chars/s':>9}{'GFLOP/s':>9}{'% sgemm':>9}{'excl. valid':>12}{'valids':>7}{'end ppl':>9}{'reached':>9}",
    ]
    for name, r in runs.items():
        lines.append(
            f"  {name:<19}{r['chars_per_second']:>9,}{r['gflops']:>9.1f}{r['peak_fraction']:>9.0%}"
            f"{fmt(r['peak_fraction_excl_validation'], '.0%'):>12}{r['validations']:>7}"
            f"{fmt(r['end_ppl'], '.3f'):>9}{fmt(r['end_ppl_reached_at'], '.0f'):>7} s"
        )
    for name in FLAIR_CONFIGS:
        r = runs[name]
        if r["end_ppl"] is None:
            lines.append(f"  {name}: no validation within the budget (use a smaller --split-chars)")
            continue
        reached = r["flairsuite_seconds_to_end_ppl"]
        when = "not within its budget" if reached is None else f"after {reached:.0f} s = {reached / budget:.2f}x budget"
        flair_at = r["end_ppl_reached_at"]
        lines.append(f"  flairsuite reaches {name}'s end ppl {r['end_ppl']:.3f} {when} (Flair: {flair_at:.0f} s)")
    return lines


def targets(sizes: list[dict[str, Any]], budget: float) -> list[tuple[str, Optional[bool]]]:
    """The issue's targets: (description, PASS / FAIL / None when not measured)."""
    fractions = [s["runs"]["flairsuite"]["peak_fraction_excl_validation"] for s in sizes]
    shown = ", ".join(f"{s['hidden_size']}: {fmt(f, '.0%')}" for s, f in zip(sizes, fractions))
    checks: list[tuple[str, Optional[bool]]] = [
        (
            f"flairsuite >= {TARGET_PEAK_FRACTION:.0%} of the sgemm bound at every size (excl. validation: {shown})",
            all(f is not None and f >= TARGET_PEAK_FRACTION for f in fractions),
        )
    ]
    label = f"hidden {TARGET_HIDDEN}: flairsuite reaches Flair's end-of-budget ppl within {TARGET_TIME_FRACTION}x the budget"
    runs = next((s["runs"] for s in sizes if s["hidden_size"] == TARGET_HIDDEN), None)
    if runs is None:
        return checks + [(f"{label} (hidden {TARGET_HIDDEN} not run)", None)]
    times = [runs[name]["flairsuite_seconds_to_end_ppl"] for name in FLAIR_CONFIGS]
    shown = ", ".join(f"{name}: {fmt(t, '.0f', 'not reached')}" for name, t in zip(FLAIR_CONFIGS, times))
    measured = all(runs[name]["end_ppl"] is not None for name in FLAIR_CONFIGS)
    passed = all(t is not None and t <= TARGET_TIME_FRACTION * budget for t in times) if measured else None
    return checks + [(f"{label} ({shown} of {budget:.0f} s)", passed)]


def speedup(fast: dict[str, Any], slow: dict[str, Any]) -> str:
    """`fast`'s chars/s over `slow`'s, or "-" where `slow` completed no split."""
    return f"{fast['chars_per_second'] / slow['chars_per_second']:.2f}x" if slow["chars_per_second"] else "-"


def summary_lines(sizes: list[dict[str, Any]], budget: float) -> list[str]:
    header = f"  {'hidden':<8}{'chars/s vs defaults':>21}{'vs allocator':>14}{'flairsuite % sgemm':>20}"
    lines = ["", "summary (flairsuite / Flair):", header]
    for s in sizes:
        runs = s["runs"]
        ratio = [speedup(runs["flairsuite"], runs[name]) for name in FLAIR_CONFIGS]
        lines.append(f"  {s['hidden_size']:<8}{ratio[0]:>21}{ratio[1]:>14}{runs['flairsuite']['peak_fraction']:>20.0%}")
    lines.append("")
    for label, passed in targets(sizes, budget):
        lines.append(f"  {'n/a ' if passed is None else 'PASS' if passed else 'FAIL'}  {label}")
    return lines


def hyper_line(hyper: Hyper) -> str:
    ramp = (
        f"flairsuite's window grows {hyper.sequence_length_start}->{hyper.sequence_length} "
        f"over {hyper.ramp_chars:,} chars (Flair's is {hyper.sequence_length} throughout)"
        if hyper.ramp_chars > 0 and hyper.sequence_length_start < hyper.sequence_length
        else "no window ramp"
    )
    return (
        f"both: window {hyper.sequence_length}, batch {hyper.batch_size}, lr {hyper.learning_rate}, clip {hyper.clip}, "
        f"dropout {hyper.dropout}, anneal x{hyper.anneal_factor} after {hyper.patience} bad validations; {ramp}"
    )


def results(args: argparse.Namespace, corpus: PreparedCorpus, hyper: Hyper, peak: float, sizes: list) -> dict[str, Any]:
    """Everything measured so far, for the results JSON."""
    return {
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "machine": machine(args.threads, sgemm_gflops=round(peak, 2)),
        "corpus": {"path": str(corpus.path), "train_chars": corpus.meta["splits"]["train"]},
        "hyper": hyper.record(),
        "complete": len(sizes) == len(args.hidden),
        "targets": [{"target": label, "passed": passed} for label, passed in targets(sizes, args.budget)],
        "sizes": sizes,
    }


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    args.threads = args.threads or torch.get_num_threads()
    flair.device = torch.device("cpu")
    raw_set, hyper = base_hyper(args)
    cache = Path(args.prepared_dir) if args.prepared_dir else prepared_dir()
    corpus = prepare(PrepareConfig(language=args.lang, raw_set=raw_set), corpora_dir(args.corpora_dir), cache)
    with corpus.text_path("valid").open(encoding="utf-8", newline="") as handle:
        text = handle.read(args.valid_chars + 1)
    train_chars = corpus.meta["splits"]["train"]
    print(f"prepared corpus {corpus.path}: {train_chars:,} train chars; validating on {len(text) - 1:,}", flush=True)
    print(hyper_line(hyper), flush=True)
    peak = sgemm_peak(args.threads)
    print(f"sgemm peak ({SGEMM_SIZE}² fp32, {args.threads} threads): {peak:.1f} GFLOP/s", flush=True)
    work = Path(tempfile.mkdtemp(prefix="charlm-speed-", dir=args.work_dir))
    sizes: list[dict[str, Any]] = []
    try:
        for h in args.hidden:
            sizes.append(bench_size(replace(hyper, hidden_size=h), corpus, text, args, work, peak))
            print("\n".join(size_table(sizes[-1], args.budget, peak)), flush=True)
            write_json(args.out, results(args, corpus, hyper, peak, sizes))
    finally:
        if args.keep:
            print(f"run folders kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(summary_lines(sizes, args.budget)))
    print(f"\nresults: {args.out}")
    return 0


def stop_on_sigterm() -> None:
    """Let SIGTERM unwind like Ctrl-C, so that the child runs are killed and the run folders removed."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    stop_on_sigterm()
    run_main(main)
