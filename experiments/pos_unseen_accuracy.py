"""Test accuracy of PoS runs on tokens seen and unseen in train, and outside the word vectors' own vocabulary
(flairsuite.results.unseen_token_accuracy): where the accuracy of a PoS table is lost.

    python experiments/pos_unseen_accuracy.py results/en-table3 --vectors wordvectors/en-fasttext

Reads each PoS run's predictions.tsv (git-ignored: run it where the runs were trained) and the corpus's train split
(--corpora-dir, default $FLAIRSUITE_CORPORA). Prints one Markdown table per corpus label.
"""

import argparse
import sys
from pathlib import Path

from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import corpora_dir
from flairsuite.results.collect import collect
from flairsuite.results.unseen_token_accuracy import own_vocabulary, unseen_frame, unseen_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a results or experiment folder")
    parser.add_argument("--vectors", type=Path, help="a train-fasttext folder: also the tokens outside its own vocabulary")
    parser.add_argument("--corpora-dir", type=Path, help="datasets folder (default: $FLAIRSUITE_CORPORA)")
    args = parser.parse_args()
    try:
        vocab = own_vocabulary(args.vectors) if args.vectors else None
        print(unseen_table(unseen_frame(collect(args.results), corpora_dir(args.corpora_dir), vocab)))
    except FlairsuiteError as error:
        sys.exit(f"Error: {error}")


if __name__ == "__main__":
    main()
