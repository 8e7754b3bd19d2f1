"""Char-Entity attention (Jia et al. 2020, §3.2, Eq. 3-5) in the small BERT, and `train-bert --lexicon`.

Covers: the model's own entity matching (Algorithm 1 over token ids); keys and values of tokens with
an entity are the mean of the token's and the entity's projections (Eq. 3), those without are
untouched, so a sentence without matches encodes exactly as with entities switched off; training
with `--lexicon` on fixture text, the summary's entry count, the saved folder reloaded by plain
transformers (`trust_remote_code`) with the same hidden states; the one-line errors.
"""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from conftest import write_file

from flairsuite.bert.modeling_flairsuite_bert import FlairsuiteBertConfig, FlairsuiteBertModel
from flairsuite.cli import cli

ENTRIES = [[5, 6], [5, 6, 7], [9], [7, 8]]


def tiny(entities=ENTRIES, min_length=1, seed=0) -> FlairsuiteBertModel:
    torch.manual_seed(seed)
    config = FlairsuiteBertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, entities=entities, entity_size=4,
                                  entity_min_length=min_length)
    return FlairsuiteBertModel(config).eval()


def test_the_model_labels_tokens_by_maximum_matching():
    model = tiny()
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 5, 6, 2], [1, 7, 8, 3, 9, 9, 0, 0, 0]])
    # row 0: 5 6 7 (entry 2, the longest at 5) then 8 (none) then 9 (entry 3) then 5 6 (entry 1)
    assert model.entity_index(ids).tolist() == [[0, 2, 2, 2, 0, 3, 1, 1, 0], [0, 4, 4, 0, 3, 3, 0, 0, 0]]
    assert tiny(min_length=2).entity_index(torch.tensor([[9, 5, 6]])).tolist() == [[0, 1, 1]]  # one-token entries need length 1
    # with WordPiece continuations (ids 6 and 8 as "##" pieces): matches cover whole words only
    pieces = tiny()
    pieces.set_continuation([6, 8])
    # 5 ##6 is a word (entry 1); 5 ##6 7 would end inside "7 ##8", so entry 2 is out; 7 ##8 (entry 4); 9 (entry 3)
    assert pieces.entity_index(torch.tensor([[1, 5, 6, 7, 8, 9]])).tolist() == [[0, 1, 1, 4, 4, 3]]
    # 9 at a word's start but the word goes on (9 ##8): no match; "7" of "7 ##8" is no entry alone
    assert pieces.entity_index(torch.tensor([[9, 8, 7, 8, 2]])).tolist() == [[0, 0, 4, 4, 0]]
    # an entry never starts on a continuation piece: "##6 7" is not "5 6 7"
    assert pieces.entity_index(torch.tensor([[3, 6, 7, 8]])).tolist() == [[0, 0, 4, 4]]


def test_keys_and_values_of_entity_tokens_mix_in_the_entity_and_others_are_untouched():
    model = tiny()
    attention = model.encoder[0].attention.self
    seen = {}
    attention.register_forward_hook(lambda module, args, output: seen.update(args=args))
    ids = torch.tensor([[1, 5, 6, 3, 2]])
    hidden = model.embeddings(ids)
    model(ids)
    _, _, _, (vectors, present) = seen["args"]
    assert present.tolist() == [[False, True, True, False, False]]
    entity = model.entity_embeddings(model.entity_index(ids))
    assert torch.equal(vectors, entity)
    key, value = attention.key(hidden), attention.value(hidden)
    expected_key = torch.where(present[..., None], 0.5 * (key + attention.entity_key(entity)), key)
    mixed, _ = attention(hidden, torch.ones(1, 5, dtype=torch.bool), None, (vectors, present))
    plain = attention.attend(*(attention.split_heads(x) for x in (attention.query(hidden), expected_key,
                               torch.where(present[..., None], 0.5 * (value + attention.entity_value(entity)), value))),
                             torch.ones(1, 5, dtype=torch.bool))[0]
    assert torch.allclose(mixed, plain, atol=1e-6)


def test_without_matches_the_encoding_is_that_of_the_model_without_entities():
    with_entities, without = tiny(), tiny(entities=None)
    without.load_state_dict({k: v for k, v in with_entities.state_dict().items() if "entity" not in k})
    ids = torch.tensor([[1, 3, 4, 2]])  # no entry occurs
    assert torch.allclose(with_entities(ids).last_hidden_state, without(ids).last_hidden_state, atol=1e-6)
    matched = torch.tensor([[1, 5, 6, 2]])
    assert not torch.allclose(with_entities(matched).last_hidden_state, without(matched).last_hidden_state, atol=1e-4)


def test_wwa_with_entities_is_refused():
    with pytest.raises(ValueError, match="Char-Entity attention \\(entities\\) needs attention 'full'"):
        FlairsuiteBertConfig(attention="wwa", entities=[[1, 2]])


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("raw")
    rng = random.Random(0)
    lines = [f"{rng.choice(['Anna', 'Karl'])} schreibt heute nach {rng.choice(['Berlin', 'Bad Tölz'])} ." for _ in range(800)]
    text = write_file(folder / "raw.txt", "\n".join(lines) + "\n")
    for split in ("train", "dev", "test"):
        write_file(folder / "corpora" / "sturm" / f"{split}_sturm.conll", "Hallo O\n\n")
    return text, folder / "corpora"


def train_args(raw, out: Path, *extra: str) -> list[str]:
    text, corpora = raw
    return ["train-bert", "--lang", "de", "--corpus", str(text), "--corpora-dir", str(corpora), "--out", str(out), "--name", "tiny",
            "--layers", "1", "--hidden-size", "32", "--heads", "2", "--sequence-length", "32", "--vocab-size", "120", "--batch-size", "8",
            "--threads", "1", "--max-tokens", "3000", *extra]


def test_train_bert_with_a_lexicon_saves_entities_that_plain_transformers_loads(raw, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    write_file(home / "lexicons" / "toy.tsv", "# flairsuite lexicon: units=words language=de\nentry\tscore\nBad Tölz\t2\nBerlin\t1\nQuxquux\t0\n")
    result = CliRunner().invoke(cli, train_args(raw, tmp_path / "bert", "--lexicon", "toy"), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    found = re.search(r"Char-Entity attention: (\d) entries of lexicon toy \((\d) dropped: a unit the vocabulary lacks\)", result.output)
    assert found and int(found[1]) + int(found[2]) == 3, result.output
    folder = tmp_path / "bert" / "tiny"
    config = json.loads((folder / "config.json").read_text())
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["lexicon"]["name"] == "toy" and summary["lexicon"]["entries"] == len(config["entities"]) >= 2
    assert config["entity_size"] == 64 and config["entity_min_length"] == 1

    from transformers import AutoModel, AutoTokenizer

    import flairsuite.bert  # noqa: F401  (registers the classes)

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    batch = tokenizer(["Anna schreibt heute nach Bad Tölz ."], return_tensors="pt")
    assert (model.entity_index(batch["input_ids"]) > 0).sum() >= 1
    ours = model(**batch).last_hidden_state[0, :, 0].tolist()
    script = (
        "import sys; from transformers import AutoModel, AutoTokenizer; folder = sys.argv[1];"
        "t = AutoTokenizer.from_pretrained(folder); m = AutoModel.from_pretrained(folder, trust_remote_code=True).eval();"
        "b = t(['Anna schreibt heute nach Bad Tölz .'], return_tensors='pt');"
        "assert 'flairsuite' not in sys.modules; print(m(**b).last_hidden_state[0, :, 0].tolist())"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == pytest.approx(ours, abs=1e-5)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lexicon", "toy", "--attention", "wwa"], "Error: --lexicon (Char-Entity attention) needs --attention full (the paper's BERT), not wwa"),
        (["--lexicon", "toy", "--positions", "absolute"],
         "Error: --lexicon (Char-Entity attention) needs --positions relative: the standard BERT has no entity input"),
        (["--lexicon", "none"], "lexicon not found (make one with `flairsuite discover-words"),
    ],
)
def test_lexicon_errors_are_one_line(raw, tmp_path, monkeypatch, extra, message):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    write_file(home / "lexicons" / "toy.tsv", "# flairsuite lexicon: units=words\nentry\nBerlin\n")
    result = CliRunner().invoke(cli, train_args(raw, tmp_path / "bert", *extra))
    lines = [line for line in result.output.strip().splitlines() if line.startswith("Error: ")]
    assert result.exit_code == 1 and len(lines) == 1 and message in lines[0] and "Traceback" not in result.output, result.output
