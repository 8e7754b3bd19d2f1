"""Train gensim FastText on a token stream, with a progress bar per epoch."""

from collections.abc import Iterable
from dataclasses import dataclass

from gensim.models import FastText
from gensim.models.callbacks import CallbackAny2Vec
from tqdm import tqdm

from flairsuite.errors import FlairsuiteError
from flairsuite.settings_schema import INTEGER, OPTIONS, POSITIVE_INTEGER, CheckedSettings, setting


@dataclass(frozen=True)
class FastTextConfig(CheckedSettings):
    """Hyper-parameters (skip-gram, character n-grams of 3 to 6 characters as in fastText); a bad one is a one-line error."""

    wording = OPTIONS

    dim: int = setting(POSITIVE_INTEGER, 300)
    epochs: int = setting(POSITIVE_INTEGER, 5)
    min_count: int = setting(POSITIVE_INTEGER, 5)
    threads: int = setting(POSITIVE_INTEGER, 1)
    buckets: int = setting(POSITIVE_INTEGER, 2_000_000)
    window: int = setting(POSITIVE_INTEGER, 5)
    seed: int = setting(INTEGER, 1)


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
