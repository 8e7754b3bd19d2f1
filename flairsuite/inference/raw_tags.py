"""Sentences split as a model expects them, and their raw tags with confidences, by the fast path or by plain Flair.

Sentence splitting and tokenisation are Flair's (`SegtokSentenceSplitter`, segtok), or one token per character for a
tagger whose model card says so (a Chinese one: `flairsuite.corpora.segmentation`). Tags are the decoder's raw
per-token tags, before any span repair (CSE's decoder gives well-formed BIO). `fast` runs `FastTagger` (int8 LMs,
length-bucketed; `tagger.py`); otherwise the model's own Flair `predict` (CSE's labels spans: they are read back as BIO
tags, each token with its span's confidence, so that the mean over a span is the span's). With Entity-Fix (`fixed`) the
raw tags go through the paper's rule (`flairsuite.models.entity_fix`) and keep their confidences.
"""

from collections.abc import Callable
from typing import Optional

import flair.nn
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.corpora.segmentation import split_text
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.models.crf import Tagged
from flairsuite.models.entity_fix import entity_fix as fix_tags

FLAIR_BATCH_SIZE = 32  # SequenceTagger.predict's default mini_batch_size


def split(text: str, segmentation: str = "words") -> list[Sentence]:
    """Sentences and tokens as a model of `segmentation` expects them (words: Flair's segtok); sentences without tokens are dropped."""
    return split_text(text, segmentation)


def span_tags(sentence: Sentence, label_type: str) -> list[tuple[str, float]]:
    """The sentence's `label_type` span labels as BIO tags, each token with its span's confidence; other tokens "O" with 1.0."""
    tags = [("O", 1.0)] * len(sentence)
    for label in sentence.get_labels(label_type):
        first, size = label.data_point.tokens[0].idx - 1, len(label.data_point.tokens)
        tags[first : first + size] = [(f"B-{label.value}", label.score)] + [(f"I-{label.value}", label.score)] * (size - 1)
    return tags


def flair_tags(model: flair.nn.Classifier, sentences: list[Sentence], batch_size: int) -> Tagged:
    """Plain Flair `predict`'s raw tags with confidences: a SequenceTagger's token predictions ("O" tokens get 1.0,
    as Flair's labels), or the BIO tags of a span tagger's (CSE's) span labels (`span_tags`)."""
    if not isinstance(model, SequenceTagger):
        model.predict(sentences, mini_batch_size=batch_size)
        return [span_tags(sentence, model.label_type) for sentence in sentences]
    model.predict(sentences, mini_batch_size=batch_size, force_token_predictions=True)
    labels = [[token.get_label(model.label_type) for token in sentence] for sentence in sentences]
    return [[(label.value, label.score) for label in sentence] for sentence in labels]


def tagger(model: flair.nn.Classifier, fast: bool, batch_size: Optional[int]) -> Callable[[list[Sentence]], Tagged]:
    """A function from sentences to their raw tags and confidences, by the fast path (its tagger built once) or by plain Flair."""
    if fast:
        return FastTagger(model, batch_size=batch_size or BATCH_SIZE).tag
    return lambda sentences: flair_tags(model, sentences, batch_size or FLAIR_BATCH_SIZE)


def tag(model: flair.nn.Classifier, sentences: list[Sentence], fast: bool, batch_size: Optional[int]) -> Tagged:
    """Raw tags and confidences of every sentence, by the fast path or by plain Flair."""
    return tagger(model, fast, batch_size)(sentences)


def fixed(tagged: Tagged) -> Tagged:
    """Every sentence's tags through Entity-Fix; each token keeps its confidence."""
    return [list(zip(fix_tags([t for t, _ in tags]), [c for _, c in tags])) for tags in tagged]
