"""`flairsuite predict` on one-line texts of 1, 5 and 20 MB: wall time, characters/s and peak RSS per size, and linearity.

The texts are the walk-through's letter (experiments/walkthrough/brief.txt) with its line breaks replaced by spaces,
repeated to the size (MB: 10^6 bytes of UTF-8, cut at a character): a whole edition exported as one line, the input
that grew `predict` to 5.3 GB before it read in parts. Each size is tagged by the installed `flairsuite predict` in a
fresh child process (`--threads`, OMP_NUM_THREADS to match; output to a file in a temporary folder, its lines
counted); the peak RSS is the child's own (`os.wait4`). A run on the letter itself gives the fixed cost (Python,
Flair and the model loading), and the time less that is the tagging. Linearity: the largest size's time over the
smallest's, against the ratio of their sizes (20 for 20 MB / 1 MB).

The model: `--model`, by default the committed test tagger tests/fixtures/saved-models/lcrf-ner.pt (LCRF-NER over a
hidden-16 character LM and Flair's character embeddings: small, so the numbers are the reading, splitting, tagging
loop and writing rather than a large model's arithmetic).

    nice python benchmarks/large_input.py --sizes 1 5 20 --threads 1      # --format json, --max-minutes 15, --json results.json
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from common import machine, run_main

from flairsuite.errors import FlairsuiteError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LETTER = ROOT / "experiments" / "walkthrough" / "brief.txt"
MODEL = ROOT / "tests" / "fixtures" / "saved-models" / "lcrf-ner.pt"
FLAIRSUITE = Path(sys.executable).with_name("flairsuite")
SUMMARY = re.compile(r"tagged ([\d,]+) sentences, ([\d,]+) tokens in ([\d.]+) s")
RSS_LIMIT_MB = 1536  # the target: under 1.5 GB at every size


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--sizes", type=float, nargs="+", default=[1, 5, 20], help="text sizes in MB (default 1 5 20)")
    add("--model", type=Path, default=MODEL, help="the tagger (default: the committed tests/fixtures/saved-models/lcrf-ner.pt)")
    add("--format", default="column", help="predict's --format (default column)")
    add("--threads", type=int, default=1, help="torch threads of predict (default 1)")
    add("--max-minutes", type=float, default=15.0, help="skip the sizes after one that took longer than this (default 15)")
    add("--json", type=Path, help="also write the results to this JSON file")
    return parser.parse_args(argv)


def one_line_text(size: int) -> str:
    """The letter with its line breaks as spaces, repeated to `size` bytes of UTF-8 (cut at a character)."""
    letter = " ".join(LETTER.read_text(encoding="utf-8").split("\n")).strip() + " "
    encoded = letter.encode("utf-8")
    data = (encoded * (size // len(encoded) + 1))[:size]
    return data.decode("utf-8", errors="ignore")


def run_predict(args: argparse.Namespace, text_path: Path, out: Path) -> dict:
    """One `flairsuite predict` in a child process: wall seconds, peak RSS (MB), its summary's numbers, output lines."""
    command = [str(FLAIRSUITE), "predict", str(args.model), str(text_path), "--format", args.format, "--threads", str(args.threads), "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        stderr.seek(0)
        log = stderr.read().decode("utf-8", "replace")
    if child.returncode != 0:
        raise FlairsuiteError(f"flairsuite predict failed on {text_path.name} (exit {child.returncode}): {log.strip().splitlines()[-1:]}")
    found = SUMMARY.search(log)
    if found is None:
        raise FlairsuiteError(f"no summary line in predict's stderr: {log[-300:]}")
    with out.open("rb") as handle:
        lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    sentences, tokens = (int(found.group(i).replace(",", "")) for i in (1, 2))
    return {"seconds": seconds, "rss_mb": usage.ru_maxrss / 1024, "sentences": sentences, "tokens": tokens, "output_lines": lines}


def measure(args: argparse.Namespace, folder: Path) -> tuple[dict, list[dict]]:
    """The fixed cost (the letter alone), then one run per size until one takes longer than --max-minutes."""
    fixed = run_predict(args, LETTER, folder / "letter.out")
    print(f"fixed cost (the letter, {LETTER.stat().st_size} bytes): {fixed['seconds']:.1f} s, peak RSS {fixed['rss_mb']:,.0f} MB", flush=True)
    rows = []
    for size in args.sizes:
        text = one_line_text(int(size * 1_000_000))
        path = folder / f"one-line-{size:g}MB.txt"
        path.write_text(text, encoding="utf-8")
        row = {"mb": size, "chars": len(text), **run_predict(args, path, folder / "out.txt")}
        row["tagging_seconds"] = max(row["seconds"] - fixed["seconds"], 1e-9)
        rows.append(row)
        path.unlink()
        print(f"  {size:g} MB done: {row['seconds']:.1f} s, peak RSS {row['rss_mb']:,.0f} MB", file=sys.stderr, flush=True)
        if row["seconds"] > args.max_minutes * 60:
            print(f"  {size:g} MB took longer than {args.max_minutes:g} min: the larger sizes are left out", file=sys.stderr)
            break
    return fixed, rows


def report(rows: list[dict]) -> None:
    """The table, the linearity line and the memory target."""
    print(f"{'size':>6} {'characters':>12} {'sentences':>10} {'wall s':>8} {'tagging s':>10} {'chars/s':>9} {'peak RSS':>10}")
    for row in rows:
        rate = row["chars"] / row["tagging_seconds"]
        print(f"{row['mb']:>4g} MB {row['chars']:>12,} {row['sentences']:>10,} {row['seconds']:>8.1f} {row['tagging_seconds']:>10.1f} "
              f"{rate:>9,.0f} {row['rss_mb']:>7,.0f} MB")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        size_ratio = last["chars"] / first["chars"]
        print(f"time({last['mb']:g} MB) / time({first['mb']:g} MB): wall {last['seconds'] / first['seconds']:.1f}, "
              f"tagging {last['tagging_seconds'] / first['tagging_seconds']:.1f}, against {size_ratio:.1f} for linear time")
    worst = max(row["rss_mb"] for row in rows)
    print(f"{'PASS' if worst < RSS_LIMIT_MB else 'FAIL'}  peak RSS under {RSS_LIMIT_MB:,} MB at every size (largest {worst:,.0f} MB)")


def main() -> int:
    args = parse_args()
    if not FLAIRSUITE.exists():
        raise FlairsuiteError(f"{FLAIRSUITE}: no flairsuite command beside this Python (pip install -e . first)")
    with tempfile.TemporaryDirectory(prefix="large-input-") as folder:
        fixed, rows = measure(args, Path(folder))
    report(rows)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(args.threads), "model": str(args.model), "format": args.format,
                                         "fixed": fixed, "sizes": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    run_main(main)
