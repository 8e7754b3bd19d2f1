"""Where a tagging run's anonymous memory (RssAnon) goes: oneDNN's primitive cache, and the corpus it holds.

1. A bidirectional LSTM of the recipe's BiLSTM-CRF (256 a direction over the 1,324-wide stack) trains under bfloat16
   autocast on packed batches of 32 whose longest sentence grows by 4 tokens a batch (20 to 416): each length is a
   new oneDNN shape. Run in two fresh processes, oneDNN's default cache against the bound `flairsuite tag` sets
   (flairsuite/runtime/allocator.py); prints the growth of RssAnon from the 6th batch on and the seconds.
2. The registry corpus `--corpus` (default LER coarse) loaded as the runner holds it (`load_labeled`: token texts,
   spacing and tags, `flairsuite/tagging/data.py`) against the labeled Flair sentences it held before (`to_flair`),
   each in a fresh process: RssAnon before and after, per token, and the ratio.

    FLAIRSUITE_CORPORA=../shared/corpora python benchmarks/tagging_memory.py --threads 1
"""

import argparse
import json
import os
import subprocess
import sys

from common import run_main

from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import corpora_dir
from flairsuite.runtime.allocator import ONEDNN_CACHE, PRIMITIVE_CACHE

GROWTH = """
import random, sys, time, torch
from flairsuite.runtime.memory import current_mb
torch.set_num_threads(int(sys.argv[1]))
lstm = torch.nn.LSTM(1324, 256, bidirectional=True, batch_first=True)
random.seed(0)
started = time.perf_counter()
for batch, longest in enumerate(range(20, 420, 4)):
    lengths = sorted([longest] + [random.randint(1, longest) for _ in range(31)], reverse=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(32, longest, 1324), lengths, batch_first=True)
        out, _ = lstm(packed)
    out.data.float().sum().backward()
    if batch == 5:
        start = current_mb()["RssAnon"]
print(current_mb()["RssAnon"] - start, time.perf_counter() - started)
"""


def primitive_cache_growth(threads: int) -> None:
    """Part 1: RssAnon growth over 100 batch lengths, oneDNN's default cache against the bound."""
    print("bfloat16 BiLSTM (256 x 2 over 1,324 inputs), 100 batches of 32, longest sentence 20..416 tokens:")
    for label, capacity in (("default cache", None), ("bounded (tag)", PRIMITIVE_CACHE)):
        env = {key: value for key, value in os.environ.items() if key != ONEDNN_CACHE}
        if capacity is not None:
            env[ONEDNN_CACHE] = str(capacity)
        done = subprocess.run([sys.executable, "-c", GROWTH, str(threads)], env=env, capture_output=True, text=True, check=True)
        growth, seconds = (float(value) for value in done.stdout.split()[-2:])
        print(f"  {label:<14} RssAnon +{growth:,.0f} MB  {seconds:.0f} s")


FOOTPRINT = """
import json, sys, time
from pathlib import Path
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import to_flair
from flairsuite.corpora.registry import dataset
from flairsuite.runtime.memory import current_mb
from flairsuite.tagging.data import load_labeled
name, options, root, held_as = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
before = current_mb()["RssAnon"]
started = time.perf_counter()
if held_as == "compact":
    splits = load_labeled(name, options, None, root)
    tokens = sum(split.tokens for split in splits.values())
else:
    spec = dataset(name, **options)
    splits = {split: [to_flair(s, spec) for s in data.sentences] for split, data in read_splits(spec, root).items()}
    tokens = sum(len(s) for sentences in splits.values() for s in sentences)
print(before, current_mb()["RssAnon"], tokens, time.perf_counter() - started)
"""


def corpus_footprint(name: str, options: dict[str, str]) -> None:
    """Part 2: RssAnon of the corpus as the runner holds it, against labeled Flair sentences (each in a fresh process)."""
    grown = {}
    for held_as, label in (("flair", "labeled Flair sentences"), ("compact", "runner (texts, spacing, tags)")):
        command = [sys.executable, "-c", FOOTPRINT, name, json.dumps(options), str(corpora_dir(None)), held_as]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:  # e.g. the corpus is not in $FLAIRSUITE_CORPORA: the child's last line says why
            raise FlairsuiteError(f"loading {name} as {label} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        before, after, tokens, seconds = (float(v) for v in done.stdout.split()[-4:])
        grown[held_as] = after - before
        print(f"{name} {options or ''} as {label} ({tokens:,.0f} tokens in train, dev, test): RssAnon {before:,.0f} -> "
              f"{after:,.0f} MB (+{grown[held_as]:,.0f} MB, {grown[held_as] * 2**20 / tokens:,.0f} bytes a token), {seconds:.0f} s")
    print(f"  the runner holds the corpus in {grown['flair'] / max(grown['compact'], 1):.1f}x less anonymous memory")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", default="ler", help="registry corpus of part 2 (default: ler)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="its options (default for ler: granularity=coarse)")
    parser.add_argument("--part", choices=("all", "cache", "corpus"), default="all", help="run part 1, part 2 or both (default)")
    args = parser.parse_args()
    options = dict(option.split("=", 1) for option in args.option) or ({"granularity": "coarse"} if args.corpus == "ler" else {})
    if args.part in ("all", "cache"):
        primitive_cache_growth(args.threads)
    if args.part in ("all", "corpus"):
        corpus_footprint(args.corpus, options)
    return 0


if __name__ == "__main__":
    run_main(main)
