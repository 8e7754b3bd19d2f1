"""A character LM of a language written without spaces (Chinese) reads tagged sentences as it learned text: the
characters without spaces between them, each token's vector the LM state after that character; Flair's defaults
(tokens joined by spaces, the state after the next character) apply to every other language."""

import hashlib
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from conftest import TINY_CHARLM, train_tiny_embeddings, write_file
from flair.data import Sentence
from flair.embeddings import FlairEmbeddings

from flairsuite.cli import cli
from flairsuite.embeddings import resolve
from flairsuite.inference.embed import stack_featurizers

CHINESE = "北京是中国的首都，上海在东边。小明昨天去了南京路，买了一本书。"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """Tiny forward and backward Chinese LMs (`charlm/zh-*`) and a tiny German one, all trained by the CLI."""
    root = tmp_path_factory.mktemp("unspaced")
    home = train_tiny_embeddings(root, "forward")
    corpus = write_file(root / "zh.txt", "\n".join(CHINESE[i:] + CHINESE[:i] for i in range(200)) + "\n")
    for direction in ("forward", "backward"):
        result = CliRunner().invoke(
            cli, ["train-charlm", "--lang", "zh", "--direction", direction, "--corpus", str(corpus), "--heldout-fraction", "0.2",
                  "--corpora-dir", str(root), *TINY_CHARLM], env={"FLAIRSUITE_HOME": str(home)}, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return home


def characters(text: str) -> Sentence:
    """`text` one token per character, no space after any (as the suite reads Chinese corpora)."""
    sentence = Sentence(list(text))
    for token in sentence:
        token.whitespace_after = 0
    return sentence


def test_the_flags_follow_the_language(home: Path) -> None:
    chinese, german = resolve("charlm:zh-forward", home), resolve("charlm:de-forward", home)
    assert (chinese.tokenized_lm, chinese.with_whitespace) == (False, False)
    assert (german.tokenized_lm, german.with_whitespace) == (True, True)


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_each_character_gets_the_state_after_itself_on_unspaced_text(home: Path, direction: str) -> None:
    embedding = resolve(f"charlm:zh-{direction}", home)
    text = CHINESE[:12]
    sentence = characters(text)
    embedding.embed(sentence)
    with torch.no_grad():
        states = embedding.lm.get_representation([text], "\n", " ")[:, 0, :]  # the LM over the unspaced string
    # state t follows character t of "\n" + text (reversed for the backward LM) + " "
    rows = [1 + i for i in range(len(text))] if direction == "forward" else [len(text) - i for i in range(len(text))]
    got = torch.stack([token.get_embedding() for token in sentence])
    assert torch.allclose(got, states[rows], atol=1e-5)
    flair_defaults = FlairEmbeddings(str(home / "charlm" / f"zh-{direction}" / "best-lm.pt"))  # spaced text, the next state
    again = characters(text)
    flair_defaults.embed(again)
    assert not torch.allclose(torch.stack([token.get_embedding() for token in again]), got, atol=1e-3)


def test_the_fast_path_reads_the_same_text(home: Path) -> None:
    from flair.embeddings import StackedEmbeddings

    stacked = StackedEmbeddings([resolve("charlm:zh-forward", home), resolve("charlm:zh-backward", home)])
    sentences = [characters(CHINESE[:9]), characters(CHINESE[5:30])]
    stacked.embed(sentences)
    expected = torch.stack([token.get_embedding() for sentence in sentences for token in sentence])
    with torch.inference_mode():
        parts = [featurize([characters(CHINESE[:9]), characters(CHINESE[5:30])]) for featurize in stack_featurizers(stacked, quantize=False)]
    assert torch.allclose(torch.cat(parts, dim=1), expected, atol=1e-5)


def test_a_saved_tagger_reloads_the_same_reading_in_plain_flair(home: Path, tmp_path: Path) -> None:
    from flair.data import Dictionary
    from flair.models import SequenceTagger

    tags = Dictionary(add_unk=False)
    for tag in ("O", "B-LOC", "I-LOC"):
        tags.add_item(tag)
    tagger = SequenceTagger(hidden_size=8, embeddings=resolve("charlm:zh-forward", home), tag_dictionary=tags, tag_type="ner")
    tagger.save(tmp_path / "zh.pt")
    loaded = SequenceTagger.load(tmp_path / "zh.pt").embeddings  # Flair's own classes: saved as FlairEmbeddings
    assert type(loaded) is FlairEmbeddings and (loaded.tokenized_lm, loaded.with_whitespace) == (False, False)
    before, after = characters(CHINESE[:10]), characters(CHINESE[:10])
    tagger.embeddings.embed(before)
    loaded.embed(after)
    assert torch.allclose(torch.stack([t.get_embedding() for t in before]), torch.stack([t.get_embedding() for t in after]))


def test_the_cache_keys_an_unspaced_reading_apart(home: Path) -> None:
    from flairsuite.embeddings import artifact_digest
    from flairsuite.embeddings.charlm import UNSPACED, digested

    path = home / "charlm" / "zh-forward" / "best-lm.pt"
    assert digested(path) == [path, UNSPACED] and digested(home / "charlm" / "de-forward" / "best-lm.pt")[-1] != UNSPACED
    file_only = hashlib.sha256(b"best-lm.pt\0" + path.read_bytes()).hexdigest()  # the key of vectors read the old way
    assert artifact_digest("charlm:zh-forward", home) != file_only
