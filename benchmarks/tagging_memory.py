"""Where a tagging run's anonymous memory (RssAnon) goes: oneDNN's primitive cache, and the corpus as Flair sentences.

1. A bidirectional LSTM of the recipe's BiLSTM-CRF (256 a direction over the 1,324-wide stack) trains under bfloat16
   autocast on packed batches of 32 whose longest sentence grows by 4 tokens a batch (20 to 416): each length is a
   new oneDNN shape. Run in two fresh processes, oneDNN's default cache against the bound `flairsuite tag` sets
   (flairsuite/allocator.py); prints the growth of RssAnon from the 6th batch on and the seconds.
2. The registry corpus `--corpus` (default LER coarse) loaded as the runner holds it (`load_labeled`: Flair sentences
   with gold tags): RssAnon before and after, per token.

    FLAIRSUITE_CORPORA=../shared/corpora python benchmarks/tagging_memory.py --threads 1
"""

import argparse
import os
import subprocess
import sys
import time

from common import run_main

from flairsuite.allocator import ONEDNN_CACHE, PRIMITIVE_CACHE
from flairsuite.memory import current_mb
from flairsuite.paths import corpora_dir

GROWTH = """
import random, sys, time, torch
from flairsuite.memory import current_mb
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


def corpus_footprint(name: str, options: dict[str, str]) -> None:
    """Part 2: RssAnon of the corpus held as the runner's Flair sentences."""
    from flairsuite.tagging.data import load_labeled

    before = current_mb()["RssAnon"]
    started = time.perf_counter()
    splits = load_labeled(name, options, None, corpora_dir(None))
    grown = current_mb()["RssAnon"] - before
    tokens = sum(split.tokens for split in splits.values())
    print(f"{name} {options or ''} as Flair sentences (train, dev, test: {tokens:,} tokens): RssAnon {before:,.0f} -> "
          f"{before + grown:,.0f} MB (+{grown:,.0f} MB, {grown * 2**20 / tokens:,.0f} bytes a token), {time.perf_counter() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", default="ler", help="registry corpus of part 2 (default: ler)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="its options (default for ler: granularity=coarse)")
    args = parser.parse_args()
    options = dict(option.split("=", 1) for option in args.option) or ({"granularity": "coarse"} if args.corpus == "ler" else {})
    primitive_cache_growth(args.threads)
    corpus_footprint(args.corpus, options)
    return 0


if __name__ == "__main__":
    run_main(main)
