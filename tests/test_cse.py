"""Class-Start-End tagging: decoding of hand-made probabilities, learning on synthetic features, save/load, Flair use."""

import random
from pathlib import Path

import flair.nn
import numpy as np
import pytest
import torch
from flair.data import Corpus, Dictionary, Sentence
from flair.datasets import FlairDatapointDataset
from flair.embeddings import OneHotEmbeddings
from flair.trainers import ModelTrainer
from flair.training_utils import store_embeddings

from flairsuite.corpora.tags import bio_spans
from flairsuite.models.cse import ClassStartEndTagger, cse_boundaries, decode_cse, spans_to_bio
from flairsuite.models.entity_fix import entity_fix
from flairsuite.models.protocol import FeatureTagger, features_decode, features_loss

TYPES = ["A", "B"]
FLAT = np.full((8, 2), [0.7, 0.2])  # class probabilities favouring A on every token
LOW = 0.1


@pytest.mark.parametrize(
    "start, end, expected",
    [
        ([0.9, LOW, LOW, 0.9, LOW, LOW, LOW], [0.9, LOW, LOW, LOW, LOW, LOW, 0.9], [(0, 0), (3, 6)]),  # Table 4
        ([0.9, LOW, LOW, 0.9, LOW], [LOW, 0.4, 0.3, LOW, 0.8], [(0, 1), (3, 4)]),  # missing end: best before next start
        ([LOW, LOW, LOW, 0.9, LOW], [LOW, LOW, LOW, 0.2, 0.3], [(3, 4)]),  # missing end after the last start
        ([LOW, 0.3, 0.2, LOW, 0.9], [LOW, LOW, 0.9, LOW, 0.9], [(1, 2), (4, 4)]),  # missing start: best since previous end
        ([0.2, 0.3, LOW, LOW], [LOW, LOW, 0.9, LOW], [(1, 2)]),  # missing start before the first end
        ([LOW, LOW, LOW], [LOW, LOW, LOW], []),  # all below threshold: no entity
        ([0.5, LOW], [0.5, LOW], []),  # the threshold is exclusive
        ([LOW, LOW], [LOW, LOW], []),
    ],
)
def test_boundaries(start, end, expected):
    assert cse_boundaries(np.array(start), np.array(end)) == expected
    spans = decode_cse(start, end, FLAT[: len(start)], TYPES)
    assert [(first, stop - 1) for first, stop, _, _ in spans] == expected


def test_class_is_the_argmax_of_the_averaged_probabilities():
    classes = [[0.6, 0.4], [0.1, 0.9], [0.6, 0.4], [0.9, 0.1]]  # token arg-max: A B A A; span mean over 0-2: A 0.43, B 0.57
    (span,) = decode_cse([0.9, LOW, LOW, LOW], [LOW, LOW, 0.9, LOW], classes, TYPES)
    assert span[:3] == (0, 3, "B")
    assert span[3] == pytest.approx(1.7 / 3)


def test_random_probabilities_give_ordered_disjoint_spans_through_every_marker():
    rng = np.random.default_rng(0)
    for _ in range(500):
        length = int(rng.integers(1, 12))
        start, end = rng.random(length), rng.random(length)
        boundaries = cse_boundaries(start, end)
        flat = [index for pair in boundaries for index in pair]
        assert flat == sorted(flat) and all(a < b for a, b in zip(flat[1::2], flat[2::2]))
        assert set(np.flatnonzero(start > 0.5)) <= {first for first, _ in boundaries}
        assert set(np.flatnonzero(end > 0.5)) <= {last for _, last in boundaries}


def test_spans_to_bio():
    assert spans_to_bio([(0, 1, "A", 0.9), (2, 5, "B", 0.8)], 6) == ["B-A", "O", "B-B", "I-B", "I-B", "O"]


# --- the model on synthetic features: entities are linearly detectable ---

DIM = 6  # features: is start, is end, is A, is B, is O, noise


def synthetic_batch(seed: int, count: int) -> tuple[torch.Tensor, torch.Tensor, list[list[str]]]:
    """`count` random well-formed sentences (longest first) as a padded feature tensor, lengths, gold tags."""
    rng = random.Random(seed)
    gold = []
    for _ in range(count):
        tags = [rng.choice(["O", "B-A", "I-A", "B-B", "I-B"]) for _ in range(rng.randint(2, 8))]
        gold.append(spans_to_bio([(*span, 1.0) for span in bio_spans(tags)], len(tags)))
    gold.sort(key=len, reverse=True)
    lengths = torch.tensor([len(tags) for tags in gold])
    tensor = torch.zeros(count, int(lengths[0]), DIM)
    for i, tags in enumerate(gold):
        for first, stop, kind in bio_spans(tags):
            tensor[i, first, 0] = tensor[i, stop - 1, 1] = 1.0
            tensor[i, first:stop, 2 + TYPES.index(kind)] = 1.0
        tensor[i, : len(tags), 4] = torch.tensor([float(tag == "O") for tag in tags])
        tensor[i, : len(tags), 5] = torch.from_numpy(np.random.default_rng(seed + i).normal(size=len(tags)).astype(np.float32))
    return tensor, lengths, gold


def type_dictionary() -> Dictionary:
    """The entity types, as `make_label_dictionary(..., add_unk=False)` gives them."""
    dictionary = Dictionary(add_unk=False)
    for kind in TYPES:
        dictionary.add_item(kind)
    return dictionary


@pytest.fixture(scope="module")
def trained() -> tuple[ClassStartEndTagger, list[float]]:
    """A CSE tagger (no dropout) fitted to synthetic features, and its loss per step."""
    torch.manual_seed(0)
    embeddings = OneHotEmbeddings(Dictionary(), embedding_length=DIM)  # only its length is used here
    model = ClassStartEndTagger(embeddings, type_dictionary(), "ner", word_dropout=0.0, locked_dropout=0.0)
    tensor, lengths, gold = synthetic_batch(seed=1, count=32)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.3)
    losses = []
    model.train()
    for _ in range(50):
        optimizer.zero_grad()
        loss = model.features_loss(tensor, lengths, gold)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return model, losses


def test_follows_the_training_loop_protocol(trained):
    """The suite's loop reaches the model through protocol.features_loss / features_decode: for CSE they are its own
    methods (not the plain-SequenceTagger route), so the loop trains and decodes exactly what the model defines."""
    model = trained[0]
    assert isinstance(model, FeatureTagger)
    tensor, lengths, gold = synthetic_batch(seed=3, count=8)
    with torch.no_grad():
        assert torch.equal(features_loss(model, tensor, lengths, gold), model.features_loss(tensor, lengths, gold))
    assert features_decode(model, tensor, lengths) == model.features_decode(tensor, lengths)


def test_learns_linearly_detectable_entities(trained):
    model, losses = trained
    assert losses[-1] < 0.05 * losses[0]
    tensor, lengths, gold = synthetic_batch(seed=2, count=16)
    tagged = model.features_decode(tensor, lengths)
    assert [[tag for tag, _ in tokens] for tokens in tagged] == gold
    assert all(0.0 <= confidence <= 1.0 for tokens in tagged for _, confidence in tokens)


def test_decoded_tags_are_well_formed(trained):
    tensor, lengths, _ = synthetic_batch(seed=3, count=16)
    untrained = ClassStartEndTagger(trained[0].embeddings, type_dictionary(), "ner")
    untrained.eval()
    decoded = [[tag for tag, _ in tokens] for tokens in untrained.features_decode(tensor + torch.randn_like(tensor), lengths)]
    assert sum(tag.startswith("I-") for tags in decoded for tag in tags) > 0  # noise decodes to spans longer than one token
    for tags in decoded:
        assert entity_fix(tags) == tags


@pytest.mark.parametrize("loader", [ClassStartEndTagger.load, flair.nn.Classifier.load])
def test_save_and_load_round_trip(trained, tmp_path: Path, loader):
    model, _ = trained
    path = tmp_path / "cse.pt"
    model.save(path)
    loaded = loader(path)
    assert isinstance(loaded, ClassStartEndTagger)
    assert (loaded.types, loaded.label_type, loaded.locked_dropout_rate) == (TYPES, "ner", 0.0)
    tensor, lengths, _ = synthetic_batch(seed=4, count=8)
    assert loaded.features_decode(tensor, lengths) == model.features_decode(tensor, lengths)


# --- on Flair sentences, with an embedding that needs no download ---

TEXTS = [
    ("Anna besuchte Berlin am Montag", [(0, 1, "pers"), (2, 3, "place")]),
    ("Karl verließ Wien", [(0, 1, "pers"), (2, 3, "place")]),
    ("Marie Walden schrieb aus Hamburg", [(0, 2, "pers"), (4, 5, "place")]),
    ("Am Freitag kam Otto", [(3, 4, "pers")]),
    ("Der Brief blieb liegen", []),
]


def labeled(text: str, spans: list[tuple[int, int, str]]) -> Sentence:
    """A Sentence with `ner` span labels (token start, end exclusive, type)."""
    sentence = Sentence(text)
    for first, stop, kind in spans:
        sentence[first:stop].add_label("ner", kind)
    return sentence


def spans_of(sentence: Sentence, label_type: str) -> list[tuple[int, int, str]]:
    """(first token, end exclusive, type) of the sentence's `label_type` spans."""
    return [(label.data_point[0].idx - 1, label.data_point[-1].idx, label.value) for label in sentence.get_labels(label_type)]


def test_predicts_flair_ner_spans(tmp_path: Path):
    torch.manual_seed(0)
    sentences = [labeled(text, spans) for text, spans in TEXTS]
    corpus = Corpus(FlairDatapointDataset(sentences), sample_missing_splits=False)
    embeddings = OneHotEmbeddings.from_corpus(corpus, min_freq=1, embedding_length=16)
    model = ClassStartEndTagger(embeddings, corpus.make_label_dictionary("ner", add_unk=False), "ner")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model.train()
    for _ in range(40):
        optimizer.zero_grad()
        loss, tokens = model.forward_loss(sentences)
        loss.backward()
        optimizer.step()
        store_embeddings(sentences, "none")  # as Flair's trainer does: re-embed with the updated weights
    assert tokens == sum(len(sentence) for sentence in sentences)
    model.eval()

    plain = [Sentence(text) for text, _ in TEXTS]
    model.predict(plain)
    assert [spans_of(sentence, "ner") for sentence in plain] == [spans for _, spans in TEXTS]
    assert all(0.0 < label.score <= 1.0 for sentence in plain for label in sentence.get_labels("ner"))

    loss, count = model.predict(sentences, label_name="predicted", return_loss=True)
    assert count == tokens and loss.item() > 0.0
    assert model.evaluate(sentences, gold_label_type="ner").main_score == 1.0

    model.save(tmp_path / "cse.pt")
    again = [Sentence(text) for text, _ in TEXTS]
    flair.nn.Classifier.load(tmp_path / "cse.pt").predict(again)
    assert [spans_of(sentence, "ner") for sentence in again] == [spans for _, spans in TEXTS]


def test_trains_with_flairs_model_trainer(tmp_path: Path):
    sentences = [labeled(text, spans) for text, spans in TEXTS]
    data = FlairDatapointDataset(sentences)
    corpus = Corpus(data, data, data, sample_missing_splits=False)  # Flair's evaluation needs more than one span
    embeddings = OneHotEmbeddings.from_corpus(corpus, min_freq=1, embedding_length=8)
    model = ClassStartEndTagger(embeddings, corpus.make_label_dictionary("ner", add_unk=False), "ner")
    ModelTrainer(model, corpus).train(tmp_path, max_epochs=2, mini_batch_size=2, learning_rate=0.1)
    assert len((tmp_path / "loss.tsv").read_text(encoding="utf-8").strip().splitlines()) == 1 + 2  # header, 2 epochs
    loaded = flair.nn.Classifier.load(tmp_path / "final-model.pt")
    assert isinstance(loaded, ClassStartEndTagger) and loaded.label_type == "ner"
    again = [Sentence(text) for text, _ in TEXTS]
    loaded.predict(again)  # the reloaded model predicts the same spans as the trained one in memory
    model.predict(sentences := [Sentence(text) for text, _ in TEXTS])
    assert [spans_of(s, "ner") for s in again] == [spans_of(s, "ner") for s in sentences]
