"""Load on `flairsuite serve`: many POST /tag requests of real German letters, some at a time, over loopback.

Starts `flairsuite serve MODEL --port 0` (127.0.0.1 only, a free port) in a child process, builds short
letters from the Sturm edition (consecutive sentences of a split, detokenised, 2 to 6 sentences each),
and sends `--requests` of them (default 2,000), `--concurrency` at a time (default 16), with httpx's
async client; it stops sending after `--time-limit` seconds. Every answer is checked (HTTP 200, each
span's text equal to the letter at its offsets). Prints requests/s, p50/p90/p99 latency, errors and the
server's peak RSS (VmHWM of /proc/<pid>/status), and writes benchmarks/results/serve_load.json.
The comparison, measured in the same run on the same server: `--baseline-requests` sent one at a
time (concurrency 1), which is what a server without request batching gets; the ratio of requests/s
is printed.
Run `python benchmarks/serve_load.py -h`; see benchmarks/README.md.
"""

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import httpx
from common import machine, run_main

from flairsuite.atomic import write_json
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.paths import corpora_dir

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 900
NO_SPACE_BEFORE = re.compile(r" ([.,;:!?)\]»“])")
NO_SPACE_AFTER = re.compile(r"([(\[„«]) ")


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--model", type=Path, help="the saved tagger to serve (default: the newest benchmarks/cache/predict_speed-*.pt)")
    add("--requests", type=int, default=2000, help="requests to send at most (default 2000)")
    add("--concurrency", type=int, default=16, help="requests in flight at a time (default 16)")
    add("--time-limit", type=float, default=600.0, help="seconds after which no new request is sent (default 600)")
    add("--timeout", type=float, default=120.0, help="seconds one request may take before it counts as an error (default 120)")
    add("--baseline-requests", type=int, default=200, help="requests sent one at a time afterwards, the comparison (default 200; 0: none)")
    add("--split", default="test", help="the Sturm split the letters come from (default test)")
    add("--threads", type=int, default=0, help="the server's torch threads (default: torch's, all cores)")
    add("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    add("--out", type=Path, default=HERE / "results" / "serve_load.json", help="results JSON")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1 or args.time_limit <= 0:
        parser.error("--requests and --concurrency must be at least 1, --time-limit positive")
    return args


def default_model() -> Path:
    """The model predict_speed.py trained and cached, the newest if several."""
    cached = sorted((HERE / "cache").glob("predict_speed-*.pt"), key=lambda path: path.stat().st_mtime)
    if not cached:
        raise FlairsuiteError("no model: give --model PATH (a saved suite tagger), or run benchmarks/predict_speed.py once to cache one")
    return cached[-1]


def letters(split: str, root: Path) -> list[str]:
    """Short letters: runs of 2, 3, ... 6 consecutive Sturm sentences, detokenised."""
    sentences = read_splits(dataset("sturm"), root, [split])[split].sentences
    lines = [NO_SPACE_AFTER.sub(r"\1", NO_SPACE_BEFORE.sub(r"\1", " ".join(s.tokens))) for s in sentences]
    found, position, size = [], 0, 2
    while position < len(lines):
        found.append(" ".join(lines[position : position + size]))
        position += size
        size = size + 1 if size < 6 else 2
    return found


def start_server(model: Path, threads: int) -> tuple[subprocess.Popen, str]:
    """`flairsuite serve` in a child process on a free loopback port, and its URL once /health answers."""
    command = [sys.executable, "-c", "from flairsuite.cli import main; main()", "serve", str(model), "--host", "127.0.0.1", "--port", "0", "--no-access-log"]
    command += ["--threads", str(threads)] if threads else []
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    announced: list[str] = []
    ready = threading.Event()

    def pump() -> None:  # the server's output goes on to ours
        for line in process.stdout:
            sys.stderr.write(f"  server: {line}")
            match = re.search(r" on (http://\S+)", line)
            if match and not announced:
                announced.append(match.group(1))
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not ready.wait(1):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise FlairsuiteError(f"flairsuite serve did not start (exit code {process.poll()}; its output is above)")
    url = announced[0]
    while httpx.get(url + "health", timeout=30).status_code != 200:
        time.sleep(0.2)
    return process, url


def memory(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its peak, in MB (/proc/<pid>/status)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[key].split()[0]) / 1024 for name, key in (("rss_mb", "VmRSS"), ("peak_rss_mb", "VmHWM"))}


def check(text: str, response: httpx.Response) -> Optional[str]:
    """None for a good answer, else the kind of error."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    spans = response.json()["spans"]
    if any(text[s["start"] : s["end"]] != s["text"] for s in spans):
        return "offsets do not match the text"
    return None


async def load(url: str, texts: list[str], requests: int, concurrency: int, time_limit: float, timeout: float) -> dict[str, Any]:
    """Send `requests` texts (cycling) `concurrency` at a time; latencies of the good answers and the errors by kind."""
    latencies: list[float] = []
    errors: Counter = Counter()
    next_index = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
        start = time.perf_counter()

        async def worker() -> None:
            nonlocal next_index
            while next_index < requests and time.perf_counter() - start < time_limit:
                text = texts[next_index % len(texts)]
                next_index += 1
                sent = time.perf_counter()
                try:
                    error = check(text, await client.post("tag", json={"text": text}))
                except httpx.HTTPError as err:
                    error = type(err).__name__
                if error:
                    errors[error] += 1
                else:
                    latencies.append(time.perf_counter() - sent)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - start
    return {"sent": next_index, "seconds": seconds, "latencies": latencies, "errors": dict(errors)}


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the sorted values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def summary(run: dict[str, Any], chars: list[int]) -> dict[str, Any]:
    """Requests, errors, requests/s, characters/s and latency percentiles of one load phase."""
    latencies = run["latencies"]
    ms = {f"p{p}_ms": round(percentile(latencies, p / 100) * 1000, 1) for p in (50, 90, 99)} if latencies else {}
    return {
        "requests": run["sent"],
        "ok": len(latencies),
        "errors": sum(run["errors"].values()),
        "error_kinds": run["errors"],
        "seconds": round(run["seconds"], 2),
        "requests_per_s": round(len(latencies) / run["seconds"], 2),
        "chars_per_s": round(sum(chars[i % len(chars)] for i in range(run["sent"])) / run["seconds"]),
        **ms,
    }


def report(name: str, concurrency: int, phase: dict[str, Any]) -> None:
    latency = " ".join(f"{key[:-3]} {phase[key]:.0f} ms" for key in ("p50_ms", "p90_ms", "p99_ms") if key in phase)
    print(f"{name}: {phase['requests']} requests, {concurrency} concurrent, in {phase['seconds']:.1f} s: {phase['requests_per_s']:.1f} requests/s, "
          f"{phase['chars_per_s']:,} characters/s; latency {latency}; errors {phase['errors']} {phase['error_kinds'] or ''}")  # fmt: skip


def main() -> int:
    args = parse_args()
    model = args.model or default_model()
    texts = letters(args.split, corpora_dir(args.corpora_dir))
    chars = [len(text) for text in texts]
    print(f"{len(texts)} letters from sturm {args.split}: {statistics.mean(chars):.0f} characters on average (max {max(chars)})", flush=True)
    process, url = start_server(model, args.threads)
    try:
        idle = memory(process.pid)
        print(f"serving {model} at {url}: RSS {idle['rss_mb']:.0f} MB after loading", flush=True)
        loaded = summary(asyncio.run(load(url, texts, args.requests, args.concurrency, args.time_limit, args.timeout)), chars)
        after = memory(process.pid)
        single = None
        if args.baseline_requests:
            single = summary(asyncio.run(load(url, texts, args.baseline_requests, 1, args.time_limit, args.timeout)), chars)
    finally:
        process.terminate()
        process.wait(30)
    result = {
        "model": str(model),
        "concurrency": args.concurrency,
        **loaded,
        "one_at_a_time": single,
        "ratio_requests_per_s": round(loaded["requests_per_s"] / single["requests_per_s"], 2) if single and single["requests_per_s"] else None,
        "server_rss_mb_after_load": round(idle["rss_mb"]),
        "server_peak_rss_mb": round(after["peak_rss_mb"]),
        "letters": {"split": args.split, "count": len(texts), "mean_chars": round(statistics.mean(chars))},
        "stopped_by_time_limit": loaded["requests"] < args.requests,
        "machine": machine(args.threads or 0),
    }
    report("load", args.concurrency, loaded)
    print(f"server peak RSS {result['server_peak_rss_mb']} MB (after loading the model: {result['server_rss_mb_after_load']} MB)")
    if single:
        report("one at a time", 1, single)
        print(f"requests/s, {args.concurrency} concurrent (batched together) vs one at a time: {result['ratio_requests_per_s']:.2f}x")
    write_json(args.out, result)
    print(f"wrote {args.out}")
    errors = loaded["errors"] + (single["errors"] if single else 0)
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    run_main(main)
