"""Build `corpora/ajmc-de-train.txt`: AjMC's German training sentences as raw text, the text that
experiments/ajmc-baseline.yaml adapts the LM pair and the vectors on (its `adapt:` block). Not committed (derived data).

    python experiments/ajmc_train_text.py   # reads the corpus as the experiment's own-corpus entry says

One sentence a line, tokens joined by spaces (as the embeddings read them), labels dropped; the adaptation cuts out
whatever of it also occurs in the corpus's dev or test split.
"""

from pathlib import Path

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import own_corpus
from flairsuite.files.atomic import write_text
from flairsuite.files.yaml_file import read_yaml

EXPERIMENT = Path(__file__).resolve().parent / "ajmc-baseline.yaml"
OUT = Path(__file__).resolve().parent.parent / "corpora" / "ajmc-de-train.txt"


def main() -> None:
    entry = {**read_yaml(EXPERIMENT, "experiment file")["corpora"][0], "max_tokens": None}  # whole sentences, as the text reads
    spec = own_corpus(entry, EXPERIMENT.parent)
    train = read_splits(spec, Path(spec.folder), ["train"])["train"]
    write_text(OUT, "".join(" ".join(sentence.tokens) + "\n" for sentence in train.sentences))  # whole or not at all
    print(f"{OUT}: {len(train.sentences):,} sentences")


if __name__ == "__main__":
    main()
