"""CPU seconds of BiLSTM-CRF training epochs on the long-document corpus, its sentences split at `max_tokens` or whole,
and the dev F1 after them.

The tagger is the suite's `bilstm-crf` (flairsuite.models.registry: BiLSTM 1 x 256, CRF) on the committed word vectors,
trained by plain SGD (lr 0.1, Flair's summed loss, gradients clipped at 5.0) on the first `--documents` train documents; dev is read as train is. The
clock is the process's CPU time on one thread, so other work on the machine does not count.

    python experiments/long-sentences/epoch_time.py data/sturm-long/ --documents 12                    # one epoch, batches of 32
    python experiments/long-sentences/epoch_time.py data/sturm-long/ --documents 12 --epochs 5 --batch 4
"""

import argparse
import random
import time
from pathlib import Path

import torch
from flair.data import Dictionary
from flair.embeddings import WordEmbeddings

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import to_flair
from flairsuite.corpora.own import own_corpus
from flairsuite.models.registry import sequence_tagger

VECTORS = Path(__file__).resolve().parents[2] / "wordvectors" / "de-quickstart-fasttext" / "vectors.kv"


def epoch_seconds(folder: Path, max_tokens, documents: int, epochs: int = 1, batch: int = 32) -> tuple[int, int, float, float]:
    """(sentences, longest, CPU seconds an epoch, dev F1 after `epochs`) on the first `documents` documents of train."""
    spec = own_corpus({"path": str(folder), "max_tokens": max_tokens}, Path.cwd())
    whole = own_corpus({"path": str(folder), "max_tokens": None}, Path.cwd())
    kept = {tuple(s.tokens) for s in read_splits(whole, folder, ["train"])["train"].sentences[:documents]}
    train = [s for s in read_splits(spec, folder, ["train"])["train"].sentences if any(_inside(s.tokens, k) for k in kept)]
    sentences = [to_flair(s, spec) for s in train]
    embeddings = WordEmbeddings(str(VECTORS))
    dictionary = Dictionary(add_unk=False)
    for tag in ("O", *(f"{p}-{t}" for t in spec.types for p in "BI")):
        dictionary.add_item(tag)
    torch.manual_seed(1)
    tagger = sequence_tagger(True, True)(embeddings, dictionary, "ner")
    optimizer = torch.optim.SGD(tagger.parameters(), lr=0.1)
    order = random.Random(1)
    start = time.process_time()
    for _ in range(epochs):
        tagger.train()
        order.shuffle(sentences)
        for first in range(0, len(sentences), batch):
            optimizer.zero_grad()
            loss, _ = tagger.forward_loss(sentences[first : first + batch])
            loss.backward()  # the batch's summed loss, clipped at 5.0, as Flair's ModelTrainer steps
            torch.nn.utils.clip_grad_norm_(tagger.parameters(), 5.0)
            optimizer.step()
    seconds = (time.process_time() - start) / epochs
    dev = [to_flair(s, spec) for s in read_splits(spec, folder, ["dev"])["dev"].sentences]
    f1 = tagger.evaluate(dev, gold_label_type="ner", mini_batch_size=8).main_score
    return len(sentences), max(len(s) for s in sentences), seconds, f1


def _inside(tokens: list[str], document: tuple[str, ...]) -> bool:
    """Whether `tokens` is a piece of `document` (a split sentence lies inside the document it came from)."""
    text, whole = " ".join(tokens), " ".join(document)
    return text in whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--documents", type=int, default=12)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for max_tokens in (250, None):
        sentences, longest, seconds, f1 = epoch_seconds(args.folder, max_tokens, args.documents, args.epochs, args.batch)
        print(f"max_tokens {max_tokens}: {sentences} sentences (longest {longest}), {seconds:.1f} CPU s an epoch, "
              f"dev F1 after {args.epochs} epochs {f1 * 100:.2f}", flush=True)


if __name__ == "__main__":
    main()
