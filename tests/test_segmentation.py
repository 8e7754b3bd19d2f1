"""Raw text split as the tagger was trained: a Chinese tagger (trained one token per character) gets characters.

Covers: the character splitter (sentences at 。！？ and line breaks, every non-space character a token at
its offset in the text); the model card a grid run writes (`segmentation`), kept by plain Flair's
save/load; a model without a card splits words as before; `flairsuite predict` of a CLUENER tagger
(real files) in JSON and TEI.
"""

import json
import os
from pathlib import Path

import pytest
from conftest import invoke, write_file
from flair.data import Dictionary
from flair.embeddings import OneHotEmbeddings
from flair.models import SequenceTagger

from flairsuite.corpora.registry import dataset
from flairsuite.corpora.segmentation import split_text
from flairsuite.models.card import model_segmentation, record_segmentation
from flairsuite.models.registry import build_tagger

CORPORA = Path(os.environ["FLAIRSUITE_CORPORA"]) if os.environ.get("FLAIRSUITE_CORPORA") else None
CHINESE = "北京市朝阳区人民法院今天公开宣判。\n张三 在 上海工作！他说：“明天去杭州。”最后一句没有句号"


def test_characters_are_tokens_at_their_offsets_and_sentences_end_at_chinese_punctuation() -> None:
    sentences = split_text(CHINESE, "characters")
    texts = ["".join(token.text for token in sentence) for sentence in sentences]
    assert texts == ["北京市朝阳区人民法院今天公开宣判。", "张三在上海工作！", "他说：“明天去杭州。”", "最后一句没有句号"]
    for sentence in sentences:
        assert all(len(token.text) == 1 for token in sentence)
        for token in sentence:
            assert CHINESE[sentence.start_position + token.start_position] == token.text
    # the word path: sentences and tokens as segtok makes them, punctuation split off, offsets in the text
    german = "Am Montag kam Anna nach Berlin. Otto blieb in Wien."
    words = split_text(german)
    assert [s.to_tokenized_string() for s in words] == ["Am Montag kam Anna nach Berlin .", "Otto blieb in Wien ."]
    assert german[words[1].start_position + words[1][3].start_position :].startswith("Wien")
    assert split_text("  \n\n ", "characters") == []
    # the corpus decides, not the language: CLUENER was read one token per character, UD Chinese GSDSimp as words
    assert dataset("cluener").segmentation == "characters" and dataset("ud-zh-gsdsimp").segmentation == "words"
    assert dataset("sturm").segmentation == "words"


def test_the_card_survives_plain_flair_save_and_load_and_a_model_without_one_splits_words(tmp_path: Path) -> None:
    dictionary = Dictionary(add_unk=False)
    dictionary.add_item("loc")
    dictionary.span_labels = True
    corpus_words = Dictionary()
    for char in "北京上海":
        corpus_words.add_item(char)
    model = build_tagger("map", OneHotEmbeddings(corpus_words, embedding_length=4), dictionary, "ner")
    assert model_segmentation(model) == "words"
    model.save(tmp_path / "plain.pt")
    assert model_segmentation(SequenceTagger.load(tmp_path / "plain.pt")) == "words"
    model.model_card = {"training_parameters": {"lr": 0.1}}
    record_segmentation(model, "characters")
    model.save(tmp_path / "zh.pt")
    loaded = SequenceTagger.load(tmp_path / "zh.pt")
    assert model_segmentation(loaded) == "characters" and loaded.model_card["training_parameters"] == {"lr": 0.1}
    with pytest.raises(ValueError, match="segmentation must be one of"):
        record_segmentation(model, "syllables")


@pytest.mark.skipif(CORPORA is None or not (CORPORA / "cluener2020").is_dir(), reason="needs CLUENER in FLAIRSUITE_CORPORA")
def test_a_cluener_tagger_predicts_one_token_per_character(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    experiment = write_file(tmp_path / "zh.yaml", """\
name: zh-tiny
corpora: [{name: cluener, dev_fraction: 0.1, subsample: 0.02}]
embeddings: {char: [char]}
taggers: [map]
seeds: [1]
train: {max_epochs: 1}
""")
    result = invoke("tag", str(experiment), "--threads", "1", "--corpora-dir", str(CORPORA))
    assert result.exit_code == 0, result.output
    model_path = next((home / "results" / "zh-tiny").rglob("model.pt"))
    assert model_segmentation(SequenceTagger.load(model_path)) == "characters"

    text = write_file(tmp_path / "news.txt", CHINESE + "\n")
    result = invoke("predict", str(model_path), str(text), "--format", "json", "--no-fast")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert ["".join(row["tokens"]) for row in rows] == ["北京市朝阳区人民法院今天公开宣判。", "张三在上海工作！", "他说：“明天去杭州。”", "最后一句没有句号"]
    assert all(len(token) == 1 for row in rows for token in row["tokens"])
    for row in rows:
        for span in row["spans"]:
            assert CHINESE[span["start_char"] : span["end_char"]].replace(" ", "") == "".join(row["tokens"][span["start"] : span["end"]])
    tei = invoke("predict", str(model_path), str(text), "--format", "tei")  # offsets checked against the text while marking up
    assert tei.exit_code == 0, tei.output
    assert "北京市朝阳区人民法院今天公开宣判" in tei.stdout.replace("\n", "")
