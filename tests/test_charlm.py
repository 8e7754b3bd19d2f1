"""Character LMs on fixture text: preparation, training, Flair compatibility, kills and resumes."""

import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import flair
import numpy as np
import pytest
import torch
from click.testing import CliRunner
from flair.models import LanguageModel

from flairsuite.charlm.run import train_direction
from flairsuite.charlm.settings import Hyper
from flairsuite.charlm.trainer import CharLMTrainer, evaluate
from flairsuite.cli import cli
from flairsuite.errors import FlairsuiteError
from flairsuite.files import checkpoint
from flairsuite.rawtext.prepare import prepare
from flairsuite.rawtext.settings import PrepareConfig
from flairsuite.runtime.precision import native_bfloat16
from flairsuite.training import Budget

NAMES = ["Anna", "Herwarth", "Nell", "Franz", "Else", "Walden", "Marc", "Kandinsky"]
PLACES = ["Berlin", "München", "Wien", "Paris", "Dresden", "Zürich"]
VERBS = ["schreibt", "besucht", "grüßt", "erwartet", "kennt"]
SECRET = "Der Brief aus Weimar kam gestern erst an ."  # a Sturm dev sentence hidden in the raw text

TINY = Hyper(
    hidden_size=16, nlayers=1, embedding_size=8, sequence_length=20, sequence_length_start=20, ramp_chars=0, batch_size=4, learning_rate=2.0, clip=0.25,
    dropout=0.0, anneal_factor=0.5, patience=2, validate_chars=10**9, checkpoint_minutes=1000, valid_chars=2000,
)


def fixture_text(documents: int = 400, seed: int = 0) -> str:
    """Template sentences: learnable, varied, with one held-out sentence inside a document."""
    rng = random.Random(seed)
    lines = []
    for index in range(documents):
        words = [rng.choice(NAMES), rng.choice(VERBS), rng.choice(NAMES), "in", rng.choice(PLACES), "."]
        line = " ".join(words)
        if index == 7:
            line = f"{line} {SECRET} {line}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture
def corpus_root(tmp_path: Path) -> Path:
    """A corpora directory with a tiny Sturm set whose dev split holds SECRET."""
    root = tmp_path / "corpora"
    (root / "sturm").mkdir(parents=True)
    tagged = "\n".join(f"{token} O" for token in SECRET.split()) + "\n\n"
    for split in ("train", "dev", "test"):
        (root / "sturm" / f"{split}_sturm.conll").write_text(tagged if split == "dev" else "Hallo O\n\n", encoding="utf-8")
    return root


@pytest.fixture
def prepared(tmp_path: Path, corpus_root: Path):
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text() + "Ǆ selten\n", encoding="utf-8")
    config = PrepareConfig(language="de", corpus=(str(text),), heldout_fraction=0.1, unk_fraction=1e-4)
    return prepare(config, corpus_root, tmp_path / "prepared")


def decode(corpus, split: str) -> str:
    chars = ["\0"] + corpus.chars
    return "".join(chars[i] for i in corpus.array(split))


def test_prepare_cuts_heldout_sentences_and_encodes_all_text(prepared) -> None:
    meta = prepared.meta
    assert meta["sources"]["raw.txt"]["sentences_removed"] == 1
    assert meta["heldout_sentences"] == 1
    text = "".join(decode(prepared, split) for split in ("train", "valid", "test"))
    assert SECRET not in text and "Weimar" not in text
    assert text.count("\n") == 401  # every document kept, one delimiter each
    assert sum(meta["splits"].values()) == len(text)
    assert 0 < meta["splits"]["valid"] < meta["splits"]["train"] and meta["splits"]["test"] > 0
    for split in ("train", "valid", "test"):  # the arrays hold exactly the text files
        assert decode(prepared, split) == prepared.text_path(split).read_text(encoding="utf-8").replace("Ǆ", "\0")


def test_rare_characters_become_unk_and_preparation_is_cached(prepared, tmp_path, corpus_root) -> None:
    assert "Ǆ" not in prepared.chars and " " in prepared.chars and "\n" in prepared.chars
    assert prepared.meta["unk_characters"] == {"distinct": 1, "occurrences": 1}
    config = PrepareConfig(**{**prepared.meta["config"], "corpus": tuple(prepared.meta["config"]["corpus"])})
    again = prepare(config, corpus_root, tmp_path / "prepared")
    assert again.path == prepared.path
    assert np.array_equal(again.array("train"), prepared.array("train"))
    # the key follows content, not timestamps: a fresh copy of the same files (new mtimes) hits the cache ...
    for path in (tmp_path / "raw.txt", corpus_root / "sturm" / "dev_sturm.conll"):
        os.utime(path, (time.time() + 3600, time.time() + 3600))
    assert prepare(config, corpus_root, tmp_path / "prepared").path == prepared.path
    # ... and changed content does not
    with (tmp_path / "raw.txt").open("a", encoding="utf-8") as handle:
        handle.write("Anna schreibt Franz in Wien .\n")
    assert prepare(config, corpus_root, tmp_path / "prepared").path != prepared.path


def test_tiny_lm_learns_and_loads_in_plain_flair(prepared, tmp_path) -> None:
    summaries = {}
    for forward in (True, False):
        out = tmp_path / ("fw" if forward else "bw")
        hyper = Hyper(**{**TINY.__dict__, "validate_chars": 2000, "anneal_factor": 1.0, "learning_rate": 5.0})
        summaries[forward] = train_direction(prepared, out, hyper, forward, Budget(max_units=30000), False, False, 1)
    for forward, summary in summaries.items():
        untrained = CharLMTrainer(prepared, tmp_path / "untrained", TINY, forward, seed=1)
        start_ppl = math.exp(evaluate(untrained.model, untrained.valid_batches, TINY.sequence_length))
        assert summary["valid_ppl"] < 0.2 * start_ppl  # loss falls
        assert summary["valid_ppl"] == pytest.approx(min(p["valid_ppl"] for p in summary["history"]), rel=1e-3)
        assert summary["chars_seen"] >= 30000
    script = (
        "from flair.embeddings import FlairEmbeddings, StackedEmbeddings; from flair.data import Sentence;"
        f"e = StackedEmbeddings([FlairEmbeddings(r'{tmp_path / 'fw' / 'best-lm.pt'}'), FlairEmbeddings(r'{tmp_path / 'bw' / 'best-lm.pt'}')]);"
        "s = Sentence('Anna grüßt Franz in Wien .'); e.embed(s);"
        "import sys; assert 'flairsuite' not in sys.modules; print(e.embedding_length, [len(t.embedding) for t in s])"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "32 [32, 32, 32, 32, 32, 32]"


def test_a_cpu_time_budget_counts_the_process_cpu_time_and_survives_a_resume(prepared, tmp_path) -> None:
    hyper = Hyper(**{**TINY.__dict__, "validate_chars": 1000})
    budget = Budget(max_cpu_hours=1.5 / 3600)  # 1.5 CPU-seconds
    started = time.process_time()
    summary = train_direction(prepared, tmp_path / "lm", hyper, True, budget, False, False, 1)
    spent = time.process_time() - started
    assert 1.5 - 0.05 <= summary["cpu_hours"] * 3600 <= spent + 0.05 and summary["chars_seen"] > 0  # stored to 0.036 s
    # a CPU-time budget is a total, as the others: the same budget again stops at once; a larger one goes on from there
    trainer = CharLMTrainer(prepared, tmp_path / "lm", hyper, True, seed=1)
    trainer.warm_start(summary)
    assert trainer.progress.cpu_seconds == pytest.approx(summary["cpu_hours"] * 3600, abs=0.04)
    assert budget.spent(trainer.progress) and not Budget(max_cpu_hours=1.0).spent(trainer.progress)


def test_validation_points_fall_by_characters_also_after_resuming_an_old_checkpoint(prepared, tmp_path) -> None:
    hyper = Hyper(**{**TINY.__dict__, "validate_chars": 1000})
    trainer = CharLMTrainer(prepared, tmp_path / "lm", hyper, True, seed=1)
    progress = trainer.train(Budget(max_units=3000))
    points = [point["chars"] for point in progress.history]
    # 80 characters a step (4 streams x 20): the first step at or past each multiple of 1,000, and the end of the budget
    assert [chars // 1000 for chars in points] == [1, 2, 3] and all(chars % 1000 < 80 for chars in points)
    # a checkpoint of the earlier format (validation every so many minutes) resumes, validating by characters
    state = checkpoint.load(trainer.checkpoint_path)
    settings = {key: value for key, value in state["hyper"].items() if key != "validate_chars"}
    checkpoint.save(trainer.checkpoint_path, {**state, "hyper": {**settings, "validate_minutes": 10.0}})
    again = CharLMTrainer(prepared, tmp_path / "lm", hyper, True, seed=1)
    again.restore()
    assert again.progress.chars == progress.chars
    more = [point["chars"] // 1000 for point in again.train(Budget(max_units=5000)).history]
    assert more == [1, 2, 3, 4, 5]
    # any other difference of the settings is still refused
    other = CharLMTrainer(prepared, tmp_path / "lm", Hyper(**{**hyper.__dict__, "clip": 1.0}), True, seed=1)
    with pytest.raises(FlairsuiteError, match=r"\(hyper.clip differ\)"):
        other.restore()


@pytest.mark.skipif(not native_bfloat16(torch.device("cpu")), reason="the CPU has no bfloat16 units (AVX-512 BF16 or AMX)")
def test_bfloat16_training_learns_and_a_float32_checkpoint_resumes_under_it(prepared, tmp_path) -> None:
    """`precision="bfloat16"`: the LSTM runs in bfloat16 in training steps only, the weights stay float32, the LM still
    learns, and a float32 run's checkpoint continues under bfloat16 with its points marked."""
    hyper = Hyper(**{**TINY.__dict__, "validate_chars": 2000, "anneal_factor": 1.0, "learning_rate": 5.0})
    first = CharLMTrainer(prepared, tmp_path / "lm", hyper, True, seed=1)
    start_ppl = math.exp(evaluate(first.model, first.valid_batches, hyper.sequence_length))
    first.train(Budget(max_units=6000))
    again = CharLMTrainer(prepared, tmp_path / "lm", hyper, True, seed=1, precision="bfloat16")
    again.restore()
    dtypes = set()
    again.model.rnn.register_forward_hook(lambda module, args, out: dtypes.add((module.training, out[0].dtype)))
    progress = again.train(Budget(max_units=30000))
    assert dtypes == {(True, torch.bfloat16), (False, torch.float32)}  # training steps bfloat16, validation float32
    assert {p.dtype for p in again.model.parameters()} == {torch.float32}
    assert [point.get("precision") for point in progress.history] == [None] * 3 + ["bfloat16"] * 12
    assert math.exp(progress.best_valid_loss) < 0.2 * start_ppl


def test_precisions_the_lm_cannot_train_in_are_one_line_errors(prepared, tmp_path, monkeypatch) -> None:
    with pytest.raises(FlairsuiteError, match=r"^precision must be one of: float32, bfloat16 \(found 'half'\)$"):
        CharLMTrainer(prepared, tmp_path / "other", TINY, True, precision="half")
    monkeypatch.setattr(flair, "device", torch.device("cpu"))
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    with pytest.raises(FlairsuiteError, match=r"^language-model training: precision bfloat16 needs a device that computes bfloat16, and this CPU has no "):
        CharLMTrainer(prepared, tmp_path / "other", TINY, True, precision="bfloat16")
    assert not (tmp_path / "other").exists()
    text = tmp_path / "text.txt"
    text.write_text("Der Hund bellt.\n" * 50, encoding="utf-8")
    result = CliRunner().invoke(cli, [*train_args(text, tmp_path / "corpora", tmp_path / "lm", 1000), "--precision", "bfloat16"])
    assert result.exit_code == 1 and result.output.strip().splitlines() == [
        "Error: train-charlm --precision: precision bfloat16 needs a device that computes bfloat16, and this CPU has no bfloat16 units "
        "(AVX-512 BF16 or AMX): use --precision float32 (or auto)"], result.output
    assert not (tmp_path / "lm").exists()  # refused before the corpus is prepared


def test_float16_storage_halves_the_model_file_and_keeps_its_perplexity(prepared, tmp_path) -> None:
    """`storage="float16"`: best-lm.pt holds float16 weights (the checkpoint float32), about half the bytes; plain Flair
    loads it into a float32 model whose valid perplexity is the float32 model's to 1e-3, and the summary says so."""
    hyper = Hyper(**{**TINY.__dict__, "hidden_size": 64, "validate_chars": 2000, "anneal_factor": 1.0, "learning_rate": 5.0})
    sizes, ppls = {}, {}
    for storage in ("float32", "float16"):
        out = tmp_path / storage
        summary = train_direction(prepared, out, hyper, True, Budget(max_units=8000), False, False, 1, storage=storage)
        assert summary["model_dtype"] == storage
        stored = torch.load(out / "best-lm.pt", weights_only=False)["state_dict"]
        assert {value.dtype for value in stored.values()} == {getattr(torch, storage)}
        assert {value.dtype for value in checkpoint.load(out / "checkpoint.pt")["model"].values()} == {torch.float32}
        sizes[storage] = (out / "best-lm.pt").stat().st_size
        model = LanguageModel.load_language_model(out / "best-lm.pt")
        assert {p.dtype for p in model.parameters()} == {torch.float32}
        trainer = CharLMTrainer(prepared, tmp_path / "probe", hyper, True, seed=1)
        ppls[storage] = math.exp(evaluate(model, trainer.valid_batches, hyper.sequence_length))
    assert 0.45 < sizes["float16"] / sizes["float32"] < 0.6
    assert ppls["float16"] == pytest.approx(ppls["float32"], rel=1e-3)
    with pytest.raises(FlairsuiteError, match=r"^model dtype must be one of: float32, float16 \(found 'bfloat16'\)$"):
        CharLMTrainer(prepared, tmp_path / "other", hyper, True, storage="bfloat16")


def run_cli(*args: str) -> subprocess.Popen:
    code = "import sys; from flairsuite.cli import main; sys.argv = ['flairsuite', *sys.argv[1:]]; main()"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)


def train_args(text: Path, root: Path, out: Path, max_chars: int) -> list[str]:
    return [
        "train-charlm", "--lang", "de", "--direction", "forward", "--corpus", str(text), "--corpora-dir", str(root),
        "--out", str(out), "--hidden-size", "16", "--embedding-size", "8", "--sequence-length", "20", "--ramp-chars", "0",
        "--batch-size", "4", "--learning-rate", "2", "--dropout", "0", "--validate-chars", "1000000000",
        "--checkpoint-minutes", "0", "--valid-chars", "2000", "--heldout-fraction", "0.1", "--threads", "1",
        "--max-chars", str(max_chars),
    ]


def wait_for_steps(path: Path, steps: int, process: subprocess.Popen) -> None:
    deadline = time.time() + 120
    while time.time() < deadline:
        assert process.poll() is None, process.stdout.read()
        if path.exists():
            try:
                if checkpoint.load(path)["progress"]["steps_done"] >= steps:
                    return
            except Exception:  # the file was replaced while being read
                pass
        time.sleep(0.2)
    raise AssertionError("no checkpoint appeared")


def test_sigkill_then_resume_continues_exactly(tmp_path, corpus_root) -> None:
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    straight = run_cli(*train_args(text, corpus_root, tmp_path / "a", 24000))
    assert straight.wait(timeout=300) == 0, straight.stdout.read()

    killed = run_cli(*train_args(text, corpus_root, tmp_path / "b", 10**9))
    wait_for_steps(tmp_path / "b" / "de-forward" / "checkpoint.pt", 40, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert not (tmp_path / "b" / "de-forward" / "best-lm.pt").exists()
    resumed = run_cli(*train_args(text, corpus_root, tmp_path / "b", 24000), "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()

    a = json.loads((tmp_path / "a" / "de-forward" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "de-forward" / "summary.json").read_text())
    assert a["steps"] == b["steps"] >= 24000 // 80  # windows are cut short at the end of an epoch
    assert a["chars_seen"] == b["chars_seen"]
    assert b["valid_ppl"] == pytest.approx(a["valid_ppl"], rel=1e-5)
    weights_a = checkpoint.load(tmp_path / "a" / "de-forward" / "checkpoint.pt")["model"]
    weights_b = checkpoint.load(tmp_path / "b" / "de-forward" / "checkpoint.pt")["model"]
    assert all(torch.allclose(weights_a[key], weights_b[key], atol=1e-6) for key in weights_a)


def test_sigkill_during_checkpoint_write_keeps_the_previous_one(tmp_path, corpus_root) -> None:
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    out = tmp_path / "c"
    # the 5th checkpoint write dies half-way through, by SIGKILL
    code = (
        "import os, signal, sys, torch; from flairsuite.files import checkpoint; real = torch.save; calls = [0]\n"
        "def dying_save(obj, f):\n"
        "    calls[0] += 1\n"
        "    if calls[0] == 5:\n"
        "        open(f, 'wb').write(b'half a checkpoint'); os.kill(os.getpid(), signal.SIGKILL)\n"
        "    real(obj, f)\n"
        "checkpoint.torch.save = dying_save\n"
        "from flairsuite.cli import main; sys.argv = ['flairsuite', *sys.argv[1:]]; main()"
    )
    args = train_args(text, corpus_root, out, 24000)
    process = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert process.returncode == -signal.SIGKILL
    folder = out / "de-forward"
    assert checkpoint.load(folder / "checkpoint.pt")["progress"]["steps_done"] == 4
    assert any(p.name.endswith(".part") for p in folder.iterdir())  # the torn write is a temp file, never the real one
    resumed = run_cli(*args, "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()
    assert json.loads((folder / "summary.json").read_text())["chars_seen"] >= 24000


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "holds no text"),
        (b"Anna schreibt \xff\xfe Franz\n", r"raw.txt:1: not valid utf-8"),
        (b"Anna schreibt Franz in Wien .\n" * 3, "too small to hold out|smaller than one batch"),
    ],
)
def test_bad_corpus_is_one_line_error(tmp_path, corpus_root, content: bytes, message: str) -> None:
    text = tmp_path / "raw.txt"
    text.write_bytes(content)
    result = CliRunner().invoke(cli, train_args(text, corpus_root, tmp_path / "out", 1000))
    assert result.exit_code == 1
    assert re.search(message, error_line(result.output))


def error_line(output: str) -> str:
    """The one `Error:` line of a failed command (progress bars aside), checked to be the last and only one."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert "Traceback" not in output and lines[-1].startswith("Error: ")
    assert sum(line.startswith("Error: ") for line in lines) == 1
    return lines[-1]


def test_missing_corpus_unwritable_output_and_corrupt_checkpoint(tmp_path, corpus_root) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, train_args(tmp_path / "nope.txt", corpus_root, tmp_path / "out", 1000))
    assert missing.exit_code == 1 and "nope.txt: no such file or folder" in error_line(missing.output)

    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    unwritable = runner.invoke(cli, train_args(text, corpus_root, blocked / "models", 1000))
    assert unwritable.exit_code == 1 and error_line(unwritable.output).startswith("Error: cannot write")

    out = tmp_path / "out"
    (out / "de-forward").mkdir(parents=True)
    (out / "de-forward" / "checkpoint.pt").write_bytes(b"garbage")
    corrupt = runner.invoke(cli, [*train_args(text, corpus_root, out, 1000), "--resume"])
    assert corrupt.exit_code == 1 and "corrupt or unreadable checkpoint" in error_line(corrupt.output)
    refused = runner.invoke(cli, train_args(text, corpus_root, out, 1000))
    assert refused.exit_code == 1 and "--resume" in error_line(refused.output) and "--force" in refused.output


def test_a_folder_another_process_trains_is_one_line(tmp_path, corpus_root) -> None:
    from flairsuite.files.locks import claimed

    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    out = tmp_path / "out"
    with claimed(out / "de-forward") as mine:  # as a `train-charlm --resume` in another terminal would hold it
        assert mine
        busy = CliRunner().invoke(cli, train_args(text, corpus_root, out, 1000))
    assert busy.exit_code == 1 and f"{out / 'de-forward'} is being trained by another process" in error_line(busy.output)
    assert sorted(path.name for path in (out / "de-forward").iterdir()) == [".lock"]  # nothing trained, nothing written


def test_window_ramp_and_stream_windows() -> None:
    from flairsuite.charlm.batches import StreamBatches
    from flairsuite.charlm.trainer import window_length

    ramp = Hyper(**{**TINY.__dict__, "sequence_length": 250, "sequence_length_start": 25, "ramp_chars": 1000})
    assert [window_length(ramp, c) for c in (0, 500, 999, 1000, 10**6)] == [25, 138, 250, 250, 250]
    ids = np.arange(41, dtype=np.uint16)
    forward = StreamBatches(ids, batch_size=4, min_length=5)
    inputs, targets = forward.window(8, 5)
    assert inputs.shape == (2, 4)  # cut at the stream end (10 characters per stream)
    assert inputs[:, 1].tolist() == [18, 19] and targets[:, 1].tolist() == [19, 20]
    backward_inputs, backward_targets = StreamBatches(ids, 4, 5, forward=False).window(0, 3)
    assert backward_inputs[:, 0].tolist() == [40, 39, 38] and backward_targets[:, 0].tolist() == [39, 38, 37]
    assert forward.windows(3) == [0, 3, 6]


def test_resume_continues_a_released_model_without_checkpoint(tmp_path, corpus_root) -> None:
    """A released pair is committed without checkpoints: --resume continues its best-lm.pt at the data position of summary.json."""
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    first = run_cli(*train_args(text, corpus_root, tmp_path / "a", 12000))
    assert first.wait(timeout=300) == 0, first.stdout.read()
    straight = run_cli(*train_args(text, corpus_root, tmp_path / "s", 24000))
    assert straight.wait(timeout=300) == 0, straight.stdout.read()
    released = tmp_path / "r" / "de-forward"
    released.mkdir(parents=True)
    for name in ("best-lm.pt", "summary.json"):
        (released / name).write_bytes((tmp_path / "a" / "de-forward" / name).read_bytes())

    refused = run_cli(*train_args(text, corpus_root, tmp_path / "r", 24000))
    assert refused.wait(timeout=300) == 1
    assert refused.stdout.read().strip().splitlines()[-1].endswith("holds a trained model: pass --resume to continue it or --force to start over")
    other = run_cli(*train_args(text, corpus_root, tmp_path / "r", 24000), "--resume", "--hidden-size", "8")
    assert other.wait(timeout=300) == 1
    assert "cannot be continued with these settings (hidden_size differ)" in other.stdout.read()

    continued = run_cli(*train_args(text, corpus_root, tmp_path / "r", 24000), "--resume")
    assert continued.wait(timeout=300) == 0, continued.stdout.read()
    before = json.loads((tmp_path / "a" / "de-forward" / "summary.json").read_text())
    after = json.loads((released / "summary.json").read_text())
    expected = json.loads((tmp_path / "s" / "de-forward" / "summary.json").read_text())
    # the counters go on from the released run and the data position is where an uninterrupted run would be
    assert after["history"][: len(before["history"])] == before["history"] and len(after["history"]) > len(before["history"])
    assert (after["steps"], after["chars_seen"], after["epochs"]) == (expected["steps"], expected["chars_seen"], expected["epochs"])
    # the weights moved on from the released ones (hidden state and random generators start afresh, so not bit-equal)
    start = checkpoint.load(tmp_path / "a" / "de-forward" / "checkpoint.pt")["model"]
    end = checkpoint.load(released / "checkpoint.pt")["model"]
    assert any(not torch.equal(start[key], end[key]) for key in start)
    assert after["valid_ppl"] == pytest.approx(expected["valid_ppl"], rel=0.05)


def test_a_released_model_warm_starts_on_a_changed_corpus_with_a_warning_and_not_on_other_options(prepared, tmp_path, caplog) -> None:
    """The prepared text can change after a pair was released (the leave-out found more held-out sentences): --resume then
    replays its steps on today's text, says so, and keeps its counters; on the same text a mismatch means other options."""
    trainer = CharLMTrainer(prepared, tmp_path / "lm", TINY, True, seed=1)
    trainer.model_path.parent.mkdir(parents=True, exist_ok=True)
    trainer.model.save(trainer.model_path)
    steps = 200  # past the end of an epoch of the fixture's text, where the replayed count depends on the text's length
    epoch, offset, replayed = trainer.data_position(steps)
    assert epoch >= 1
    summary = {"chars_seen": replayed + 7, "steps": steps, "hours": 0.01, "valid_ppl": 9.0, "history": [],
               "corpus": {"splits": {"train": prepared.meta["splits"]["train"]}}}
    with pytest.raises(FlairsuiteError, match=r"do not fit this corpus and window schedule"):
        trainer.warm_start(summary)
    changed = {**summary, "corpus": {"splits": {"train": prepared.meta["splits"]["train"] + 50}}}
    again = CharLMTrainer(prepared, tmp_path / "lm", TINY, True, seed=1)
    with caplog.at_level("WARNING", logger="flairsuite"):
        again.warm_start(changed)
    assert "the prepared corpus has" in caplog.text and "not the exact one" in caplog.text
    # counted from now on as replayed on today's text, so that the summary this run writes continues again without error
    assert (again.progress.chars, again.progress.steps_done, again.progress.epoch, again.progress.offset) == (replayed, steps, epoch, offset)
    written = {**changed, "chars_seen": again.progress.chars, "corpus": {"splits": {"train": prepared.meta["splits"]["train"]}}}
    CharLMTrainer(prepared, tmp_path / "lm", TINY, True, seed=1).warm_start(written)


def test_damaged_summary_of_a_released_model_is_one_line(tmp_path) -> None:
    from flairsuite.charlm.run import read_summary
    from flairsuite.errors import FlairsuiteError

    broken, partial = tmp_path / "broken.json", tmp_path / "partial.json"
    broken.write_text("{not json", encoding="utf-8")
    partial.write_text('{"chars_seen": 10, "steps": 1}', encoding="utf-8")
    with pytest.raises(FlairsuiteError, match=r"broken.json:1: not valid JSON: .*; restore it or start over with --force$"):
        read_summary(broken)
    with pytest.raises(FlairsuiteError, match=r"partial.json: missing key 'hours'"):
        read_summary(partial)
    for text, message in [
        ('[1, 2]', "not a JSON object"),
        ('{"chars_seen": 10, "steps": "x", "hours": 1, "valid_ppl": 3.5}', 'steps must be a non-negative integer (found "x")'),
        ('{"chars_seen": 10, "steps": 1, "hours": 1, "valid_ppl": 0}', "valid_ppl must be a perplexity (a number of at least 1) (found 0)"),
        ('{"chars_seen": 10, "steps": 1, "hours": 1, "valid_ppl": 3.5, "history": [{"valid_ppl": 4}]}', "history must be a list"),
        ('{"chars_seen": 10, "steps": 1, "hours": -1, "valid_ppl": 3.5}', "hours must be a non-negative number (found -1)"),
        ('{"chars_seen": 10, "steps": 1, "hours": 1, "valid_ppl": 3.5, "cpu_hours": NaN}', "cpu_hours must be a non-negative number (found NaN)"),
    ]:
        partial.write_text(text, encoding="utf-8")
        with pytest.raises(FlairsuiteError) as info:
            read_summary(partial)
        assert str(info.value).startswith(f"{partial}: {message}") and str(info.value).endswith("start over with --force")


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("hidden_size", 0, "--hidden-size must be a positive integer (found 0)"),
        ("batch_size", 2.5, "--batch-size must be a positive integer (found 2.5)"),
        ("patience", -1, "--patience must be a non-negative integer (found -1)"),
        ("learning_rate", float("nan"), "--learning-rate must be a positive number (found NaN)"),
        ("clip", float("inf"), "--clip must be a positive number (found Infinity)"),
        ("dropout", 1.0, "--dropout must be a number in [0, 1) (found 1.0)"),
        ("anneal_factor", 0, "--anneal-factor must be a number in (0, 1] (1: no annealing) (found 0)"),
        ("checkpoint_minutes", -1, "--checkpoint-minutes must be a non-negative number (0: a checkpoint at every step) (found -1)"),
    ],
)
def test_hyper_parameters_check_themselves(name: str, value: object, message: str) -> None:
    from dataclasses import asdict

    from flairsuite.charlm.settings import Hyper
    from flairsuite.errors import FlairsuiteError

    with pytest.raises(FlairsuiteError) as info:
        Hyper(**{**asdict(TINY), name: value})
    assert str(info.value) == message


def test_bad_preparation_shares_are_one_line_errors(tmp_path) -> None:
    from flairsuite.errors import FlairsuiteError

    for options, message in [
        ({"heldout_fraction": 0.5}, "--heldout-fraction must be a share in (0, 0.5)"),
        ({"heldout_fraction": float("nan")}, "--heldout-fraction must be a share in (0, 0.5)"),
        ({"unk_fraction": 1.0}, "--unk-fraction must be a share in [0, 0.01]"),
        ({"unk_fraction": float("nan")}, "--unk-fraction must be a share in [0, 0.01]"),
    ]:
        with pytest.raises(FlairsuiteError, match=re.escape(message)):
            PrepareConfig(language="de", **options)


def registered_raw_text(root: Path, text: str) -> None:
    """`text` as the novels of the registry's German raw-text set `raw-de` below `root`, with one line each of its court
    decisions and news (common letters only)."""
    for relative, content in (("raw_de_eltec/eltec_deu.txt", text), ("raw_de_ler_courts/ler_courts_sentences.no_ler_devtest.txt",
                              "Anna kennt Berlin .\n"), ("raw_de_10kgnad/test.csv", "Kultur;'Franz kennt Wien .'\n")):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(content, encoding="utf-8")


def test_characters_of_the_labeled_corpora_outside_the_dictionary_are_reported(tmp_path, corpus_root) -> None:
    """train-charlm on the registered raw text (no --corpus) reports and records, per labeled split, the running characters
    the LM sees as <unk> and those it never saw."""
    text = tmp_path / "raw.txt"
    lines = fixture_text().splitlines()
    for index in range(0, 400, 50):  # Ǆ in 8 documents: in the training text (0.1 is held out), but below --unk-fraction
        lines[index] += " Ǆ"
    registered_raw_text(corpus_root, "\n".join(lines) + "\n")
    (corpus_root / "sturm" / "train_sturm.conll").write_text("Ǆ O\n€rna O\nAnna O\n\n€ O\n\n", encoding="utf-8")  # € never in the text
    args = train_args(text, corpus_root, tmp_path / "out", 2000)
    process = run_cli(*args[: args.index("--corpus")], *args[args.index("--corpus") + 2 :], "--unk-fraction", "0.001")
    output = process.stdout.read()
    assert process.wait(timeout=300) == 0, output
    summary = json.loads((tmp_path / "out" / "de-forward" / "summary.json").read_text())
    rows = {row["split"]: row for row in summary["labeled_coverage"]}
    assert set(rows) == {"train", "dev", "test"} and "text_coverage" not in summary
    assert "characters of the labeled corpora outside the LM's dictionary (<unk>) and never in its training text:" in output
    train = rows["train"]
    assert (train["characters"], train["unk"], train["unk_distinct"], train["unseen"]) == (10, 3, 2, 2)  # Ǆ once (seen), € twice (unseen)
    assert train["unk_examples"] == [["€", 2], ["Ǆ", 1]]
    assert rows["dev"]["characters"] == len(SECRET.replace(" ", ""))
    line = next(line for line in output.splitlines() if line.split()[:2] == ["sturm", "train"])
    assert line.split() == ["sturm", "train", "10", "30.000", "2", "20.000", "€×2", "Ǆ×1"]


def test_budget_defaults_to_the_presets_characters_and_options_win() -> None:
    from dataclasses import replace

    from flairsuite.charlm.settings import CharlmRun
    from flairsuite.charlm.train_charlm import budget_of

    run = CharlmRun(lang="de", out_dir=None, resume=False, force=False, threads=None, corpora_dir=None)
    assert run.preset == "cpu" and budget_of(run) == Budget(None, 82_000_000)  # the released pair's budget
    assert budget_of(replace(run, preset="paper")) == Budget(1.0, None)  # no budget in the preset: one hour
    assert budget_of(replace(run, max_hours=0.5)) == Budget(0.5, None)
    assert budget_of(replace(run, max_chars=1000)) == Budget(None, 1000)
    with pytest.raises(FlairsuiteError, match=r"^--max-chars must be a positive integer \(found 0\)$"):
        budget_of(replace(run, max_chars=0))
    with pytest.raises(FlairsuiteError, match=r"^--max-hours must be a positive number \(found NaN\)$"):
        budget_of(replace(run, max_hours=float("nan")))
    # en, da, zh: one CPU-hour a direction (the process's CPU time, however busy the machine)
    for language in ("en", "da", "zh"):
        assert budget_of(replace(run, lang=language)) == Budget(None, None, 1.0)
        assert budget_of(replace(run, lang=language, max_chars=1000)) == Budget(None, 1000)
        assert budget_of(replace(run, lang=language, max_cpu_hours=2.0)) == Budget(None, None, 2.0)  # a larger one to go on


def test_force_removes_the_earlier_runs_model_summary_and_curve_first(tmp_path) -> None:
    """A --force run that is killed before its end must not leave its model beside the earlier run's summary.json
    (tagging runs record that summary as the LM's training): the old files go before the new run starts."""
    from types import SimpleNamespace

    from flairsuite.charlm.run import lm_folder
    from flairsuite.pretraining import start_or_resume

    out = tmp_path / "de-forward"
    out.mkdir()
    for name in ("best-lm.pt", "summary.json", "learning-curve.png", "keep.txt"):
        (out / name).write_text("old", encoding="utf-8")
    ranks = SimpleNamespace(barrier=lambda: None, main=True)
    started = []
    trainer = SimpleNamespace(out=out, checkpoint_path=out / "checkpoint.pt", model_path=out / "best-lm.pt", ranks=ranks,
                              start=lambda: started.append(True))
    with pytest.raises(FlairsuiteError, match="holds a trained model: pass --resume to continue it or --force to start over"):
        start_or_resume(trainer, lm_folder(trainer), resume=False, force=False)
    assert (out / "summary.json").exists() and not started
    (out / "checkpoint.pt").write_text("old", encoding="utf-8")
    start_or_resume(trainer, lm_folder(trainer), resume=False, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"] and started == [True]


def test_a_continued_models_summary_follows_each_new_best_model(prepared, tmp_path) -> None:
    """--resume of a finished model (no checkpoint) rewrites best-lm.pt at each better validation: its summary.json
    follows it there (in_progress), so a kill never leaves the new weights beside the old run's counters."""
    from flairsuite.charlm.run import lm_folder, read_summary
    from flairsuite.pretraining import start_or_resume

    out = tmp_path / "lm"
    hyper = Hyper(**{**TINY.__dict__, "validate_chars": 1000, "anneal_factor": 1.0, "learning_rate": 5.0})
    first = train_direction(prepared, out, hyper, True, Budget(max_units=3000), False, False, 1)
    (out / "checkpoint.pt").unlink()  # a released model: best-lm.pt and summary.json only
    continued = CharLMTrainer(prepared, out, hyper, True, seed=1)
    start_or_resume(continued, lm_folder(continued), resume=True, force=False)
    progress = continued.train(Budget(max_units=6000))  # stopped before train_direction writes the final summary
    interim = read_summary(out / "summary.json")
    assert interim["in_progress"] is True and "test_ppl" not in interim
    assert first["chars_seen"] < interim["chars_seen"] <= progress.chars  # the counters of the last better validation
    assert interim["valid_ppl"] == pytest.approx(math.exp(progress.best_valid_loss), rel=1e-3)
    assert interim["valid_ppl"] < first["valid_ppl"]
    again = CharLMTrainer(prepared, out, hyper, True, seed=1)
    again.warm_start(interim)  # the counters replay on this corpus: a later --resume continues from them
    assert again.progress.chars == interim["chars_seen"]
