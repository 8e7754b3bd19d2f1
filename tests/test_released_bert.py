"""The released small BERT (`bert/de-cpu/`): complete, within its cap, loadable through the suite's registration, consistent with its summary."""

import json
import math
import os
import subprocess
import sys
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


def test_the_folders_code_is_the_registered_module_and_gives_the_same_hidden_states(summary, tmp_path) -> None:
    """`trust_remote_code=True` runs the folder's `modeling_flairsuite_bert.py`, `import flairsuite.bert` the registered
    module: the folder holds the registered module's bytes (it imports nothing of the suite), and both ways of loading
    give the same hidden states on German sentences. The folder's code is loaded from local files only, in a process
    that never imports flairsuite."""
    from transformers import AutoModel, AutoTokenizer

    import flairsuite.bert.modeling_flairsuite_bert as registered

    assert (FOLDER / "modeling_flairsuite_bert.py").read_bytes() == Path(registered.__file__).read_bytes()
    script = (
        "import sys, torch; from transformers import AutoModel, AutoTokenizer;"
        f"folder, out = r'{FOLDER}', r'{tmp_path / 'remote.pt'}';"
        "tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True);"
        "model = AutoModel.from_pretrained(folder, trust_remote_code=True, local_files_only=True).eval();"
        f"batch = tokenizer({list(SENTENCES)!r}, padding=True, return_tensors='pt');"
        "torch.save({'module': type(model).__module__, 'hidden': model(**batch).last_hidden_state.detach()}, out);"
        "assert 'flairsuite' not in sys.modules, 'flairsuite was imported'"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    remote = torch.load(tmp_path / "remote.pt")
    assert remote["module"].startswith("transformers_modules.") and remote["module"].endswith(".modeling_flairsuite_bert")

    import flairsuite.bert  # noqa: F401  (registers the model type)

    model = AutoModel.from_pretrained(FOLDER, local_files_only=True).eval()
    assert type(model).__module__ == registered.__name__
    tokenizer = AutoTokenizer.from_pretrained(FOLDER, local_files_only=True)
    batch = tokenizer(list(SENTENCES), padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    assert hidden.shape == remote["hidden"].shape == (len(SENTENCES), batch["input_ids"].shape[1], summary["settings"]["hidden_size"])
    assert torch.allclose(hidden, remote["hidden"], atol=1e-5, rtol=0)
