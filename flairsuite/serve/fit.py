"""Training a new tagger for `POST /train`: the served tagger's kind and settings on its embeddings, fit to INCEpTION's annotations.

The suite's training loop (`flairsuite.tagging.tagger_training`) belongs to the experiment runner, which the
serve layer may not import (setup.cfg's `runner` contract); this is a small loop of its own from
the same lower layers: the models' `features_loss`/`features_decode` (`flairsuite.models.protocol`),
the registry's training defaults for the tagger's kind (`PAPER_TRAIN` for a BiLSTM, `LINEAR_TRAIN`
otherwise: learning rate, optimizer, batch size), and Flair's own embedding of the tokens
(`flairsuite.embeddings.token_vectors`). The embeddings are the served model's, reused as they are
(frozen): every sentence is embedded once, and only the head (its linear map, LSTM, CRF or CSE
heads) is trained, on the documents' entity types. The epochs are `epochs` at most, without annealing;
the weights of the best dev epoch are kept (strict IOB2 F1, seqeval). The dev set is a held-out share
of the documents (of the sentences when there is only one), drawn with a fixed seed. What is fitted
carries the evidence a swap needs: both taggers' dev F1 and the entities each finds on the dev sentences.
"""

import random
from collections.abc import Callable, Sequence
from copy import deepcopy
from dataclasses import dataclass, replace
from typing import Optional

import flair
import flair.nn
import torch
from flair.data import Dictionary, Sentence
from flair.models import SequenceTagger
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import IOB2

from flairsuite.embeddings import token_vectors
from flairsuite.errors import FlairsuiteError
from flairsuite.models.cse import ClassStartEndTagger
from flairsuite.models.protocol import features_decode, features_loss
from flairsuite.models.registry import LINEAR_TRAIN, PAPER_TRAIN

DEV_SHARE = 0.2  # of the documents (or sentences) held out for dev
SEED = 1
EMBED_BATCH = 64  # sentences embedded at a time


@dataclass(frozen=True)
class Labeled:
    """One sentence to train on: its token texts, their BIO tags, and the characters between each token and the next (0 after the last)."""

    tokens: list[str]
    tags: list[str]
    gaps: Optional[list[int]] = None  # None: one space between tokens
    starts_document: bool = False  # no sentence before it in its document (document context, `flairsuite.embeddings.context`)


@dataclass(frozen=True)
class Split:
    """The sentences to train on and those held out for dev."""

    train: list[Labeled]
    dev: list[Labeled]


def held_out(documents: Sequence[list[Labeled]], share: float = DEV_SHARE, seed: int = SEED) -> Split:
    """A share of the documents (at least one) for dev, the rest for train; with one document, a share of its sentences."""
    documents = [doc for doc in documents if doc]
    units: list[list[Labeled]] = documents if len(documents) > 1 else [[s] for s in (documents[0] if documents else [])]
    if len(units) < 2:
        raise FlairsuiteError("training needs at least two annotated sentences (one to train on, one to score)")
    order = list(range(len(units)))
    random.Random(seed).shuffle(order)
    count = max(1, round(share * len(units)))
    dev, train = sorted(order[:count]), sorted(order[count:])
    return Split(in_documents(units, train, len(documents) > 1), in_documents(units, dev, len(documents) > 1))


def in_documents(units: Sequence[list[Labeled]], chosen: list[int], whole: bool) -> list[Labeled]:
    """The sentences of units `chosen` (ascending), each marked where its document starts: at each unit when the units
    are `whole` documents, else (sentences of one document) where the unit before it is not chosen."""
    found = []
    for position, i in enumerate(chosen):
        starts = whole or position == 0 or chosen[position - 1] != i - 1
        found += [replace(s, starts_document=starts and k == 0) for k, s in enumerate(units[i])]
    return found


def entity_types(sentences: Sequence[Labeled]) -> list[str]:
    """The entity types of the sentences' tags, sorted."""
    return sorted({tag[2:] for s in sentences for tag in s.tags if tag != "O"})


def span_dictionary(types: Sequence[str]) -> Dictionary:
    """A dictionary of entity types marked as span labels (Flair's SequenceTagger adds O, B-, I-; CSE takes the types)."""
    dictionary = Dictionary(add_unk=False)
    dictionary.span_labels = True
    for kind in types:
        dictionary.add_item(kind)
    return dictionary


def new_tagger(served: flair.nn.Classifier, types: Sequence[str]) -> flair.nn.Classifier:
    """An untrained tagger of the served one's class and settings on the served embeddings, for `types`."""
    dictionary = span_dictionary(types)
    if isinstance(served, ClassStartEndTagger):
        return ClassStartEndTagger(served.embeddings, dictionary, served.tag_type, served.word_dropout_rate, served.locked_dropout_rate, served.threshold)
    if isinstance(served, SequenceTagger):
        settings = dict(
            embeddings=served.embeddings, tag_dictionary=dictionary, tag_type=served.tag_type, use_rnn=served.use_rnn,
            hidden_size=served.hidden_size, rnn_layers=served.rnn_layers, use_crf=served.use_crf, rnn_type=served.rnn_type,
            reproject_embeddings=served.reproject_embeddings, tag_format=served.tag_format, dropout=served.use_dropout,
            word_dropout=served.use_word_dropout, locked_dropout=served.use_locked_dropout,
            train_initial_hidden_state=served.train_initial_hidden_state,
        )  # fmt: skip
        return type(served)(**settings)
    raise FlairsuiteError(f"retraining needs a SequenceTagger or CSE tagger; the served model is a {type(served).__name__}")


def flair_sentence(labeled: Labeled) -> Sentence:
    """The sentence's tokens as a Flair Sentence, with the gaps of the text between them (as the served path tags them)."""
    sentence = Sentence(list(labeled.tokens))
    for token, gap in zip(sentence.tokens, labeled.gaps or []):
        token.whitespace_after = gap
    return sentence


def linked_sentences(sentences: Sequence[Labeled]) -> list[Sentence]:
    """The Flair sentences, each document's linked in order (Flair's `set_context_for_sentences`), as the served path
    links the sentences of a text it tags."""
    found = [flair_sentence(s) for s in sentences]
    starts = [i for i, s in enumerate(sentences) if i == 0 or s.starts_document] + [len(found)]
    for start, end in zip(starts, starts[1:]):
        Sentence.set_context_for_sentences(found[start:end])
    return found


def embedded(model: flair.nn.Classifier, sentences: Sequence[Labeled]) -> list[torch.Tensor]:
    """Each sentence's (tokens, dim) embeddings by the model's (frozen) embeddings, read in its document."""
    model.embeddings.eval()
    found: list[torch.Tensor] = []
    linked = linked_sentences(sentences)
    with torch.no_grad():
        for start in range(0, len(sentences), EMBED_BATCH):
            chunk = linked[start : start + EMBED_BATCH]
            vectors = token_vectors(model.embeddings, chunk).float()
            found += list(torch.split(vectors, [len(s) for s in chunk]))
    return found


def padded(features: Sequence[torch.Tensor], indices: Sequence[int]) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """Sentences `indices` longest first: their order, the zero-padded (batch, longest, dim) tensor and the lengths."""
    order = sorted(indices, key=lambda i: -len(features[i]))
    tensor = torch.nn.utils.rnn.pad_sequence([features[i] for i in order], batch_first=True)
    return order, tensor.to(flair.device), torch.tensor([len(features[i]) for i in order])


def decode(model: flair.nn.Classifier, features: Sequence[torch.Tensor], batch: int = 64) -> list[list[str]]:
    """The model's tags of every sentence, in order."""
    model.eval()
    tags: list[list[str]] = [[] for _ in features]
    with torch.no_grad():
        for start in range(0, len(features), batch):
            order, tensor, lengths = padded(features, range(start, min(start + batch, len(features))))
            for i, tagged in zip(order, features_decode(model, tensor, lengths)):
                tags[i] = [tag for tag, _ in tagged]
    return tags


def dev_f1(model: flair.nn.Classifier, features: Sequence[torch.Tensor], gold: Sequence[list[str]]) -> float:
    """Strict IOB2 entity F1 of the model's tags against `gold` (0 when neither holds an entity)."""
    return tags_f1(gold, decode(model, features))


def tags_f1(gold: Sequence[list[str]], tags: Sequence[list[str]]) -> float:
    """Strict IOB2 entity F1 of `tags` against `gold` (0 when neither holds an entity)."""
    return float(f1_score(list(gold), list(tags), mode="strict", scheme=IOB2, zero_division=0))


def entity_count(tags: Sequence[list[str]]) -> int:
    """How many entities the sentences' tags hold (each run of a type's B-/I- tags is one; an I- without its B- starts one)."""
    return sum(len(get_entities(list(sentence))) for sentence in tags)


@dataclass(frozen=True)
class Fitted:
    """A trained tagger, its best dev F1, the served tagger's F1 on the same dev set, the epoch kept, and the entities
    each tagger finds on the dev sentences."""

    model: flair.nn.Classifier
    dev_f1: float
    served_f1: float
    epoch: int
    entities: int
    served_entities: int


def fit(served: flair.nn.Classifier, split: Split, epochs: int, seed: int = SEED,
        progress: Optional[Callable[[int, float], None]] = None) -> Fitted:  # fmt: skip
    """Train a new tagger like `served` on `split.train` for at most `epochs` epochs; the weights of its best dev epoch."""
    types = entity_types(split.train + split.dev)
    if not types:
        raise FlairsuiteError("the documents hold no annotation with a label on that layer: nothing to train on")
    flair.set_seed(seed)
    model = new_tagger(served, types)
    model.model_card = deepcopy(getattr(served, "model_card", None))  # segmentation and the rest of the card
    train, dev = embedded(served, split.train), embedded(served, split.dev)
    gold_train, gold_dev = [s.tags for s in split.train], [s.tags for s in split.dev]
    served_tags = decode(served, dev)
    served_f1 = tags_f1(gold_dev, served_tags)
    settings = PAPER_TRAIN if getattr(model, "use_rnn", False) else LINEAR_TRAIN
    head = [p for name, p in model.named_parameters() if not name.startswith("embeddings.")]
    optimizer = settings.make_optimizer([{"params": head}])
    generator = torch.Generator().manual_seed(seed)
    best, best_epoch, best_state = -1.0, 0, None
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(len(train), generator=generator).tolist()
        for start in range(0, len(order), settings.mini_batch_size):
            indices, tensor, lengths = padded(train, order[start : start + settings.mini_batch_size])
            loss = features_loss(model, tensor, lengths, [gold_train[i] for i in indices])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head, 5.0)
            optimizer.step()
        score = dev_f1(model, dev, gold_dev)
        if score > best:
            best, best_epoch = score, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items() if not k.startswith("embeddings.")}
        if progress is not None:
            progress(epoch, score)
    if best_state is not None:
        model.load_state_dict(best_state, strict=False)
    found = entity_count(decode(model, dev))  # decode leaves the model in eval mode
    return Fitted(model, best, served_f1, best_epoch, found, entity_count(served_tags))
