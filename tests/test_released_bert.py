"""The released small BERT (`bert/de-cpu/`): complete, within its cap, loadable through the suite's registration, consistent with its summary."""

import json
from pathlib import Path

import pytest
import torch

FOLDER = Path(__file__).resolve().parent.parent / "bert" / "de-cpu"
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "modeling_flairsuite_bert.py", "summary.json")


@pytest.fixture(scope="module")
def summary() -> dict:
    if not (FOLDER / "config.json").is_file():
        pytest.skip("no released BERT in this checkout")
    return json.loads((FOLDER / "summary.json").read_text(encoding="utf-8"))


def test_release_is_complete_and_small(summary) -> None:
    assert all((FOLDER / name).is_file() for name in FILES)
    assert sum((FOLDER / name).stat().st_size for name in FILES) <= 50 * 1024 * 1024
    assert summary["settings"]["layers"] == 4 and summary["settings"]["hidden_size"] == 256 and summary["hours"] >= 0.99
    best = min(summary["history"], key=lambda point: point["valid_loss"])  # the saved model is the best valid point
    assert summary["valid_loss"] == round(best["valid_loss"], 4) and summary["valid_accuracy"] == round(best["valid_accuracy"], 4)


def test_release_loads_and_predicts_better_than_chance(summary) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    import flairsuite.bert  # noqa: F401  (registers the model type)

    model = AutoModelForMaskedLM.from_pretrained(FOLDER).eval()
    tokenizer = AutoTokenizer.from_pretrained(FOLDER)
    assert tokenizer.model_max_length == summary["settings"]["seq_len"]
    assert tokenizer.tokenize("Übersetzung")[0].startswith("Ü")  # cased, accents kept
    batch = tokenizer(["Er ging in die [MASK] und kam erst am Abend zurück ."], return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    position = int((batch["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
    assert logits[0, position].argmax().item() not in tokenizer.all_special_ids
    assert model.num_parameters() == summary["parameters"]
