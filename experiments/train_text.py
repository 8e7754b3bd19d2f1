"""The sentences of a labeled corpus's train split as raw text, for `train-charlm --init` (labels dropped).

    python experiments/train_text.py arendt arendt-train.txt
    flairsuite train-charlm --init de --corpus arendt-train.txt --name arendt-unk --threads 1

One sentence a line, its tokens joined by spaces (as the embeddings read them). The text preparation then cuts out
whatever of it also occurs in the corpus's dev or test split (H. Arendt: 315 sentences). The adapted pairs of
experiments/adapt-arendt.yaml and experiments/adapt-sturm.yaml were trained on these files.
"""

import argparse
import sys
from pathlib import Path

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_text
from flairsuite.files.paths import corpora_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="a registered NER or PoS dataset")
    parser.add_argument("out", type=Path, help="the text file to write")
    parser.add_argument("--corpora-dir", type=Path, help="datasets folder (default: $FLAIRSUITE_CORPORA)")
    args = parser.parse_args()
    try:
        train = read_splits(dataset(args.dataset), corpora_dir(args.corpora_dir), ["train"])["train"]
    except FlairsuiteError as error:
        sys.exit(f"Error: {error}")
    try:  # whole or not at all: a killed run leaves no half-written text for an adaptation to read
        write_text(args.out, "".join(" ".join(sentence.tokens) + "\n" for sentence in train.sentences))
    except FlairsuiteError as error:
        sys.exit(f"Error: {error}")
    print(f"{args.out}: {len(train.sentences):,} sentences")


if __name__ == "__main__":
    main()
