"""Languages written without spaces (the raw set's `segmentation: characters`, Chinese): one token per character.

The NER and PoS dev/test leave-out of LM and word-vector training matches held-out sentences on characters
(spaces ignored) and keeps the rest of the text as it was; fastText trains on characters.
"""

import json
import random
from pathlib import Path

from flairsuite.corpora.registry import language_segmentation
from flairsuite.rawtext.exclusion import MIN_CHARACTERS, SentenceIndex
from flairsuite.rawtext.prepare import prepare
from flairsuite.rawtext.settings import PrepareConfig
from flairsuite.wordvectors.tokens import TokenStream, tokenize

HELD_OUT = "北京市朝阳区人民法院今天公开宣判"  # a CLUENER-style dev sentence (16 characters)
FILLER = "话说天下大势分久必合合久必分周末七国分争并入于秦"


def test_only_chinese_is_segmented_by_character() -> None:
    assert language_segmentation("zh") == "characters"
    assert [language_segmentation(language) for language in ("de", "en", "da")] == ["words"] * 3


def test_character_index_cuts_a_held_out_sentence_anywhere_and_keeps_the_rest() -> None:
    index = SentenceIndex([tuple(HELD_OUT), tuple("天下大势")], by_character=True)
    assert len(index) == 1  # 4 characters: too short to match safely (MIN_CHARACTERS)
    assert MIN_CHARACTERS == 10
    spaced = f"{FILLER[:6]}，北京市 朝阳区人民法院今天 公开宣判。{FILLER[6:]}"
    assert index.remove(spaced) == (f"{FILLER[:6]}，。{FILLER[6:]}", 1)
    assert index.remove(FILLER) == (FILLER, 0)  # "天下大势" stays: below the minimum length
    twice = HELD_OUT + "，" + HELD_OUT
    assert index.remove(twice) == ("，", 2)
    assert index.remove(f"  {HELD_OUT} ") == ("", 1)  # nothing but spaces left: an empty document, dropped
    # word segmentation is unchanged: whole tokens, whitespace normalised where a sentence was cut
    words = SentenceIndex([("Der", "Brief", "aus", "Weimar", "kam", "gestern")])
    assert words.remove("Anna sagt :  Der Brief aus Weimar kam gestern . Ende") == ("Anna sagt : . Ende", 1)
    assert words.remove("Der Brief aus Weimar kam") == ("Der Brief aus Weimar kam", 0)
    # raw text is not tokenised: punctuation sticks to words on one side, not the other; both are split alike
    tagged = SentenceIndex([("Er", "kam", "gestern", "aus", "Weimar", ".")])
    assert tagged.remove("Anna schrieb: Er kam gestern aus Weimar. Dann  ging sie.") == ("Anna schrieb: Dann  ging sie.", 1)
    assert tagged.remove("Er kam gestern aus Weimarer Zeiten.") == ("Er kam gestern aus Weimarer Zeiten.", 0)  # whole units only


def test_prepared_chinese_text_loses_the_cluener_dev_sentence(tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    (root / "cluener2020").mkdir(parents=True)
    dev = {"text": HELD_OUT, "label": {"government": {"北京市朝阳区人民法院": [[0, 9]]}}}
    (root / "cluener2020" / "dev.json").write_text(json.dumps(dev, ensure_ascii=False) + "\n", encoding="utf-8")
    (root / "cluener2020" / "train.json").write_text(json.dumps({"text": "你好", "label": {}}, ensure_ascii=False) + "\n", encoding="utf-8")
    rng = random.Random(0)
    lines = ["".join(rng.choice(FILLER) for _ in range(40)) for _ in range(200)]
    lines[7] = lines[7][:20] + HELD_OUT + lines[7][20:]
    raw = tmp_path / "novel.txt"
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = prepare(PrepareConfig(language="zh", corpus=(str(raw),), heldout_fraction=0.1), root, tmp_path / "prepared")
    assert corpus.meta["heldout_sentences"] == 1 and corpus.meta["sources"]["novel.txt"]["sentences_removed"] == 1
    text = "".join(corpus.text_path(split).read_text(encoding="utf-8") for split in ("train", "valid", "test"))
    assert HELD_OUT not in text and "法院" not in text
    assert text.count("\n") == 200 and len(text) == 200 * 41  # every other character kept, no space added


def test_fasttext_tokens_are_characters_for_chinese(tmp_path: Path) -> None:
    assert tokenize("北京 市，朝阳。", characters=True) == ["北", "京", "市", "，", "朝", "阳", "。"]
    assert tokenize("北京市，朝阳。") == ["北京市", "，", "朝阳", "。"]  # what word tokens would make of it
    text = tmp_path / "zh.txt"
    text.write_text("天下大势\n分久 必合\n", encoding="utf-8")
    assert list(TokenStream(text, characters=True)) == [["天", "下", "大", "势"], ["分", "久", "必", "合"]]


def test_probe_words_are_tokens_of_their_language() -> None:
    """The summary's nearest-neighbour probes are vocabulary units: single characters where a language's vectors are per
    character (a two-character probe is never in such a vocabulary and only shows n-gram noise)."""
    from flairsuite.wordvectors.report import PROBES

    for language, words in PROBES.items():
        per_character = language_segmentation(language) == "characters"
        assert all((len(word) == 1) == per_character for word in words), language


def test_pos_dev_sentences_are_held_out_too_from_untokenised_text(tmp_path: Path) -> None:
    """A UD treebank's dev/test sentences leave LM text as NER ones do (PoS is a labeled task as well), found by their
    surface text (`# text =`: the token lines split "didn't" in two) in raw text where punctuation sticks to words."""
    root = tmp_path / "corpora"
    (root / "ud_english_ewt").mkdir(parents=True)
    rows = [("1", "We"), ("2-3", "didn't"), ("2", "did"), ("3", "n't"), ("4", "approve"), ("5", "the"), ("6", "budget"),
            ("7", "on"), ("8", "Friday"), ("9", ".")]
    conllu = "# sent_id = dev-1\n# text = We didn't approve the budget on Friday.\n"
    conllu += "".join(f"{i}\t{w}\t_\t{'_' if '-' in i else 'X'}\tXX\t_\t{'_' if '-' in i else '0'}\t{'_' if '-' in i else 'dep'}\t_\t_\n"
                      for i, w in rows) + "\n"
    (root / "ud_english_ewt" / "en_ewt-ud-dev.conllu").write_text(conllu, encoding="utf-8")
    rng = random.Random(0)
    lines = [" ".join(rng.choice(["ships", "sail", "north", "and", "rain", "falls"]) for _ in range(12)) for _ in range(200)]
    lines[3] = "Rain fell. We didn't approve the budget on Friday. Ships  sail."
    raw = tmp_path / "news.txt"
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = prepare(PrepareConfig(language="en", corpus=(str(raw),), heldout_fraction=0.1), root, tmp_path / "prepared")
    assert corpus.meta["heldout_sentences"] == 1 and corpus.meta["sources"]["news.txt"]["sentences_removed"] == 1
    assert corpus.meta["heldout_files"] == [str(root / "ud_english_ewt" / "en_ewt-ud-dev.conllu")]
    text = "".join(corpus.text_path(split).read_text(encoding="utf-8") for split in ("train", "valid", "test"))
    assert "budget" not in text and "Rain fell. Ships  sail.\n" in text and text.count("\n") == 200


def test_a_chinese_treebank_sentence_is_held_out_by_its_characters(tmp_path: Path) -> None:
    """A CoNLL-U sentence of a language without spaces is one whitespace token as text: it is held out by characters."""
    from flairsuite.rawtext.exclusion import heldout_sentences

    root = tmp_path / "corpora"
    words = ["北京市", "朝阳区", "人民", "法院", "今天", "公开", "宣判"]
    rows = "".join(f"{i}\t{w}\t_\tNOUN\tNN\t_\t0\tdep\t_\t_\n" for i, w in enumerate(words, 1))
    write_conllu = root / "ud_chinese_gsdsimp" / "zh_gsdsimp-ud-dev.conllu"
    write_conllu.parent.mkdir(parents=True)
    write_conllu.write_text(f"# text = {HELD_OUT}\n{rows}\n", encoding="utf-8")
    sentences, files = heldout_sentences("zh", root)
    assert sentences == [(HELD_OUT,)] and files == [write_conllu]
    assert SentenceIndex(sentences, by_character=True).remove(FILLER[:5] + HELD_OUT + FILLER[5:]) == (FILLER, 1)
