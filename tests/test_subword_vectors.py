"""`fasttext:NAME@subwords` on tiny gensim vectors written as train-fasttext writes a vectors folder: an unknown token's
vector is gensim's subword vector, a known one keeps its plain vector; the missing model; cache keys and digests apart
from the plain spec's; the fast path; a tagger saved with it loading in Flair; the OOV counts."""

import json
import pickle
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import german_text, write_file
from flair.data import Sentence
from gensim.models import FastText, KeyedVectors

from flairsuite import embeddings
from flairsuite.cli import cli
from flairsuite.embeddings import artifact_digest, artifact_summary, resolve, token_vectors
from flairsuite.embeddings.subword_vectors import SubwordWordEmbeddings
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import wordvectors_dir
from flairsuite.files.summary_file import write_summary
from flairsuite.inference.embed import featurizer
from flairsuite.tagging.cache import cache_path
from flairsuite.tagging.data import LabeledSplit
from flairsuite.wordvectors.oov import oov_rates
from flairsuite.wordvectors.store import VECTORS_FILE, model_file, vectors_digest, vectors_folder
from flairsuite.wordvectors.subwords import NpyRows, SubwordModel

DIM = 8
UNKNOWN = ["Königinnen", "Gerichtshof", "Hauſe", "Q"]  # in no vocabulary: built from their n-grams
KNOWN = ["König", "DER", "Stadt"]  # "DER": Flair's lower-cased lookup finds "der"


def write_vectors(home: Path, name: str = "de", keep_model: bool = True, sep_limit: int = 10 * 1024**2, drop: tuple[str, ...] = ()) -> Path:
    """A vectors folder as train-fasttext writes it (vectors.kv, model/fasttext.model, summary.json) of a FastText of dim 8
    and 500 buckets trained for one epoch on `german_text`; `sep_limit` 0: the model's arrays in side files, as a big
    model's are; `drop`: vocabulary words left out of vectors.kv (as compact vectors leave words out)."""
    sentences = [line.split() for line in german_text(40).splitlines()]
    model = FastText(vector_size=DIM, window=3, min_count=1, workers=1, bucket=500, epochs=1, seed=1, sg=1)
    model.build_vocab(corpus_iterable=sentences)
    model.train(corpus_iterable=sentences, total_examples=model.corpus_count, epochs=1)
    folder = vectors_folder(wordvectors_dir(home), name)
    folder.mkdir(parents=True)
    kept = [word for word in model.wv.index_to_key if word not in drop]
    vectors = KeyedVectors(DIM)
    vectors.add_vectors(kept, model.wv[kept])
    vectors.save(str(folder / VECTORS_FILE))
    if keep_model:
        model_file(folder).parent.mkdir()
        model.save(str(model_file(folder)), sep_limit=sep_limit)
    write_summary(folder, {"language": "de", "config": {"dim": DIM}, "model_kept": keep_model})
    return folder


def gensim_vector(folder: Path, word: str) -> np.ndarray:
    """The vector gensim's fully loaded model gives `word`."""
    return FastText.load(str(model_file(folder))).wv[word]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("subwords") / "home"
    write_vectors(home, sep_limit=0)
    return home


def vectors_of(spec: str, home: Path, words: list[str]) -> torch.Tensor:
    return token_vectors(resolve(spec, home), [Sentence(words)])


def test_unknown_tokens_get_gensims_subword_vector_and_known_tokens_their_plain_vector(home):
    words = KNOWN + UNKNOWN
    plain, subwords = vectors_of("fasttext:de", home, words), vectors_of("fasttext:de@subwords", home, words)
    known = len(KNOWN)
    assert torch.equal(plain[:known], subwords[:known]) and bool(plain[:known].abs().sum(dim=1).all())
    assert not plain[known:].any()  # <unk>: zeros
    folder = vectors_folder(wordvectors_dir(home), "de")
    for row, word in enumerate(UNKNOWN, start=known):
        assert subwords[row].any() and np.array_equal(subwords[row].numpy(), gensim_vector(folder, word)), word


@pytest.mark.parametrize("sep_limit", [0, 10 * 1024**2])  # the arrays in side files (read by row), or inside the pickle
def test_the_model_read_by_row_gives_gensims_vectors_inside_and_outside_its_vocabulary(tmp_path, sep_limit):
    folder = write_vectors(tmp_path, sep_limit=sep_limit)
    model = SubwordModel.load(model_file(folder))
    assert isinstance(model.ngrams, NpyRows) == (sep_limit == 0)
    for word in ["König", "Gericht.", *UNKNOWN]:  # the first two in the model's vocabulary: its own row and n-grams
        assert np.array_equal(model.vector(word), gensim_vector(folder, word)), word
    assert not model.vector("").any() and model.buckets("") == []  # "<>" has no n-gram of 3 to 6 characters


def test_a_word_the_vectors_lack_but_the_model_knows_gets_the_models_word_vector(tmp_path):
    folder = write_vectors(tmp_path, sep_limit=0, drop=("König",))
    vector = vectors_of("fasttext:de@subwords", tmp_path, ["König"])[0]
    assert np.array_equal(vector.numpy(), gensim_vector(folder, "König"))
    assert not vectors_of("fasttext:de", tmp_path, ["König"]).any()


def test_vectors_without_their_model_are_a_one_line_error_when_the_spec_is_resolved(tmp_path):
    folder = write_vectors(tmp_path, keep_model=False)
    with pytest.raises(FlairsuiteError) as error:
        resolve("fasttext:de@subwords", tmp_path)
    message = str(error.value)
    assert "\n" not in message and str(model_file(folder)) in message and message.endswith("run `flairsuite train-fasttext --lang de`")
    assert "these vectors keep no model/" in message  # the vectors are there, their model is not
    with pytest.raises(FlairsuiteError) as digest_error:  # what `tag` computes before any run
        artifact_digest("fasttext:de@subwords", tmp_path)
    assert str(digest_error.value) == message
    assert resolve("fasttext:de", tmp_path).embedding_length == DIM  # the plain spec needs no model
    with pytest.raises(FlairsuiteError, match=r"unknown option @ngrams \(options: @subwords\)"):
        embeddings.parse("fasttext:de@ngrams")


def test_cache_keys_digests_and_summaries_of_the_variant_are_its_own(home):
    split = LabeledSplit.of([])
    plain, subwords = cache_path("fasttext:de", split, home), cache_path("fasttext:de@subwords", split, home)
    assert plain.parent.name == "fasttext-de" and subwords.parent.name == "fasttext-de@subwords" and plain.name != subwords.name
    folder = vectors_folder(wordvectors_dir(home), "de")
    assert artifact_digest("fasttext:de", home) == vectors_digest(folder)  # the plain spec's digest as before
    assert artifact_digest("fasttext:de@subwords", home) != vectors_digest(folder)
    assert artifact_summary("fasttext:de@subwords", home) == artifact_summary("fasttext:de", home) == {"dim": DIM}
    copy = home.parent / "copy"
    shutil.copytree(home, copy)
    with model_file(vectors_folder(wordvectors_dir(copy), "de")).with_name("fasttext.model.wv.vectors_ngrams.npy").open("ab") as handle:
        handle.write(b"\0")  # other n-gram buckets: other vectors
    assert artifact_digest("fasttext:de@subwords", copy) != artifact_digest("fasttext:de@subwords", home)
    assert artifact_digest("fasttext:de", copy) == artifact_digest("fasttext:de", home)


def test_the_fast_path_gives_the_flair_paths_vectors_and_pickling_drops_the_open_model(home):
    embedding = resolve("fasttext:de@subwords", home)
    sentences = [Sentence(KNOWN + UNKNOWN), Sentence(["Hauſe", "vnd", "König"]), Sentence(["Gericht"])]
    fast = featurizer(embedding, quantize=False)
    assert type(fast).__name__ == "SubwordFeatures"
    assert torch.equal(fast(sentences), token_vectors(embedding, sentences))
    assert embedding._subwords is not None
    restored = pickle.loads(pickle.dumps(embedding))
    assert restored._subwords is None and torch.equal(token_vectors(restored, sentences), token_vectors(embedding, sentences))


NER = {"train": "König\tB-pers\nkam\tO\nnach\tO\nBerlin\tB-place\n\nAnna\tB-pers\nsah\tO\nWien\tB-place\n",
       "dev": "Karl\tB-pers\nsah\tO\nHamburg\tB-place\n", "test": "Königinnen\tB-pers\nkamen\tO\nnach\tO\nBerlin\tB-place\n"}


def test_a_tagger_saved_with_the_variant_loads_in_flair_and_needs_its_model(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    folder = write_vectors(home, sep_limit=0)
    for split, text in NER.items():
        write_file(tmp_path / "data" / "names" / f"{split}.tsv", text)
    experiment = write_file(tmp_path / "sub.yaml", "name: sub\ncorpora: [{path: data/names/}]\n"
                            "embeddings: {plain: [fasttext:de], sub: [fasttext:de@subwords]}\ntaggers: [map-crf]\nseeds: [1]\ntrain: {max_epochs: 1}\n")
    result = CliRunner().invoke(cli, ["tag", str(experiment), "--threads", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    runs = home / "results" / "sub" / "names"
    metrics = {stack: json.loads((runs / stack / "map-crf" / "seed-1" / "metrics.json").read_text()) for stack in ("plain", "sub")}
    digests = [metrics[stack]["artifact_digests"] for stack in ("plain", "sub")]
    assert list(digests[0]) == ["fasttext:de"] and list(digests[1]) == ["fasttext:de@subwords"]
    assert digests[0]["fasttext:de"] != digests[1]["fasttext:de@subwords"]
    assert metrics["sub"]["artifact_summaries"] == {"fasttext:de@subwords": {"dim": DIM}}
    assert {path.parent.name for path in (home / "cache" / "embeddings").glob("*/*.npy")} == {"fasttext-de", "fasttext-de@subwords"}

    from flair.models import SequenceTagger

    tagger = SequenceTagger.load(runs / "sub" / "map-crf" / "seed-1" / "model.pt")
    embedding = tagger.embeddings if isinstance(tagger.embeddings, SubwordWordEmbeddings) else tagger.embeddings.list_embedding_0
    assert isinstance(embedding, SubwordWordEmbeddings) and embedding.model == str(model_file(folder).resolve())
    sentence = Sentence(["Königinnen", "kamen", "nach", "Berlin"])
    tagger.predict(sentence)
    assert np.array_equal(token_vectors(embedding, [sentence])[0].numpy(), gensim_vector(folder, "Königinnen"))
    shutil.move(str(model_file(folder).parent), str(tmp_path / "moved"))
    with pytest.raises(FlairsuiteError, match="not found: this tagger's word vectors"):
        SequenceTagger.load(runs / "sub" / "map-crf" / "seed-1" / "model.pt")


def test_oov_rates_before_and_after_subwords(home):
    counts = {"train": Counter({"König": 3, "Königinnen": 2, "DER": 1}), "test": Counter({"Hauſe": 1, "": 1})}
    rates = oov_rates("de", counts, home)
    assert rates["train"] == {"tokens": 6, "oov_before": 2, "oov_before_rate": round(2 / 6, 6), "oov_after": 0, "oov_after_rate": 0.0,
                              "oov_types_before": 1}
    assert rates["test"]["oov_before"] == 2 and rates["test"]["oov_after"] == 1  # "" has no n-gram at all
