"""The committed English, Danish and Chinese character-LM pairs (charlm/{en,da,zh}-*): trained on each recipe's raw
text with the labeled dev/test sentences cut out, loadable in plain Flair, read by the suite as they learned text."""

import json
from pathlib import Path

import pytest

CHARLM = Path(__file__).resolve().parent.parent / "charlm"
DIRECTIONS = ("forward", "backward")
SENTENCES = {
    "en": "Mr. Darcy walked from Pemberley to London .",
    "da": "Søren Kierkegaard boede i København .",
    "zh": "刘 备 来 到 北 京 大 学",
}
RAW_SOURCES = {"en": {"eltec"}, "da": {"adl"}, "zh": {"sanguo", "shuihu", "hongloumeng", "xiyou", "cluener-train"}}


def summary_of(language: str, direction: str) -> dict:
    return json.loads((CHARLM / f"{language}-{direction}" / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("language", sorted(SENTENCES))
def test_pair_shares_its_corpus_and_size(language: str) -> None:
    forward, backward = (summary_of(language, d) for d in DIRECTIONS)
    assert forward["corpus"]["splits"] == backward["corpus"]["splits"]
    assert forward["corpus"]["config"]["language"] == language and set(forward["corpus"]["sources"]) == RAW_SOURCES[language]
    assert forward["hyper"] == backward["hyper"] and forward["hyper"]["hidden_size"] == 512
    sizes = {(CHARLM / f"{language}-{d}" / "best-lm.pt").stat().st_size for d in DIRECTIONS}
    assert len(sizes) == 1 and sizes.pop() <= 50 * 1000 * 1000
    for summary in (forward, backward):
        assert summary["history"][-1]["chars"] == summary["chars_seen"]
        assert summary["valid_ppl"] == pytest.approx(min(point["valid_ppl"] for point in summary["history"]), abs=1e-4)


def test_chinese_pair_left_out_the_labeled_dev_and_test_sentences() -> None:
    """CLUENER's own train text is part of raw-zh; its sentences that also occur in dev or test were cut out."""
    sources = summary_of("zh", "forward")["corpus"]["sources"]
    assert sources["cluener-train"]["sentences_removed"] > 0
    coverage = {(row["dataset"], row["split"]): row for row in summary_of("zh", "forward")["labeled_coverage"]}
    assert coverage[("cluener", "dev")]["unseen_rate"] < 0.001  # the classics plus CLUENER's train text cover its dev


@pytest.mark.parametrize("language", sorted(SENTENCES))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_plain_flair_loads_it_and_the_suite_reads_it_as_it_learned(language: str, direction: str) -> None:
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings

    from flairsuite.embeddings.charlm import UnspacedFlairEmbeddings, resolve

    path = CHARLM / f"{language}-{direction}" / "best-lm.pt"
    plain = FlairEmbeddings(str(path))
    assert plain.is_forward_lm == (direction == "forward")
    suite = resolve(f"{language}-{direction}", path)
    assert isinstance(suite, UnspacedFlairEmbeddings) == (language == "zh")
    sentence = Sentence(SENTENCES[language])
    suite.embed(sentence)
    vectors = [token.get_embedding() for token in sentence]
    assert all(vector.shape == (512,) for vector in vectors)
    assert len({tuple(vector[:8].tolist()) for vector in vectors}) == len(vectors)  # one state per token, all distinct
