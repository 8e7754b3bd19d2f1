"""Train gensim FastText on a token stream, with a progress bar per epoch."""

from collections.abc import Iterable

from gensim.models import FastText
from gensim.models.callbacks import CallbackAny2Vec
from tqdm import tqdm

from flairsuite.errors import FlairsuiteError
from flairsuite.wordvectors.settings import FastTextConfig


class EpochProgress(CallbackAny2Vec):
    """A tqdm bar that advances at the end of each epoch."""

    def __init__(self, epochs: int, desc: str) -> None:
        self.bar = tqdm(total=epochs, unit=" epoch", desc=desc, leave=False)

    def on_epoch_end(self, model: FastText) -> None:
        self.bar.update(1)

    def on_train_end(self, model: FastText) -> None:
        self.bar.close()


def train_fasttext(corpus: Iterable[list[str]], config: FastTextConfig, desc: str = "fasttext") -> FastText:
    """A FastText model trained on `corpus` (iterated once for the vocabulary, then once per epoch)."""
    model = FastText(
        vector_size=config.dim,
        window=config.window,
        min_count=config.min_count,
        workers=config.threads,
        bucket=config.buckets,
        epochs=config.epochs,
        seed=config.seed,
        sg=1,
    )
    model.build_vocab(corpus_iterable=corpus)
    if not model.wv.key_to_index:
        raise FlairsuiteError(f"no word occurs at least {config.min_count} times in the training text; lower --min-count or use more text")
    model.train(
        corpus_iterable=corpus,
        total_examples=model.corpus_count,
        epochs=model.epochs,
        callbacks=[EpochProgress(model.epochs, desc)],
    )
    return model


def continue_fasttext(model: FastText, corpus: Iterable[list[str]], epochs: int, threads: int, min_count: int, desc: str) -> int:
    """Continue `model` on `corpus`: words of it that occur `min_count` times and the vocabulary lacks are added (gensim's
    vocabulary update: fresh rows for them, the others keep theirs), then `epochs` passes with the learning rate decaying
    linearly from the model's start value. The number of words added."""
    before = len(model.wv)
    model.workers, model.min_count = threads, min_count
    model.build_vocab(corpus_iterable=corpus, update=True)
    model.train(
        corpus_iterable=corpus,
        total_examples=model.corpus_count,
        epochs=epochs,
        callbacks=[EpochProgress(epochs, desc)],
    )
    model.epochs = epochs
    return len(model.wv) - before
