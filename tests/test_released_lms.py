"""The released German character-LM pair in charlm/: loads in plain Flair, small, trained as documented."""

import json
from pathlib import Path

import pytest

CHARLM = Path(__file__).resolve().parent.parent / "charlm"
DIRECTIONS = ("forward", "backward")


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_released_lm_loads_and_embeds(direction: str) -> None:
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings

    model = CHARLM / f"de-{direction}" / "best-lm.pt"
    assert model.stat().st_size <= 15 * 1024 * 1024
    summary = json.loads((CHARLM / f"de-{direction}" / "summary.json").read_text(encoding="utf-8"))
    embedding = FlairEmbeddings(str(model))
    assert embedding.is_forward_lm == (direction == "forward")
    sentence = Sentence("Herwarth Walden schreibt aus Berlin an Nell .")
    embedding.embed(sentence)
    assert all(token.embedding.shape == (summary["hyper"]["hidden_size"],) for token in sentence)


def test_released_pair_was_trained_on_held_out_free_text() -> None:
    summaries = [json.loads((CHARLM / f"de-{d}" / "summary.json").read_text(encoding="utf-8")) for d in DIRECTIONS]
    for summary in summaries:
        sources = summary["corpus"]["sources"]
        assert set(sources) == {"eltec", "courts", "news"}
        assert sources["courts"]["sentences_removed"] > 0
        assert summary["valid_ppl"] < 6 and summary["test_ppl"] < 6  # per character; 192 characters
        assert summary["history"][-1]["chars"] == summary["chars_seen"]
    assert summaries[0]["corpus"]["splits"] == summaries[1]["corpus"]["splits"]
