"""The released small BERT (`bert/de-cpu/`): complete, within its cap, loadable through the suite's registration, consistent with its summary."""

import json
import math
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


def test_release_loads_and_predicts_masked_words_far_better_than_an_untrained_model(summary) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    import flairsuite.bert  # noqa: F401  (registers the model type)

    model = AutoModelForMaskedLM.from_pretrained(FOLDER).eval()
    tokenizer = AutoTokenizer.from_pretrained(FOLDER)
    assert tokenizer.model_max_length == summary["settings"]["seq_len"]
    assert tokenizer.tokenize("Übersetzung")[0].startswith("Ü")  # cased, accents kept
    assert model.num_parameters() == summary["parameters"]
    # every word piece of a few German sentences masked in turn: the released model's cross-entropy (6.7 nats when the
    # test was written; valid 6.45 in its summary) against a fresh model of the same config (10.4) and a uniform guess
    torch.manual_seed(0)
    fresh = AutoModelForMaskedLM.from_config(model.config).eval()
    released, untrained = masked_loss(model, tokenizer), masked_loss(fresh, tokenizer)
    assert released < 8.0 and released < untrained - 2.0 and untrained > math.log(model.config.vocab_size) - 1.0


SENTENCES = (
    "Er ging in die Stadt und kam erst am Abend zurück .",
    "Die Regierung hat am Montag ein neues Gesetz beschlossen .",
    "Das Gericht wies die Klage als unbegründet ab .",
    "Sie schrieb ihrem Bruder einen langen Brief aus Berlin .",
)


def masked_loss(model, tokenizer) -> float:
    """Mean cross-entropy (nats) of each word piece of SENTENCES predicted with it masked, one at a time."""
    losses = []
    for sentence in SENTENCES:
        ids = tokenizer([sentence], return_tensors="pt")["input_ids"][0]
        positions = torch.arange(1, len(ids) - 1)  # not [CLS] and [SEP]: one copy of the sentence per masked piece
        masked = ids.repeat(len(positions), 1)
        masked[torch.arange(len(positions)), positions] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked, attention_mask=torch.ones_like(masked)).logits
        losses += torch.nn.functional.cross_entropy(logits[torch.arange(len(positions)), positions], ids[positions], reduction="none").tolist()
    return sum(losses) / len(losses)
