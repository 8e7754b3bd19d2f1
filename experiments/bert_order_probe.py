"""Word-order probe of pre-trained small BERTs (flairsuite.bert.order_probe): does a model use positions yet?

    python experiments/bert_order_probe.py bert/de-mlm-abs bert/de-mlm-abs-wwm bert/de-mlm-rel bert/de-mlm-rel-wwm [--threads 1]

Per model folder: its pre-training (positions, masking, attention, tokens), MLM accuracy on the first valid samples
of its corpus with the masks of its training, in order and with the words of each sample shuffled, and the drop.
Accuracies of WWM and token-masking models are not comparable with each other (a whole word is harder to guess than
one of its pieces); the drop within a model is the measurement. Prints a Markdown table. Run it where the models were
trained: it reads their tokenized pre-training corpus from the cache.
"""

import argparse
import json
import sys
from pathlib import Path

import torch

from flairsuite.bert.order_probe import probe_order
from flairsuite.errors import FlairsuiteError


def row(folder: Path) -> str:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8")) if (folder / "summary.json").is_file() else {}
    probe = probe_order(folder)
    settings = summary["settings"]
    masking = "whole words" if settings["wwm"] else "tokens"
    return (f"| {folder.name} | {settings['positions']} | {masking} | {settings['attention']} | {summary['tokens_seen'] / 1e6:.1f} M "
            f"| {100 * probe.in_order:.2f} | {100 * probe.shuffled:.2f} | {100 * (probe.in_order - probe.shuffled):+.2f} | {probe.masked:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", type=Path, help="train-bert model folders")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| model | positions | masking | attention | pre-training | MLM acc in order | words shuffled | drop (points) | masked tokens |")
    print("|---|---|---|---|--:|--:|--:|--:|--:|")
    try:
        for folder in args.models:
            print(row(folder), flush=True)
    except FlairsuiteError as error:
        sys.exit(f"Error: {error}")


if __name__ == "__main__":
    main()
