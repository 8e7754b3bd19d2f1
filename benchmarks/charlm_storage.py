"""A character LM stored as float16 (`train-charlm --model-dtype float16`) against the same LM in float32.

Writes a float16 copy of a float32 `best-lm.pt` with the suite's `store_weights_as`, loads both the way plain
Flair does (`LanguageModel.load_language_model`), and prints file sizes and valid perplexity per character on
the prepared corpus of the model's own summary (the `de` recipe's by default), with the ratios.

    FLAIRSUITE_CORPORA=../shared/corpora python benchmarks/charlm_storage.py   # charlm/de-forward/best-lm.pt
    python benchmarks/charlm_storage.py charlm/de-h1024-0.7h-forward/best-lm.pt --valid-chars 100000
"""

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from flair.models import LanguageModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, run_main  # noqa: E402

from flairsuite.charlm.settings import Hyper  # noqa: E402
from flairsuite.charlm.storage import store_weights_as  # noqa: E402
from flairsuite.charlm.trainer import evaluate, evaluation_batches  # noqa: E402
from flairsuite.errors import FlairsuiteError  # noqa: E402
from flairsuite.rawtext.language import prepare_language  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="charlm/de-forward/best-lm.pt", type=Path, help="a float32 best-lm.pt beside its summary.json")
    parser.add_argument("--valid-chars", type=int, default=500_000, help="characters of valid to score (the cpu preset's)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    summary_path = args.model.parent / "summary.json"
    if not args.model.is_file() or not summary_path.is_file():
        raise FlairsuiteError(f"{args.model}: no such model beside a summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    hyper = Hyper(**{**summary["hyper"], "valid_chars": args.valid_chars})
    config = summary["corpus"]["config"]
    corpus = prepare_language(config["language"], tuple(config["corpus"]), None, None, config["heldout_fraction"], config["unk_fraction"], config["seed"])
    batches = evaluation_batches(corpus.array("valid"), hyper, summary["direction"] == "forward")
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        half = Path(folder) / "best-lm.pt"
        shutil.copyfile(args.model, half)
        store_weights_as(half, "float16")
        for name, path in (("float32", args.model), ("float16", half)):
            model = LanguageModel.load_language_model(path)
            rows[name] = (path.stat().st_size, math.exp(evaluate(model, batches, hyper.sequence_length)))
    print(json.dumps(machine(args.threads, model=str(args.model), valid_chars=args.valid_chars)))
    print(f"{'stored as':<10}{'file MB':>10}{'valid ppl':>12}")
    for name, (size, ppl) in rows.items():
        print(f"{name:<10}{size / 1e6:>10.2f}{ppl:>12.5f}")
    (size32, ppl32), (size16, ppl16) = rows["float32"], rows["float16"]
    print(f"float16 / float32: file {size16 / size32:.3f}x, valid perplexity {ppl16 / ppl32:.6f}x ({ppl16 - ppl32:+.5f})")
    return 0


if __name__ == "__main__":
    run_main(main)
