"""Commands beside other work: torch's own thread default against flairsuite's (the cores other processes leave free).

    python benchmarks/contention.py                          # tag, predict and serve; alone and beside 1 busy process
    python benchmarks/contention.py --parts tag --busy 2     # beside 2 CPU-bound loops
    python benchmarks/contention.py --parts predict serve --model results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt

Three workloads, each a user's command in a fresh process, none given `--threads`:

- tag: a smaller equivalent of the quickstart's first run: `flairsuite tag` of a one-run grid (Sturm, BiLSTM-CRF over
  `charlm:de-forward`, `charlm:de-backward` and `fasttext:de-quickstart`, the quickstart's stack, seed 1), `--epochs`
  epochs (default 1) on a `--subsample` of train (default 0.1: 9 batches) and the whole dev and test sets; the same
  kind of step (a small BiLSTM-CRF over cached embeddings) that the quickstart repeats, in tens of seconds. An untimed
  first run fills the embedding cache (`--cache-dir`, default the checkout's cache/embeddings) and leaves the model
  that predict and serve use unless `--model` is given. Each timed run has a home of its own (no finished run to copy);
  the models are read from the checkout ($FLAIRSUITE_MODELS).
- predict: `flairsuite predict MODEL FILE` of Sturm's test letters (`--letters`, runs of 2-6 sentences): the seconds
  it reports (loading the model and tagging, not the imports before).
- serve: `flairsuite serve MODEL --port 0`; the timed part is `--requests` POST /tag of those letters,
  `--concurrency` at a time (start-up not timed).

Each runs under the old default (`FLAIRSUITE_THREADS_POLICY=torch`: torch's own count, one thread a core, and libgomp's
own wait policy) and the new (the rule of flairsuite/runtime/threads.py, OMP_WAIT_POLICY=PASSIVE), alone and beside
`--busy` CPU-bound Python loops started a second before. The table gives seconds alone, seconds beside the loops, the
slowdown, the threads the command chose (from its log; `torch` for the old default), and old/new under load. The
load average of the machine at the start and the end is printed: numbers taken while other jobs ran say so.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

REPO = Path(__file__).resolve().parents[1]
STACK = ["charlm:de-forward", "charlm:de-backward", "fasttext:de-quickstart"]
# the console entry point, with the thread rule's INFO line shown (stderr) so that the table can say what was chosen
ENTRY = ("import logging, sys; logging.getLogger('flairsuite.runtime.threads').setLevel(logging.INFO); "
         "from flairsuite.cli import main; sys.argv[0] = 'flairsuite'; main()")
CHOSEN = re.compile(r"torch threads: (\d+)")
SUMMARY = re.compile(r"tagged [\d,]+ sentences, [\d,]+ tokens in ([\d.]+) s")
MODES = {"old": {"FLAIRSUITE_THREADS_POLICY": "torch"}, "new": {}}


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", choices=["tag", "predict", "serve"], default=["tag", "predict", "serve"])
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--busy", type=int, default=1, help="CPU-bound loops beside the command under load (default 1)")
    parser.add_argument("--epochs", type=int, default=1, help="tag: epochs of the timed runs (default 1)")
    parser.add_argument("--subsample", type=float, default=0.1, help="tag: share of Sturm's train (default 0.1)")
    parser.add_argument("--cache-dir", type=Path, default=REPO / "cache" / "embeddings", help="tag: embedding cache")
    parser.add_argument("--model", type=Path, default=None, help="predict/serve: a saved tagger [default: the tag part's]")
    parser.add_argument("--letters", type=int, default=200, help="predict/serve: Sturm test letters (default 200)")
    parser.add_argument("--requests", type=int, default=60, help="serve: POST /tag requests (default 60)")
    parser.add_argument("--concurrency", type=int, default=4, help="serve: requests at a time (default 4)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a command may take (default 600)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    return parser.parse_args(argv)


def environment(mode: str, **extra: str) -> dict[str, str]:
    """This process's environment without the thread settings a user may have, plus the mode's and `extra`."""
    kept = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "FLAIRSUITE_THREADS_POLICY")}
    return {**kept, "FLAIRSUITE_MODELS": str(REPO), "TQDM_DISABLE": "1", **MODES[mode], **extra}


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` CPU-bound Python processes for the duration, started a second before (as a job already running)."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(1.0 if loops else 0)
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def run(args: list[str], env: dict[str, str], timeout: float) -> tuple[float, str, str]:
    """`flairsuite ARGS` in a fresh process: its wall seconds, the thread count its log names last ('torch' if none), its
    stderr."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"flairsuite {' '.join(args[:2])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, chosen(done.stderr), done.stderr


def chosen(log: str) -> str:
    """The last thread count a command's log names (set_threads may change the import's), 'torch' where none."""
    found = CHOSEN.findall(log)
    return found[-1] if found else "torch"


def experiment(folder: Path, epochs: int, subsample: float) -> Path:
    """The one-run grid's file."""
    config = {"name": "contention", "corpora": [{"name": "sturm", "subsample": subsample}], "embeddings": {"proposed+word": STACK},
              "taggers": ["bilstm-crf"], "seeds": [1], "train": {"max_epochs": epochs}}
    path = folder / "contention.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def tag(args: argparse.Namespace, mode: str, scratch: Path, epochs: int) -> tuple[float, str, Path]:
    """One timed `flairsuite tag` in a fresh home: seconds, threads, the model it saved."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=scratch))
    path = experiment(home, epochs, args.subsample)
    seconds, threads, _ = run(["tag", str(path), "--cache-dir", str(args.cache_dir)], environment(mode, FLAIRSUITE_HOME=str(home)), args.timeout)
    models = sorted((home / "results" / "contention").glob("*/*/bilstm-crf/seed-1/model.pt"))
    if not models:
        sys.exit(f"flairsuite tag left no model.pt below {home}/results/contention")
    return seconds, threads, models[0]


def predict(args: argparse.Namespace, mode: str, model: Path, file: Path) -> tuple[float, str]:
    """One `flairsuite predict MODEL FILE`: the seconds it reports (loading the model and tagging; not its imports)."""
    _, threads, log = run(["predict", str(model), str(file), "--format", "json", "--out", os.devnull], environment(mode), args.timeout)
    return float(SUMMARY.search(log).group(1)), threads


def start_server(model: Path, env: dict[str, str], timeout: float) -> tuple[subprocess.Popen, str, list[str]]:
    """`flairsuite serve MODEL --port 0` on loopback; the process, its URL once /health answers, and its output so far."""
    command = [sys.executable, "-c", ENTRY, "serve", str(model), "--host", "127.0.0.1", "--port", "0", "--no-access-log"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        for line in server.stdout:
            output.append(line)
            if " on http://" in line:
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(timeout):
        server.kill()
        sys.exit("flairsuite serve did not start:\n" + "".join(output[-30:]))
    url = re.search(r" on (http://\S+)", "".join(output)).group(1).rstrip("/")
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=30).read()
            return server, url, output
        except OSError:
            time.sleep(0.2)


def post(url: str, text: str) -> None:
    """One POST /tag; an answer without spans ends the benchmark."""
    request = urllib.request.Request(url + "/tag", json.dumps({"text": text}).encode(), {"Content-Type": "application/json"})
    answer = json.loads(urllib.request.urlopen(request, timeout=300).read())
    if "spans" not in answer:
        sys.exit(f"serve answered {answer}")


def serve(args: argparse.Namespace, mode: str, model: Path, texts: list[str]) -> tuple[float, str]:
    """`--requests` POST /tag, `--concurrency` at a time, to a fresh server: the seconds they took."""
    server, url, output = start_server(model, environment(mode), args.timeout)
    try:
        bodies = [texts[i % len(texts)] for i in range(args.requests)]
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(lambda text: post(url, text), bodies))
        seconds = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(30)
    return seconds, chosen("".join(output))


def measure(args: argparse.Namespace, part: str, mode: str, job: Any) -> dict[str, Any]:
    """One workload under one mode, alone and beside the busy loops."""
    row: dict[str, Any] = {"part": part, "mode": mode}
    for load, count in (("alone", 0), ("busy", args.busy)):
        with busy_loops(count):
            seconds, threads = job()
        row[load], row[f"threads_{load}"] = round(seconds, 1), threads
        print(f"  {part} {mode} {load}: {seconds:.1f} s, threads {threads}", file=sys.stderr, flush=True)
    row["slowdown"] = round(row["busy"] / row["alone"], 2)
    return row


def table(rows: list[dict[str, Any]], busy: int) -> str:
    """The rows as a Markdown table, with old/new under load per part."""
    lines = [f"| command | default | s alone | s beside {busy} busy | slowdown | threads alone/busy | old/new under load |",
             "|---|---|--:|--:|--:|---|--:|"]
    for row in rows:
        old = next((r for r in rows if r["part"] == row["part"] and r["mode"] == "old"), None)
        ratio = f"{old['busy'] / row['busy']:.2f}x" if old and row["mode"] == "new" else ""
        lines.append(f"| {row['part']} | {row['mode']} | {row['alone']:.1f} | {row['busy']:.1f} | {row['slowdown']:.2f}x | "
                     f"{row['threads_alone']}/{row['threads_busy']} | {ratio} |")
    return "\n".join(lines)


def main() -> int:
    args = parse_args()
    load_before = os.getloadavg()
    rows, scratch = [], Path(tempfile.mkdtemp(prefix="contention-"))
    try:
        model = args.model
        if "tag" in args.parts or model is None:
            print("untimed first tag run (embedding cache, model) ...", file=sys.stderr, flush=True)
            trained = tag(args, "new", scratch, 1)[2]
            model = model or trained
        for mode in args.modes if "tag" in args.parts else []:
            rows.append(measure(args, "tag", mode, lambda: tag(args, mode, scratch, args.epochs)[:2]))
        from common import letters  # benchmarks/ is the script's folder, first on sys.path

        texts = letters(args.letters)
        file = scratch / "letters.txt"
        file.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
        for mode in args.modes if "predict" in args.parts else []:
            rows.append(measure(args, "predict", mode, lambda: predict(args, mode, model, file)))
        for mode in args.modes if "serve" in args.parts else []:
            rows.append(measure(args, "serve", mode, lambda: serve(args, mode, model, texts)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, affinity {len(os.sched_getaffinity(0))}; load average (1/5/15 min) at the start "
          f"{'/'.join(f'{x:.1f}' for x in load_before)}, at the end {'/'.join(f'{x:.1f}' for x in load_after)}")
    print(table(rows, args.busy))
    if args.json:
        args.json.write_text(json.dumps({"load_before": load_before, "load_after": load_after, "busy": args.busy, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
