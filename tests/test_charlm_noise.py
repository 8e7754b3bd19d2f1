"""`train-charlm --noise`: synthetic masked-LM noise (Schweter and Baiter 2019) on the training windows of a character LM.

The scheme on a large window (shares, what is injected, what the targets are), its determinism (a function of seed,
direction, epoch and position only), the dictionary rows it adds, the records of runs with and without noise, a tiny
run of the installed CLI that plain Flair loads, a killed and resumed run equal to an uninterrupted one, bad values.
"""

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY_CHARLM, invoke, one_error_line
from flair.models import LanguageModel
from test_charlm import TINY, fixture_text, run_cli, train_args, wait_for_steps
from test_charlm_init import corpus_root, finished, init_args, initial, new_text  # noqa: F401  (fixtures)

from flairsuite.charlm.batches import StreamBatches
from flairsuite.charlm.noise import MASK, WindowNoise, build_noise, noise_key
from flairsuite.charlm.settings import Hyper, Noise
from flairsuite.charlm.trainer import CharLMTrainer
from flairsuite.errors import FlairsuiteError
from flairsuite.files import checkpoint
from flairsuite.rawtext.prepare import prepare
from flairsuite.rawtext.settings import PrepareConfig

ALPHABET = np.array([3, 5, 7, 11, 13], dtype=np.int64)
MASK_ID = 40


def noise(kind: str = "smlm-denoise", share: float = 0.1, seed: int = 1, forward: bool = True) -> WindowNoise:
    return WindowNoise(Noise(kind, share), MASK_ID, ALPHABET, noise_key(seed, forward))


def big_streams(streams: int = 200) -> StreamBatches:
    ids = (np.arange(streams * 5000 + 1) % 30 + 1).astype(np.uint16)  # ids 1..30: never the mask, a few in the alphabet
    return StreamBatches(ids, streams, 5000)


def clean_window(batches: StreamBatches, offset: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    inputs, targets = batches.window(offset, length)
    return inputs.numpy(), targets.numpy()


def test_a_large_window_follows_the_scheme_and_denoising_keeps_the_targets() -> None:
    batches = big_streams()
    clean_inputs, clean_targets = clean_window(batches, 0, 5000)  # a million characters
    inputs, targets = (t.numpy() for t in batches.window(0, 5000, noise("smlm-denoise", 0.1), epoch=0))
    plan = noise().plan(0, batches.positions(0, 5000))
    assert (plan < 0).mean() == pytest.approx(0.90, abs=0.002)
    assert (plan == MASK_ID).mean() == pytest.approx(0.02, abs=0.001)
    assert np.isin(plan, ALPHABET).mean() == pytest.approx(0.08, abs=0.002)
    assert np.bincount(plan[plan >= 0], minlength=MASK_ID + 1)[ALPHABET] / (plan >= 0).sum() == pytest.approx([0.08 / 0.1 / 5] * 5, abs=0.01)
    assert np.array_equal(inputs, np.where(plan < 0, clean_inputs, plan))  # the plan, applied
    changed = inputs != clean_inputs
    assert set(np.unique(inputs[changed])) <= {MASK_ID, *ALPHABET.tolist()}  # only the mask and alphabet characters injected
    assert np.array_equal(targets, clean_targets) and not (targets == MASK_ID).any()  # the targets: the clean text


def test_smlm_corrupts_the_text_itself_targets_are_the_next_noisy_inputs() -> None:
    """The paper's scheme: one corrupted text, read as inputs and as next-character targets, across window boundaries."""
    batches = big_streams(4)
    smlm = noise("smlm", 0.3)
    first_inputs, first_targets = (t.numpy() for t in batches.window(0, 100, smlm, epoch=2))
    later_inputs, _ = (t.numpy() for t in batches.window(100, 100, smlm, epoch=2))
    assert np.array_equal(first_targets[:-1], first_inputs[1:])
    assert np.array_equal(first_targets[-1], later_inputs[0])
    assert (first_targets == MASK_ID).any() and not np.array_equal(first_targets, clean_window(batches, 0, 100)[1])


def test_the_noise_is_a_function_of_seed_direction_epoch_and_position() -> None:
    batches = big_streams(8)
    whole = batches.window(0, 400, noise(), epoch=0)[0].numpy()
    again = batches.window(0, 400, noise(), epoch=0)[0].numpy()
    pieces = np.concatenate([batches.window(offset, 100, noise(), epoch=0)[0].numpy() for offset in range(0, 400, 100)])
    block = batches.block(2, 6).window(0, 400, noise(), epoch=0)[0].numpy()  # one rank's streams of a data-parallel run
    assert np.array_equal(whole, again) and np.array_equal(whole, pieces) and np.array_equal(whole[:, 2:6], block)
    for other in (noise(seed=2), noise(forward=False)):
        assert not np.array_equal(whole, batches.window(0, 400, other, epoch=0)[0].numpy())
    assert not np.array_equal(whole, batches.window(0, 400, noise(), epoch=1)[0].numpy())  # a new epoch, new noise


def test_records_without_noise_are_as_before_and_noise_is_spelt_in_full() -> None:
    before = ["hidden_size", "nlayers", "embedding_size", "sequence_length", "sequence_length_start", "ramp_chars", "batch_size",
              "learning_rate", "clip", "dropout", "anneal_factor", "patience", "validate_chars", "checkpoint_minutes", "valid_chars"]
    assert list(TINY.record()) == before and TINY.noise == "none"
    noisy = replace(TINY, noise="smlm")
    assert noisy.noise == "smlm:0.1" and noisy.record()["noise"] == "smlm:0.1" and "noise_alphabet" not in noisy.record()
    assert Hyper(**{**noisy.record(), "noise_alphabet": ["x.txt"]}).noise_alphabet == ("x.txt",)  # as a summary.json holds it
    for bad in ("smlm:0", "smlm:0.6", "smlm:nan", "smlm:", "foo", "smlm-denoise:x"):
        with pytest.raises(FlairsuiteError, match=r"^--noise must be none, smlm\[:P\] or smlm-denoise\[:P\]"):
            replace(TINY, noise=bad)
    with pytest.raises(FlairsuiteError, match=r"^--noise-alphabet needs --noise"):
        replace(TINY, noise_alphabet=("x.txt",))


@pytest.fixture
def prepared(tmp_path: Path):
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    (tmp_path / "corpora").mkdir()
    return prepare(PrepareConfig(language="de", corpus=(str(text),), heldout_fraction=0.1), tmp_path / "corpora", tmp_path / "prepared")


def test_the_mask_and_new_alphabet_characters_get_rows_of_their_own(prepared, tmp_path) -> None:
    hyper = replace(TINY, noise="smlm-denoise:0.2")
    own = build_noise(hyper, prepared, 1, True)
    chars = prepared.chars
    assert own.rows == (MASK,) and own.mask_id == len(chars) + 1
    assert set(own.alphabet_chars) == set(chars) - {"\n"}  # the training text's characters, no delimiter
    historic = tmp_path / "historic.txt"
    historic.write_text("Die Stadt Wien ſagt\n\nſo\n", encoding="utf-8")
    other = build_noise(replace(hyper, noise_alphabet=(str(historic),)), prepared, 1, True)
    assert set(other.alphabet_chars) == set("Die Stadt Wien ſagt ſo")
    assert other.rows[:2] == (MASK, "ſ") and set(other.rows[1:]) == set("Die Stadt Wien ſagt ſo") - set(chars)  # ſ: the most frequent
    assert other.alphabet.tolist() == sorted(other.alphabet.tolist()) and len(chars) + 2 in other.alphabet.tolist()
    trainer = CharLMTrainer(prepared, tmp_path / "lm", replace(hyper, noise_alphabet=(str(historic),)), True)
    assert [item.decode("utf-8") for item in trainer.model.dictionary.idx2item] == ["<unk>", *chars, *other.rows]
    assert "noise_alphabet" not in trainer.identity()["hyper"] and trainer.identity()["noise"]["alphabet"] == "".join(other.alphabet_chars)
    assert "noise" not in CharLMTrainer(prepared, tmp_path / "plain", TINY, True).identity()


def test_a_continued_noisy_lm_keeps_its_mask_row(prepared, tmp_path) -> None:
    """Text prepared with the dictionary of an LM trained with noise (--init) has the mask among its characters: reused."""
    config = PrepareConfig(language="de", corpus=(str(tmp_path / "raw.txt"),), heldout_fraction=0.1, base_chars=(*prepared.chars, MASK))
    again = prepare(config, tmp_path / "corpora", tmp_path / "prepared")
    continued = build_noise(replace(TINY, noise="smlm"), again, 1, True)
    assert continued.rows == () and continued.mask_id == len(prepared.chars) + 1 and MASK not in continued.alphabet_chars


def test_init_with_noise_adds_the_mask_row_to_the_initial_dictionary(initial, tmp_path, corpus_root) -> None:  # noqa: F811
    text = new_text(tmp_path / "new.txt")
    finished(init_args(text, corpus_root, tmp_path / "out", initial, 3000, "--noise", "smlm-denoise:0.2"))
    old = LanguageModel.load_language_model(Path(f"{initial}-forward") / "best-lm.pt")
    new = LanguageModel.load_language_model(tmp_path / "out" / "new-forward" / "best-lm.pt")
    assert new.dictionary.idx2item == [*old.dictionary.idx2item, MASK.encode("utf-8")]
    summary = json.loads((tmp_path / "out" / "new-forward" / "summary.json").read_text(encoding="utf-8"))
    assert summary["noise"]["scheme"] == "smlm-denoise" and summary["noise"]["added_rows"] == 1 and summary["history"][0]["initial"]
    assert summary["noise"]["targets"] == "the clean text" and "Ω" not in summary["noise"]["alphabet"]["characters"]  # <unk> here


def test_a_training_text_holding_the_mask_symbol_is_refused(tmp_path) -> None:
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text() + "".join(f"Anna{MASK}\n" for _ in range(50)), encoding="utf-8")
    (tmp_path / "corpora").mkdir()
    corpus = prepare(PrepareConfig(language="de", corpus=(str(text),), heldout_fraction=0.1), tmp_path / "corpora", tmp_path / "prepared")
    with pytest.raises(FlairsuiteError, match=r"^the training text holds U\+FDD0, the mask symbol of --noise"):
        build_noise(replace(TINY, noise="smlm"), corpus, 1, True)


def test_a_tiny_noisy_run_of_the_cli_loads_in_plain_flair_and_records_its_noise(tmp_path) -> None:
    corpus = tmp_path / "raw.txt"
    corpus.write_text(fixture_text(), encoding="utf-8")
    (tmp_path / "corpora").mkdir()
    args = ["train-charlm", "--lang", "de", "--direction", "forward", "--corpus", str(corpus), "--corpora-dir", str(tmp_path / "corpora"),
            "--out", str(tmp_path / "out"), "--heldout-fraction", "0.1", "--threads", "1", "--noise", "smlm:0.2", *TINY_CHARLM]
    done = subprocess.run(["flairsuite", *args], capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "trained with noise smlm:0.2" in done.stdout
    folder = tmp_path / "out" / "de-forward"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["hyper"]["noise"] == "smlm:0.2" and "noise_alphabet" not in summary["hyper"]
    assert summary["noise"]["scheme"] == "smlm" and summary["noise"]["share"] == 0.2 and summary["noise"]["mask"]["character"] == "U+FDD0"
    script = (
        "import sys; from flair.embeddings import FlairEmbeddings; from flair.data import Sentence;"
        f"e = FlairEmbeddings(r'{folder / 'best-lm.pt'}'); s = Sentence('Anna grüßt Franz in Wien .'); e.embed(s);"
        "assert 'flairsuite' not in sys.modules; print(len(e.lm.dictionary.idx2item), [len(t.embedding) for t in s][0])"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.split() == [str(summary["corpus"]["vocabulary"] + 1), "16"]  # the corpus's rows and the mask's


def test_sigkill_then_resume_of_a_noisy_run_continues_exactly(tmp_path) -> None:
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    root = tmp_path / "corpora"
    (root / "sturm").mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (root / "sturm" / f"{split}_sturm.conll").write_text("Hallo O\n\n", encoding="utf-8")
    noisy = ("--noise", "smlm-denoise:0.2")
    straight = run_cli(*train_args(text, root, tmp_path / "a", 24000), *noisy)
    assert straight.wait(timeout=300) == 0, straight.stdout.read()
    killed = run_cli(*train_args(text, root, tmp_path / "b", 10**9), *noisy)
    wait_for_steps(tmp_path / "b" / "de-forward" / "checkpoint.pt", 40, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    other = invoke(*train_args(text, root, tmp_path / "b", 24000), "--resume", "--noise", "smlm:0.2")
    assert "hyper.noise differ" in one_error_line(other)
    resumed = run_cli(*train_args(text, root, tmp_path / "b", 24000), *noisy, "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()
    a, b = (json.loads((tmp_path / run / "de-forward" / "summary.json").read_text()) for run in ("a", "b"))
    assert (a["steps"], a["chars_seen"], a["valid_ppl"]) == (b["steps"], b["chars_seen"], b["valid_ppl"]) and a["noise"] == b["noise"]
    weights_a, weights_b = (checkpoint.load(tmp_path / run / "de-forward" / "checkpoint.pt")["model"] for run in ("a", "b"))
    assert all(torch.equal(weights_a[key], weights_b[key]) for key in weights_a)  # bit for bit


@pytest.mark.parametrize("value", ["smlm:0", "foo"])
def test_bad_noise_values_are_one_line_usage_errors(tmp_path, value: str) -> None:
    result = invoke("train-charlm", "--lang", "de", "--corpus", str(tmp_path / "raw.txt"), "--noise", value)
    assert result.exit_code == 2
    error = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert error == [f"Error: Invalid value for '--noise': must be none, smlm[:P] or smlm-denoise[:P] with P the share of characters "
                     f"replaced, in (0, 0.5] (found \"{value}\")"]
