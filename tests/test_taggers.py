"""The tagger registry: module structure of each tagger, a one-epoch fit, reload and predict in plain Flair."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from flair.data import Corpus, Dictionary, Sentence
from flair.datasets import FlairDatapointDataset
from flair.embeddings import CharacterEmbeddings
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger
from flair.trainers import ModelTrainer

from flairsuite.errors import FlairsuiteError
from flairsuite.models.registry import TAGGERS, build_tagger, default_train
from flairsuite.models.settings import OPTIMIZERS

TEXTS = [
    ("Anna besuchte Berlin am Montag", [(0, 1, "pers"), (2, 3, "place"), (4, 5, "date")]),
    ("Karl verließ Wien", [(0, 1, "pers"), (2, 3, "place")]),
    ("Marie Walden schrieb aus Hamburg", [(0, 2, "pers"), (4, 5, "place")]),
    ("Am Freitag kam Otto", [(1, 2, "date"), (3, 4, "pers")]),
    ("Der Brief blieb liegen", []),
]
# Loads each saved tagger with flairsuite made unimportable and prints what it is and what it predicts.
PLAIN_FLAIR = """
import json, sys
sys.modules["flairsuite"] = None
from flair.data import Sentence
from flair.models import SequenceTagger
found = {}
for path in sys.argv[1:]:
    tagger = SequenceTagger.load(path)
    sentence = Sentence("Else besuchte Köln")
    tagger.predict(sentence, label_name="raw", force_token_predictions=True)
    found[path] = {"rnn": tagger.use_rnn, "crf": tagger.use_crf, "spans": tagger.predict_spans,
                   "raw": [token.get_label("raw").value for token in sentence],
                   "tags": tagger.label_dictionary.get_items()}
print(json.dumps(found))
"""


def sentence(text: str, spans: list[tuple[int, int, str]]) -> Sentence:
    """A Sentence with `ner` span labels (token start, end, type)."""
    result = Sentence(text)
    for start, end, label in spans:
        result[start:end].add_label("ner", label)
    return result


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """Five labeled sentences: three for train, one each for dev and test."""
    sentences = [sentence(text, spans) for text, spans in TEXTS]
    train, dev, test = (FlairDatapointDataset(part) for part in (sentences[:3], sentences[3:4], sentences[4:]))
    return Corpus(train, dev, test, sample_missing_splits=False)


@pytest.fixture(scope="module")
def embeddings() -> CharacterEmbeddings:
    """A tiny task-trained character embedding (length 8) over the fixture's characters."""
    characters = Dictionary()
    for char in sorted({c for text, _ in TEXTS for c in text} | set("Köln")):
        characters.add_item(char)
    return CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=4)


@pytest.fixture(scope="module")
def taggers(corpus: Corpus, embeddings: CharacterEmbeddings) -> dict[str, SequenceTagger]:
    dictionary = corpus.make_label_dictionary("ner", add_unk=False)
    return {name: build_tagger(name, embeddings, dictionary, "ner") for name, spec in TAGGERS.items() if spec.plain_flair}


def test_every_tagger_saves_as_its_registered_class(corpus: Corpus, embeddings: CharacterEmbeddings, tmp_path: Path) -> None:
    dictionary = corpus.make_label_dictionary("ner", add_unk=False)
    for name, spec in TAGGERS.items():
        path = tmp_path / f"{name}.pt"
        build_tagger(name, embeddings, dictionary, "ner").save(path)
        assert load_torch_state(str(path))["__cls__"] == spec.saved_as.__name__, name
        assert type(spec.saved_as.load(path)) is spec.saved_as, name


def test_module_structure(taggers: dict[str, SequenceTagger], embeddings: CharacterEmbeddings) -> None:
    assert set(taggers) == {"bilstm-crf", "bilstm512-crf", "bilstm-crf-noproj", "map-crf", "map", "lcrf-ner", "bilstm-lcrf-ner"}  # not `cse`
    bilstm = taggers["bilstm-crf"]
    assert isinstance(bilstm.rnn, torch.nn.LSTM)
    assert (bilstm.rnn.hidden_size, bilstm.rnn.num_layers, bilstm.rnn.bidirectional) == (256, 1, True)
    assert hasattr(bilstm, "crf") and hasattr(bilstm, "embedding2nn")
    assert bilstm.linear.in_features == 2 * 256
    assert taggers["bilstm512-crf"].rnn.hidden_size == 512 and taggers["bilstm512-crf"].linear.in_features == 2 * 512
    direct = taggers["bilstm-crf-noproj"]  # the LSTM reads the embeddings themselves
    assert not direct.reproject_embeddings and not hasattr(direct, "embedding2nn")
    assert direct.rnn.input_size == embeddings.embedding_length and (direct.rnn.hidden_size, direct.rnn.bidirectional) == (256, True)
    for name, crf in (("map-crf", True), ("map", False)):
        linear = taggers[name]
        assert not linear.use_rnn and not hasattr(linear, "rnn") and not hasattr(linear, "embedding2nn")
        assert hasattr(linear, "crf") is crf and linear.use_crf is crf
        assert linear.linear.in_features == embeddings.embedding_length
    for tagger in taggers.values():
        assert tagger.tag_format == "BIO" and tagger.predict_spans
        assert {"O", "B-pers", "I-pers", "B-place", "I-place", "B-date", "I-date"} <= set(tagger.label_dictionary.get_items())


def test_default_train_is_a_copy_per_tagger() -> None:
    defaults = default_train("map")
    defaults["learning_rate"] = 99
    assert default_train("map")["learning_rate"] != 99
    assert default_train("bilstm-crf")["optimizer"] == "sgd" and default_train("map-crf")["optimizer"] == "adam"


def test_unknown_tagger(embeddings: CharacterEmbeddings) -> None:
    with pytest.raises(FlairsuiteError, match=r"^unknown tagger 'map_crf'\. Did you mean map-crf"):
        build_tagger("map_crf", embeddings, Dictionary(add_unk=False), "ner")


def test_saved_taggers_load_and_predict_in_plain_flair(taggers: dict[str, SequenceTagger], corpus: Corpus, tmp_path: Path) -> None:
    settings = default_train("map-crf")
    ModelTrainer(taggers["map-crf"], corpus).train(
        tmp_path / "fit",
        learning_rate=settings["learning_rate"],
        mini_batch_size=settings["mini_batch_size"],
        max_epochs=1,
        anneal_factor=settings["anneal_factor"],
        patience=settings["patience"],
        optimizer=OPTIMIZERS[settings["optimizer"]],
        embeddings_storage_mode="none",
        save_final_model=False,
    )
    paths = {}
    for name, tagger in taggers.items():
        paths[name] = str(tmp_path / f"{name}.pt")
        tagger.save(paths[name])
    result = subprocess.run(
        [sys.executable, "-c", PLAIN_FLAIR, *paths.values()], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    for name, path in paths.items():
        loaded = found[path]
        assert (loaded["rnn"], loaded["crf"], loaded["spans"]) == (taggers[name].use_rnn, taggers[name].use_crf, True)
        assert loaded["tags"] == taggers[name].label_dictionary.get_items()
        here = Sentence("Else besuchte Köln")  # the same tagger in this process: the reloaded one tags as it does
        taggers[name].predict(here, label_name="raw", force_token_predictions=True)
        assert loaded["raw"] == [token.get_label("raw").value for token in here] and len(loaded["raw"]) == 3, name
