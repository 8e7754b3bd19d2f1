"""Build the long-document column corpus that `long-sentences.yaml` measures `max_tokens` on, from Sturm.

Each split of Sturm (`$FLAIRSUITE_CORPORA/sturm`, CC BY 4.0) is cut into documents of `--sentences` consecutive
sentences (default 80: about 900 tokens); a document's sentences follow each other with no blank line, as in a
newspaper corpus whose sentence ends are not marked, and documents are separated by one blank line.

    python experiments/long-sentences/build_corpus.py data/sturm-long/
"""

import argparse
import os
from pathlib import Path

SPLITS = {"train": "train_sturm.conll", "dev": "dev_sturm.conll", "test": "test_sturm.conll"}


def sentences(path: Path) -> list[list[str]]:
    """The sentences of a two-column file, each a list of its token lines."""
    found, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            current.append(line)
        elif current:
            found.append(current)
            current = []
    return found + ([current] if current else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sentences", type=int, default=80, help="sentences a document")
    parser.add_argument("--corpora", type=Path, default=Path(os.environ.get("FLAIRSUITE_CORPORA", "corpora")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for split, name in SPLITS.items():
        read = sentences(args.corpora / "sturm" / name)
        documents = [read[i : i + args.sentences] for i in range(0, len(read), args.sentences)]
        text = "\n".join("".join(line + "\n" for sentence in document for line in sentence) for document in documents)
        (args.out / f"{split}.txt").write_text(text, encoding="utf-8")
        lengths = [sum(len(s) for s in document) for document in documents]
        print(f"{split}: {len(read)} sentences in {len(documents)} documents, {sum(lengths) / len(lengths):.0f} tokens on average, "
              f"longest {max(lengths)}")


if __name__ == "__main__":
    main()
