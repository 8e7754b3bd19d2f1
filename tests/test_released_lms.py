"""The committed German character-LM pairs in charlm/: load in plain Flair, small, trained as documented.

`de-1h-*` is the first released pair (20.5 M characters a direction); `de-2h-*` and `de-*` (the
released pair now) are the same pair continued with `--resume` to 41 M and 82 M characters (the
LM-time ablation): their learning curves start with the earlier one's, and valid perplexity falls
with the characters.
"""

import json
from pathlib import Path

import pytest

CHARLM = Path(__file__).resolve().parent.parent / "charlm"
DIRECTIONS = ("forward", "backward")
PAIRS = tuple(name for name in ("de-1h", "de-2h", "de") if (CHARLM / f"{name}-forward" / "best-lm.pt").is_file())
GPU_PAIR = "de-h1024-gpu"  # hidden 1024, trained on one H100 (charlm/README.md), weights stored as float16


def read_summary(name: str, direction: str) -> dict:
    return json.loads((CHARLM / f"{name}-{direction}" / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", PAIRS + (GPU_PAIR,))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_released_lm_loads_and_embeds(name: str, direction: str) -> None:
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings

    model = CHARLM / f"{name}-{direction}" / "best-lm.pt"
    assert model.stat().st_size <= 15 * 1024 * 1024
    summary = json.loads((CHARLM / f"{name}-{direction}" / "summary.json").read_text(encoding="utf-8"))
    assert summary["model"] == f"charlm/{name}-{direction}/best-lm.pt"
    embedding = FlairEmbeddings(str(model))
    assert embedding.is_forward_lm == (direction == "forward")
    sentence = Sentence("Herwarth Walden schreibt aus Berlin an Nell .")
    embedding.embed(sentence)
    assert all(token.embedding.shape == (summary["hyper"]["hidden_size"],) for token in sentence)


@pytest.mark.parametrize("name", PAIRS + (GPU_PAIR,))
def test_released_pair_was_trained_on_held_out_free_text(name: str) -> None:
    summaries = [read_summary(name, d) for d in DIRECTIONS]
    for summary in summaries:
        sources = summary["corpus"]["sources"]
        assert set(sources) == {"eltec", "courts", "news"}
        assert sources["courts"]["sentences_removed"] > 0
        assert summary["valid_ppl"] < 6 and summary["test_ppl"] < 6  # per character; 192 characters
        assert summary["history"][-1]["chars"] == summary["chars_seen"]
    assert summaries[0]["corpus"]["splits"] == summaries[1]["corpus"]["splits"]


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_continued_pairs_extend_the_released_run_and_perplexity_falls(direction: str) -> None:
    runs = [read_summary(name, direction) for name in PAIRS]
    assert len(runs) >= 2, "the LM-time ablation pairs (de-1h, de-2h, de) are committed"
    for earlier, later in zip(runs, runs[1:]):
        assert later["chars_seen"] > earlier["chars_seen"] and later["valid_ppl"] < earlier["valid_ppl"]
        released = [(point["chars"], point["valid_ppl"]) for point in earlier["history"]]
        assert [(point["chars"], point["valid_ppl"]) for point in later["history"][: len(released)]] == released
        assert later["hyper"]["hidden_size"] == earlier["hyper"]["hidden_size"] and later["corpus"]["splits"] == earlier["corpus"]["splits"]


def test_the_gpu_pair_is_float16_on_disk_and_beats_the_released_pair() -> None:
    """The hidden-1024 pair: float16 weights (under 16 MiB a file), trained on the released pair's prepared corpus,
    lower valid perplexity per character than the released 512 pair in both directions."""
    import torch

    for direction in DIRECTIONS:
        summary, released = read_summary(GPU_PAIR, direction), read_summary("de", direction)
        assert summary["hyper"]["hidden_size"] == 1024 and summary["model_dtype"] == "float16"
        assert summary["device"].startswith("cuda") and summary["corpus"]["splits"] == released["corpus"]["splits"]
        assert summary["valid_ppl"] < released["valid_ppl"] - 0.3
        model = CHARLM / f"{GPU_PAIR}-{direction}" / "best-lm.pt"
        assert model.stat().st_size < 16 * 1024 * 1024
        weights = torch.load(model, map_location="cpu", weights_only=False)["state_dict"]
        assert {value.dtype for value in weights.values()} == {torch.float16}


DEVICE_PAIR = "de-h2048-gpu"  # hidden 2048 (the `paper` preset), trained by tools/device on one H200


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_the_device_pair_loads_in_plain_flair_and_records_its_device_run(direction: str) -> None:
    """The hidden-2048 pair of the device script: float16 weights under the 50 MB cap, plain Flair embeds with it,
    its summary names the device run and the German prepared text with the labeled dev/test sentences cut out."""
    import torch
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings

    summary, released = read_summary(DEVICE_PAIR, direction), read_summary("de", direction)
    assert summary["hyper"]["hidden_size"] == 2048 and summary["hyper"]["sequence_length"] == 250
    assert summary["model_dtype"] == "float16" and summary["device"].startswith("cuda")
    assert summary["device_run"]["by"] == "experiments/device/device_train.py" and "H200" in summary["device_run"]["device"]
    assert set(summary["corpus"]["sources"]) == set(released["corpus"]["sources"])
    assert summary["corpus"]["sources"]["courts"]["sentences_removed"] > 0
    assert summary["valid_ppl"] < released["valid_ppl"] - 0.3
    model = CHARLM / f"{DEVICE_PAIR}-{direction}" / "best-lm.pt"
    assert model.stat().st_size < 50 * 1000 * 1000
    weights = torch.load(model, map_location="cpu", weights_only=False)["state_dict"]
    assert {value.dtype for value in weights.values()} == {torch.float16}
    embedding = FlairEmbeddings(str(model))
    assert embedding.is_forward_lm == (direction == "forward")
    sentence = Sentence("Herwarth Walden schreibt aus Berlin an Nell .")
    embedding.embed(sentence)
    assert all(token.embedding.shape == (2048,) and torch.isfinite(token.embedding).all() for token in sentence)
