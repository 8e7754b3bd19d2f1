"""The word-order probe of pre-trained BERTs (flairsuite.bert.order_probe, experiments/bert_order_probe.py)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from test_bert_training import bert_args, raw  # noqa: F401  (raw: the fixture text)

from flairsuite.bert.masking import IGNORE
from flairsuite.bert.order_probe import OrderProbe, probe_order, shuffle_words, verdict, word_order
from flairsuite.bert.vocabulary import CLS, MASK, PAD, SEP
from flairsuite.cli import cli
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import bert_data_dir

EXPERIMENTS = Path(__file__).resolve().parent.parent / "experiments"
STARTS_WORD = np.ones(20, dtype=bool)
STARTS_WORD[[7, 8]] = False  # ids 7 and 8 continue a word (## pieces)


def test_word_order_moves_whole_words_and_keeps_the_markers() -> None:
    ids = np.array([CLS, 10, 7, 11, 12, 7, 8, SEP, PAD])  # words [10 7] [11] [12 7 8]
    seen = set()
    for seed in range(40):
        order = word_order(ids, STARTS_WORD, 8, np.random.default_rng(seed))
        assert sorted(order) == list(range(8)) and order[0] == 0 and order[-1] == 7
        words = tuple(tuple(ids[order[1:-1]]))
        assert sorted([words[i:i + n] for i, n in _spans(words)]) == sorted([(10, 7), (11,), (12, 7, 8)])
        seen.add(words)
    assert len(seen) == 6  # every order of the three words occurs


def _spans(pieces: tuple[int, ...]) -> list[tuple[int, int]]:
    """(start, length) of each word in a piece sequence."""
    starts = [i for i, piece in enumerate(pieces) if STARTS_WORD[piece]] + [len(pieces)]
    return [(a, b - a) for a, b in zip(starts[:-1], starts[1:])]


def test_a_sample_opening_inside_a_cut_word_keeps_those_pieces_as_one_word() -> None:
    ids = np.array([CLS, 7, 8, 10, 11, SEP])
    for seed in range(10):
        order = word_order(ids, STARTS_WORD, 6, np.random.default_rng(seed))
        position = list(order).index(1)
        assert order[position + 1] == 2  # the two leading continuation pieces stay together


def test_shuffled_batches_move_masks_with_their_tokens_and_leave_padding() -> None:
    inputs = torch.tensor([[CLS, 10, MASK, 11, MASK, 7, SEP, PAD], [CLS, 13, 14, SEP, PAD, PAD, PAD, PAD]])
    labels = torch.full_like(inputs, IGNORE)
    labels[0, 2], labels[0, 4], labels[1, 2] = 7, 12, 14
    attention = (inputs != PAD).long()
    batch = {"input_ids": inputs, "labels": labels, "attention_mask": attention, "token_type_ids": torch.zeros_like(inputs)}
    changed = False
    for seed in range(10):
        out = shuffle_words(batch, STARTS_WORD, np.random.default_rng(seed))
        assert torch.equal(out["attention_mask"], attention) and torch.equal(out["input_ids"][:, -1], inputs[:, -1])
        for row in range(2):
            before = sorted(zip(inputs[row].tolist(), labels[row].tolist()))
            assert sorted(zip(out["input_ids"][row].tolist(), out["labels"][row].tolist())) == before
        # the masked continuation piece (label 7) still follows its word's first piece
        row0 = out["labels"][0].tolist()
        assert out["input_ids"][0, row0.index(7) - 1] == 10
        changed |= not torch.equal(out["input_ids"], inputs)
    assert changed
    assert torch.equal(batch["input_ids"], inputs)  # the input batch is left as it was


def test_in_order_the_probe_reproduces_the_trainers_validation(raw, tmp_path) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, bert_args(raw, tmp_path, 10000, "--validate-tokens", "5000"))
    assert result.exit_code == 0, result.output
    folder = tmp_path / "tiny"
    summary = json.loads((folder / "summary.json").read_text())
    probe = probe_order(folder)
    assert round(probe.in_order, 4) == summary["valid_accuracy"]  # the kept model's validation, same samples and masks
    # train-bert probed its model itself: the same numbers in summary.json and a report line
    assert summary["word_order"] == {"valid_accuracy": round(probe.in_order, 4), "shuffled_accuracy": round(probe.shuffled, 4), "masked": probe.masked}
    assert f"word order: valid MLM accuracy {100 * probe.in_order:.2f} % in order, {100 * probe.shuffled:.2f} % with each" in result.output
    assert probe.masked > 10 and 0.0 <= probe.shuffled <= 1.0
    script = subprocess.run([sys.executable, str(EXPERIMENTS / "bert_order_probe.py"), str(folder)], capture_output=True, text=True, timeout=300)
    assert script.returncode == 0, script.stderr[-2000:]
    assert f"| tiny | relative | whole words | full | 0.0 M | {100 * probe.in_order:.2f} | {100 * probe.shuffled:.2f} |" in script.stdout
    # without its tokenized corpus (another machine, a cleared cache) the probe says so in one line
    (bert_data_dir() / next(p.name for p in bert_data_dir().iterdir() if p.is_dir())).rename(tmp_path / "moved")
    with pytest.raises(FlairsuiteError, match="the tokenized pre-training corpus of .* is not here"):
        probe_order(folder)
    script = subprocess.run([sys.executable, str(EXPERIMENTS / "bert_order_probe.py"), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert script.returncode == 1 and script.stderr.strip().startswith("Error: ") and "summary.json: missing" in script.stderr


def test_the_verdict_says_when_a_model_ignores_word_order() -> None:
    blind, aware = OrderProbe(0.1462, 0.1459, 9612, 512), OrderProbe(0.2718, 0.1079, 9612, 512)
    assert verdict(blind).endswith("the model does not use word order yet (the bag-of-words plateau of early MLM training): train longer "
                                   "(relative positions left it sooner on the German text, results/README.md)")
    assert verdict(aware) == "word order: valid MLM accuracy 27.18 % in order, 10.79 % with each sample's words shuffled (9,612 masked tokens)"
