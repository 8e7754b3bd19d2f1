"""Build `corpora/ler-courts-ordered/`: small LER splits whose sentences are in document order (for ablation-context-de.yaml).

LER's official dev and test files (and the reconstructed train) are shuffled, and so are Sturm's and H. Arendt's
splits: there, a sentence's neighbours in the file are sentences of other documents. The per-court files
($FLAIRSUITE_CORPORA/ler/courts/, the complete corpus) keep the decisions' sentence order. This takes contiguous
blocks of them: train the first TRAIN sentences of BGH, dev and test the first DEV and the next TEST sentences of
BVerwG (the court the source repository holds out for validation). Not committed (a derived dataset).

    python experiments/ler_courts_ordered.py   # writes corpora/ler-courts-ordered/{train,dev,test}.conll
"""

import gzip
import os
from pathlib import Path

TRAIN, DEV, TEST = 2500, 1000, 1000


def sentences(path: Path) -> list[str]:
    """The blocks of a column file (one sentence each, lines joined), in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [block.strip("\n") for block in handle.read().split("\n\n") if block.strip()]


def main() -> None:
    courts = Path(os.environ.get("FLAIRSUITE_CORPORA", "corpora")) / "ler" / "courts"
    out = Path(__file__).resolve().parent.parent / "corpora" / "ler-courts-ordered"
    out.mkdir(parents=True, exist_ok=True)
    train, held = sentences(courts / "bgh.conll.gz"), sentences(courts / "bverwg.conll.gz")
    parts = {"train": train[:TRAIN], "dev": held[:DEV], "test": held[DEV : DEV + TEST]}
    for name, part in parts.items():
        (out / f"{name}.conll").write_text("\n\n".join(part) + "\n", encoding="utf-8")
        print(f"{out / name}.conll: {len(part)} sentences, {sum(block.count(chr(10)) + 1 for block in part)} tokens")


if __name__ == "__main__":
    main()
