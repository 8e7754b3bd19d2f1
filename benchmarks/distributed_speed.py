"""Scale-out on one machine: data-parallel char-LM training under torchrun, and a tagging grid on Ray.

Part 1 (`lm`): the same German character LM (the `cpu` recipe, forward, `--hidden-size`) trained for
`--chars` characters (a) in one process with all cores' threads and (b) as N gloo ranks of one
thread each (`torchrun --standalone --nproc_per_node N`), each on a fresh copy of the prepared
corpus cache; it reports chars/s from each run's summary.json and the validation perplexity after
the same characters (one validation point at the end), which must agree up to dropout noise.

Part 2 (`grid`): a 12-run Sturm grid (Map and Map-CRF x 6 seeds on the cached char-LM pair + fastText,
`--epochs` epochs) run three ways on fresh results folders sharing one embedding cache that is
filled first: `flairsuite tag` in one process (all cores), two `flairsuite tag --runs` processes of
one thread (one tagger each), and `flairsuite tag --ray local --threads 1`. It reports wall time and
the peak RSS of each run (from each run's metrics.json, sampled in the process that trains it: the
worker's; with and without the embedding cache's memory-mapped pages).

    python benchmarks/distributed_speed.py lm --chars 600000
    python benchmarks/distributed_speed.py grid --epochs 2

Results: benchmarks/results/distributed_speed.json (each part updates its own key).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from common import machine, run_main

from flairsuite.files.atomic import write_json
from flairsuite.files.paths import cache_dir, embeddings_cache_dir, home

RESULTS = Path(__file__).parent / "results" / "distributed_speed.json"
GRID = """name: bench-grid
corpora: [sturm]
embeddings:
  proposed+word: [charlm:de-forward, charlm:de-backward, fasttext:de]
taggers: [map, map-crf]
seeds: [1, 2, 3, 4, 5, 6]
train: {{max_epochs: {epochs}}}
entity_fix: [false]
"""


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    lm = sub.add_parser("lm", help="1 process vs N torchrun ranks, char-LM training")
    lm.add_argument("--chars", type=int, default=600_000, help="training characters per run (default 600,000)")
    lm.add_argument("--hidden-size", type=int, default=512, help="LSTM hidden size (default 512, the cpu preset)")
    lm.add_argument("--ranks", type=int, default=os.cpu_count() or 2, help="torchrun ranks (default: the cores)")
    grid = sub.add_parser("grid", help="one process vs two --runs processes vs Ray local, a 12-run grid")
    grid.add_argument("--epochs", type=int, default=2, help="epochs per run (default 2)")
    args = parser.parse_args(argv)
    if getattr(args, "chars", 1) <= 0 or getattr(args, "ranks", 2) < 2 or getattr(args, "epochs", 1) <= 0:
        parser.error("--chars and --epochs must be positive, --ranks at least 2")
    return args


def flairsuite(*args: str, ranks: int = 1) -> list[str]:
    runner = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks)] if ranks > 1 else []
    return [sys.executable, *runner, "-m", "flairsuite", *args]


def timed(commands: list[list[str]], env: dict[str, str]) -> float:
    """Run `commands` at once; seconds until the last ends (each must succeed)."""
    started = time.perf_counter()
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for command in commands]
    for process in processes:
        output, _ = process.communicate()
        if process.returncode:
            sys.exit(f"error: {' '.join(process.args[-6:])} failed:\n{output[-2000:]}")
    return time.perf_counter() - started


def lm_part(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Both LM runs (part 1)."""
    env = {**os.environ, "FLAIRSUITE_HOME": str(work)}
    (work / "cache").mkdir()
    os.symlink((cache_dir(home()) / "prepared").resolve(), work / "cache" / "prepared")  # prepared once before: no preparation in the timing
    common = ["train-charlm", "--lang", "de", "--direction", "forward", "--hidden-size", str(args.hidden_size), "--max-chars", str(args.chars),
              "--validate-chars", str(args.chars), "--checkpoint-minutes", "1000"]
    runs = {}
    for name, ranks, threads in (("1 process", 1, os.cpu_count() or 1), (f"{args.ranks} ranks", args.ranks, 1)):
        out = work / name.replace(" ", "-")
        print(f"char LM, {name} ...", flush=True)
        wall = timed([flairsuite(*common, "--out", str(out), "--threads", str(threads), ranks=ranks)], env)
        summary = json.loads((out / "de-forward" / "summary.json").read_text(encoding="utf-8"))
        runs[name] = {"ranks": ranks, "threads_per_rank": threads, "wall_seconds": round(wall, 1), "chars": summary["chars_seen"],
                      "chars_per_second": summary["chars_per_second"], "valid_ppl": summary["valid_ppl"]}
    return {"hidden_size": args.hidden_size, "chars": args.chars, "runs": runs}


def run_memory(results: Path) -> tuple[int, int, int]:
    """(runs, largest peak RSS, largest peak RssAnon in MB: without the cache's mapped pages) over the metrics.json files below `results`."""
    memory = [json.loads(path.read_text(encoding="utf-8"))["memory"] for path in results.rglob("metrics.json")]
    return len(memory), max(m["peak_rss_mb"] for m in memory), max(m["peak_rss_anon_mb"] for m in memory)


def grid_part(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The three ways to run the grid (part 2)."""
    experiment = work / "bench-grid.yaml"
    experiment.write_text(GRID.format(epochs=args.epochs), encoding="utf-8")
    cache = embeddings_cache_dir(home()).resolve()  # the home's cache, read (Sturm's vectors are usually there already)
    for folder in ("charlm", "wordvectors"):
        os.symlink((home() / folder).resolve(), work / folder)
    env = {**os.environ, "FLAIRSUITE_HOME": str(work), "OMP_NUM_THREADS": "1"}
    tag = ["tag", str(experiment), "--cache-dir", str(cache)]
    ways = {
        "one process": [flairsuite(*tag, "--threads", str(os.cpu_count() or 1))],
        "two --runs processes": [flairsuite(*tag, "--threads", "1", "--runs", "*/map/*"), flairsuite(*tag, "--threads", "1", "--runs", "*/map-crf/*")],
        "ray local": [flairsuite(*tag, "--threads", "1", "--ray", "local")],
    }
    print("filling the embedding cache ...", flush=True)
    timed([flairsuite(*tag, "--runs", "*/map/seed-1")], env)  # one run: every (split, embedding) in the cache
    shutil.rmtree(work / "results")
    measured = {}
    for name, commands in ways.items():
        print(f"grid, {name} ...", flush=True)
        wall = timed(commands, env)
        runs, peak, anon = run_memory(work / "results")
        measured[name] = {"wall_seconds": round(wall, 1), "runs": runs, "peak_rss_mb_per_run": peak, "peak_rss_anon_mb_per_run": anon}
        shutil.rmtree(work / "results")
    return {"epochs": args.epochs, "runs": 12, "ways": measured}


def report(part: str, result: dict[str, Any]) -> list[str]:
    if part == "lm":
        lines = [f"char LM, hidden {result['hidden_size']}, {result['chars']:,} characters each:",
                 f"{'run':<12}{'wall s':>9}{'chars/s':>10}{'valid ppl':>11}"]
        for name, run in result["runs"].items():
            lines.append(f"{name:<12}{run['wall_seconds']:>9.1f}{run['chars_per_second']:>10,}{run['valid_ppl']:>11.3f}")
        one, many = result["runs"].values()
        lines.append(f"ranks / one process: {many['chars_per_second'] / one['chars_per_second']:.2f}x chars/s")
        return lines
    lines = [f"12-run grid, {result['epochs']} epochs each:",
             f"{'way':<22}{'wall s':>9}{'runs':>6}{'peak RSS/run MB':>17}{'anon MB':>9}"]
    ways = result["ways"]
    for name, way in ways.items():
        lines.append(f"{name:<22}{way['wall_seconds']:>9.1f}{way['runs']:>6}{way['peak_rss_mb_per_run']:>17,}{way['peak_rss_anon_mb_per_run']:>9,}")
    base = ways["one process"]["wall_seconds"]
    lines.append("wall time against one process: " + ", ".join(f"{name} {base / way['wall_seconds']:.2f}x" for name, way in ways.items()))
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="distributed-speed-") as temp:
        result = (lm_part if args.part == "lm" else grid_part)(args, Path(temp))
    result["machine"] = machine(os.cpu_count() or 1)
    saved = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    saved[args.part] = result
    write_json(RESULTS, saved)
    print("\n".join(report(args.part, result)))
    return 0


if __name__ == "__main__":
    run_main(main)
