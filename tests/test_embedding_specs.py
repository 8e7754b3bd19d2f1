"""Embedding specs on a tiny trained character LM and tiny fastText vectors: resolution, stacking, errors, digests."""

import shutil

import pytest
from conftest import train_tiny_embeddings
from flair.data import Sentence
from flair.embeddings import CharacterEmbeddings, FlairEmbeddings, StackedEmbeddings, WordEmbeddings

from flairsuite.embeddings import artifact_digest, artifact_path, resolve, stack
from flairsuite.errors import FlairsuiteError

@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A home folder holding `charlm/de-forward` and `wordvectors/de-fasttext`, both trained by the CLI."""
    return train_tiny_embeddings(tmp_path_factory.mktemp("specs"), "forward", fasttext=True)


def test_specs_resolve_to_flair_embeddings(home):
    assert isinstance(resolve("charlm:de-forward", home), FlairEmbeddings)
    assert isinstance(resolve("fasttext:de", home), WordEmbeddings)
    assert isinstance(resolve("char", home), CharacterEmbeddings)
    assert artifact_path("charlm:de-forward", home) == home / "charlm" / "de-forward" / "best-lm.pt"
    assert artifact_path("char", home) is None


def test_stacked_lengths_add_up(home):
    specs = ["charlm:de-forward", "fasttext:de", "char"]
    stacked = stack(specs, home)
    assert isinstance(stacked, StackedEmbeddings)
    assert stacked.embedding_length == 16 + 16 + 50 == sum(resolve(s, home).embedding_length for s in specs)
    sentence = Sentence("Am Montag kam Walden nach Berlin".split())
    stacked.embed(sentence)
    assert [len(token.embedding) for token in sentence] == [82] * 6
    assert stack(["fasttext:de"], home).embedding_length == 16  # a single spec is not wrapped


@pytest.mark.parametrize(
    "spec, message",
    [
        ("charlm:de-backward", "{home}/charlm/de-backward/best-lm.pt not found: run `flairsuite train-charlm --lang de --direction backward`"),
        ("charlm:news-forward", "{home}/charlm/news-forward/best-lm.pt not found: run `flairsuite train-charlm --lang LANG --name news --direction forward`"),
        ("fasttext:da", "{home}/wordvectors/da-fasttext/vectors.kv not found: run `flairsuite train-fasttext --lang da`"),
        ("charlms:de-forward", "unknown embedding kind 'charlms'. Did you mean charlm, char?"),
        ("bert-base", "unknown embedding kind 'bert-base'. Known: charlm, fasttext, char."),
        ("fasttext", "embedding spec 'fasttext' needs a name, e.g. fasttext:de"),
        ("char:de", "embedding spec 'char:de': char takes no name (write 'char')"),
        ("charlm:de", "embedding spec 'charlm:de': write charlm:NAME-forward or charlm:NAME-backward"),
    ],
)
def test_bad_spec_is_one_line_error(home, spec, message):
    with pytest.raises(FlairsuiteError) as caught:
        stack(["char", spec], home)
    assert str(caught.value) == message.format(home=home)


def test_repeated_or_no_spec_is_an_error(home):
    with pytest.raises(FlairsuiteError, match="embedding char listed more than once"):
        stack(["char", "fasttext:de", "char"], home)
    with pytest.raises(FlairsuiteError, match="no embeddings given"):
        stack([], home)


def test_digest_follows_content_not_place(home, tmp_path):
    specs = ["charlm:de-forward", "fasttext:de", "char"]
    digests = [artifact_digest(s, home) for s in specs]
    assert len(set(digests)) == 3 and all(len(d) == 64 for d in digests)
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    assert [artifact_digest(s, copy) for s in specs] == digests
    with artifact_path("fasttext:de", copy).open("ab") as handle:
        handle.write(b"\0")
    assert artifact_digest("fasttext:de", copy) != digests[1]
