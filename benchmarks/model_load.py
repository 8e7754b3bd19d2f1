"""Loading a saved tagger: Flair's `SequenceTagger.load` against the suite's `load_tagger` (its tensors mapped from the file).

The model: a Map-CRF over `fasttext:de` (dim 300, 158 k words: a 190 MB table), built untrained and saved once to
benchmarks/cache/ (git-ignored); `--model PATH` loads another. Each load runs in a fresh child process (`--repeats`
times, alternating) that imports everything first, then times the load alone and reports the process's resident memory
before and after it and its peak (`ru_maxrss`: the file's pages mapped during the load count there too, though the
system may drop them at any time). Prints the medians and the ratios Flair / flairsuite.
Run `python benchmarks/model_load.py -h`; see benchmarks/README.md.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

from common import machine, run_main

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import home
from flairsuite.logs import flair_quiet

HERE = Path(__file__).resolve().parent
SPECS = ["fasttext:de"]

CHILD = """
import json, resource, sys, time
from pathlib import Path
from flair.models import SequenceTagger
from flairsuite.inference.saved_tagger import load_tagger

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

method, path = sys.argv[1], sys.argv[2]
before = rss_mb()
start = time.perf_counter()
model = SequenceTagger.load(path) if method == "flair" else load_tagger(Path(path))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "before_mb": before, "after_mb": rss_mb(),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--model", type=Path, help="a saved tagger to load (default: a Map-CRF over fasttext:de, built once in benchmarks/cache/)")
    add("--repeats", type=int, default=3, help="loads per method (default 3)")
    add("--out", type=Path, default=HERE / "results" / "model_load.json", help="results JSON")
    return parser.parse_args(argv)


def benchmark_model() -> Path:
    """The default model, built and saved once."""
    path = HERE / "cache" / "model-load-fasttext-de.pt"
    if not path.is_file():
        from flair.data import Dictionary

        from flairsuite.embeddings import stack
        from flairsuite.models.registry import build_tagger

        tags = Dictionary(add_unk=False)
        for tag in ["O", "B-pers", "I-pers", "B-place", "I-place"]:
            tags.add_item(tag)
        path.parent.mkdir(parents=True, exist_ok=True)
        with flair_quiet():  # Flair's INFO lines would go to stdout
            model = build_tagger("map-crf", stack(SPECS, home()), tags, "ner")
        model.save(str(path))
    return path


def load_once(method: str, path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, method, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: loading {path} with {method} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    path = args.model or benchmark_model()
    if not path.is_file():
        raise FlairsuiteError(f"{path}: model file not found")
    print(f"model {path} ({path.stat().st_size / 1e6:,.0f} MB), {args.repeats} loads each, each in a fresh process", flush=True)
    runs: dict[str, list[dict[str, float]]] = {"flair": [], "flairsuite": []}
    for _ in range(args.repeats):
        for method in runs:
            runs[method].append(load_once(method, path))
    summary: dict[str, Any] = {}
    print(f"{'method':<12}{'load s':>8}{'RSS growth MB':>15}{'peak growth MB':>16}")
    for method, found in runs.items():
        row = {
            "seconds": statistics.median(r["seconds"] for r in found),
            "growth_mb": statistics.median(r["after_mb"] - r["before_mb"] for r in found),
            "peak_growth_mb": statistics.median(r["peak_mb"] - r["before_mb"] for r in found),
        }
        summary[method] = {**row, "runs": found}
        print(f"{method:<12}{row['seconds']:>8.2f}{row['growth_mb']:>15,.0f}{row['peak_growth_mb']:>16,.0f}")
    flair, suite = summary["flair"], summary["flairsuite"]
    print(f"load time flair / flairsuite: {flair['seconds'] / suite['seconds']:.2f}x; "
          f"peak growth flair / flairsuite: {flair['peak_growth_mb'] / suite['peak_growth_mb']:.2f}x")
    write_json(args.out, {"model": str(path), "repeats": args.repeats, "results": summary, "machine": machine(0)})
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    run_main(main)
