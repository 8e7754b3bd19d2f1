"""`flairsuite train-bert` on fixture text: learning, SIGKILL and exact resume, loading in plain transformers, one-line errors."""

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

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from flairsuite.cli import cli
from flairsuite.files import checkpoint

WORDS = [
    "Donaudampfschifffahrt", "Kapitän", "Briefwechsel", "Anna", "schreibt", "Berlin", "München", "Sturmzeitschrift",
    "geht", "heute", "Verlagshaus", "nach", "Walden", "Übersetzung",
]


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> tuple[Path, Path]:
    """(raw text with learnable repetition, a corpora folder with a tiny Sturm set)."""
    folder = tmp_path_factory.mktemp("raw")
    rng = random.Random(0)
    lines = []
    for _ in range(1500):
        subject, place = rng.choice(WORDS[3:7]), rng.choice(["Berlin", "München"])
        lines.append(f"{subject} schreibt heute nach {place} . {rng.choice(WORDS)} geht nach {place} .")
    text = folder / "raw.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sturm = folder / "corpora" / "sturm"
    sturm.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (sturm / f"{split}_sturm.conll").write_text("Hallo O\n\n", encoding="utf-8")
    return text, folder / "corpora"


def bert_args(raw: tuple[Path, Path], out: Path, max_tokens: int, *extra: str) -> list[str]:
    text, corpora = raw
    return [
        "train-bert", "--lang", "de", "--corpus", str(text), "--corpora-dir", str(corpora), "--out", str(out), "--name", "tiny",
        "--layers", "1", "--hidden-size", "32", "--heads", "2", "--sequence-length", "32", "--vocab-size", "150", "--batch-size", "8",
        "--learning-rate", "0.003", "--threads", "1", "--max-tokens", str(max_tokens),
        "--precision", "float32",  # the float32 path on every host; bfloat16 and auto have tests of their own (last value wins)
        *extra,
    ]


def run_cli(*args: str) -> subprocess.Popen:
    code = "import sys; from flairsuite.cli import main; sys.argv = ['flairsuite', *sys.argv[1:]]; main()"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)


def error_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert "Traceback" not in output and lines[-1].startswith("Error: ")
    return lines[-1]


def loads_in_plain_transformers(folder: Path, tmp_path: Path, remote: bool) -> list[float]:
    """The first hidden values of the model loaded by plain transformers in a fresh process (flairsuite never imported)."""
    script = (
        "import sys, torch; from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer;"
        f"folder = r'{folder}'; kwargs = {{'trust_remote_code': True}} if {remote} else {{}};"
        "tokenizer = AutoTokenizer.from_pretrained(folder); model = AutoModel.from_pretrained(folder, **kwargs).eval();"
        "AutoModelForMaskedLM.from_pretrained(folder, **kwargs);"
        "batch = tokenizer(['Anna schreibt heute nach München .'], return_tensors='pt');"
        "hidden = model(**batch).last_hidden_state; assert 'flairsuite' not in sys.modules, 'flairsuite was imported';"
        "print(type(model).__name__, tokenizer.model_max_length, hidden[0, :, 0].tolist())"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    name, max_length, values = done.stdout.strip().splitlines()[-1].split(" ", 2)
    assert max_length == "32"
    return [name, *json.loads(values)]


@pytest.mark.parametrize("positions, attention", [("absolute", "full"), ("relative", "wwa")])
def test_tiny_bert_learns_and_loads_in_plain_transformers(raw, tmp_path, positions: str, attention: str) -> None:
    args = bert_args(raw, tmp_path, 40000, "--positions", positions, "--attention", attention, "--validate-tokens", "5000")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "tiny"
    summary = json.loads((folder / "summary.json").read_text())
    history = summary["history"]
    assert len(history) >= 3 and summary["tokens_seen"] >= 40000
    assert history[-1]["valid_loss"] < history[0]["valid_loss"] < math.log(150)  # the loss falls from chance level
    assert summary["valid_loss"] < 0.5 * math.log(150)
    # validation points every 5,000 tokens, at the same places on any machine
    assert [point["tokens"] // 5000 for point in history[:-1]] == list(range(1, len(history)))
    # well above chance (1/150); the test split is small, so its accuracy moves in steps (exactly 0.2 on an Intel Xeon with AMX)
    assert summary["valid_accuracy"] > 0.2 and summary["test_accuracy"] > 0.1
    assert (folder / "learning-curve.png").stat().st_size > 1000 and (folder / "model.safetensors").is_file()
    config = json.loads((folder / "config.json").read_text())
    assert ("auto_map" in config) == (positions == "relative")
    name, *values = loads_in_plain_transformers(folder, tmp_path, remote=positions == "relative")
    assert name == ("BertModel" if positions == "absolute" else "FlairsuiteBertModel")
    # the same numbers from the suite's own loading path
    from transformers import AutoModel, AutoTokenizer

    import flairsuite.bert  # noqa: F401  (registers the model type)

    model = AutoModel.from_pretrained(folder).eval()
    batch = AutoTokenizer.from_pretrained(folder)(["Anna schreibt heute nach München ."], return_tensors="pt")
    with torch.no_grad():
        ours = model(**batch).last_hidden_state[0, :, 0]
    assert torch.allclose(ours, torch.tensor(values), atol=1e-5)


def wait_for_checkpoint(path: Path, steps: int, process: subprocess.Popen) -> None:
    deadline = time.time() + 180
    while time.time() < deadline:
        assert process.poll() is None, process.stdout.read()
        if path.exists():
            try:
                if checkpoint.load(path)["progress"]["steps"] >= steps:
                    return
            except Exception:  # replaced while being read
                pass
        time.sleep(0.2)
    raise AssertionError("no checkpoint appeared")


def test_sigkill_then_resume_gives_the_same_weights(raw, tmp_path) -> None:
    tokens = 30000
    common = ("--attention", "wwa", "--checkpoint-minutes", "0", "--validate-tokens", "1000000000")
    straight = run_cli(*bert_args(raw, tmp_path / "a", tokens, *common))
    assert straight.wait(timeout=300) == 0, straight.stdout.read()
    killed = run_cli(*bert_args(raw, tmp_path / "b", tokens, *common))
    wait_for_checkpoint(tmp_path / "b" / "tiny" / "checkpoint.pt", 40, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert checkpoint.load(tmp_path / "b" / "tiny" / "checkpoint.pt")["progress"]["tokens"] < tokens
    refused = CliRunner().invoke(cli, bert_args(raw, tmp_path / "b", tokens, *common))
    assert refused.exit_code == 1 and "--resume" in error_line(refused.output)
    resumed = run_cli(*bert_args(raw, tmp_path / "b", tokens, *common), "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stdout.read()
    a = json.loads((tmp_path / "a" / "tiny" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "tiny" / "summary.json").read_text())
    assert a["steps"] == b["steps"] and a["tokens_seen"] == b["tokens_seen"]
    weights_a = load_file(tmp_path / "a" / "tiny" / "model.safetensors")
    weights_b = load_file(tmp_path / "b" / "tiny" / "model.safetensors")
    assert weights_a.keys() == weights_b.keys()
    assert all(torch.allclose(weights_a[key].float(), weights_b[key].float(), atol=1e-6) for key in weights_a)
    assert b["valid_loss"] == pytest.approx(a["valid_loss"], rel=1e-5)


@pytest.mark.parametrize(
    "extra, message, exit_code",
    [
        (("--attention", "wwa", "--positions", "absolute"), "--attention wwa needs --positions relative", 1),  # settings together
        (("--hidden-size", "30", "--heads", "4"), "not divisible", 1),
        (("--max-tokens", "0"), "--max-tokens must be a positive integer (found 0)", 1),  # the budget, checked by the command
        (("--max-hours", "nan"), "--max-hours must be a positive number (found NaN)", 1),
        # options generated from BertSettings' fields: usage errors in the field rule's words, as click parses them
        (("--vocab-size", "3"), "Invalid value for '--vocab-size': must be an integer from 6 to 65536 (found 3)", 2),
        (("--learning-rate", "inf"), "Invalid value for '--learning-rate': must be a positive number (found Infinity)", 2),
        (("--dropout", "1"), "Invalid value for '--dropout': must be a number in [0, 1) (found 1.0)", 2),
        (("--checkpoint-minutes", "-1"), "Invalid value for '--checkpoint-minutes': must be a non-negative number (found -1.0)", 2),
    ],
)
def test_bad_options_are_one_line_errors(raw, tmp_path, extra: tuple[str, ...], message: str, exit_code: int) -> None:
    result = CliRunner().invoke(cli, [*bert_args(raw, tmp_path, 1000), *extra])
    assert result.exit_code == exit_code
    assert message in error_line(result.output)


def test_bad_corpora_and_checkpoints_are_one_line_errors(raw, tmp_path) -> None:
    runner = CliRunner()
    _, corpora = raw
    missing = runner.invoke(cli, bert_args((tmp_path / "nope.txt", corpora), tmp_path, 1000))
    assert missing.exit_code == 1 and "nope.txt: no such file or folder" in error_line(missing.output)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    result = runner.invoke(cli, bert_args((empty, corpora), tmp_path, 1000))
    assert result.exit_code == 1 and "holds no text" in error_line(result.output)
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "checkpoint.pt").write_bytes(b"garbage")
    corrupt = runner.invoke(cli, [*bert_args(raw, tmp_path, 1000), "--resume"])
    assert corrupt.exit_code == 1 and re.search("corrupt or unreadable checkpoint", error_line(corrupt.output))


def test_a_model_folder_another_process_trains_is_one_line(raw, tmp_path) -> None:
    from flairsuite.files.locks import claimed

    with claimed(tmp_path / "tiny") as mine:  # as a `train-bert --resume` in another terminal would hold it
        assert mine
        busy = CliRunner().invoke(cli, bert_args(raw, tmp_path, 1000))
    assert busy.exit_code == 1 and f"{tmp_path / 'tiny'} is being trained by another process" in error_line(busy.output)
    assert sorted(path.name for path in (tmp_path / "tiny").iterdir()) == [".lock"]


def test_force_empties_the_model_folder_before_the_new_run(tmp_path) -> None:
    """save_model renames file by file: a --force run killed at its first save must not mix its files with an older
    model's (a mix with the old config.json could load), so --force removes the old files before training."""
    from types import SimpleNamespace

    from flairsuite.bert.train_bert import bert_folder
    from flairsuite.errors import FlairsuiteError
    from flairsuite.pretraining import start_or_resume

    out = tmp_path / "de-cpu"
    out.mkdir()
    for name in ("config.json", "model.safetensors", "vocab.txt", "summary.json", "checkpoint.pt"):
        (out / name).write_text("old", encoding="utf-8")
    (out / ".save-123").mkdir()  # a hidden temporary folder is not the old model's: left to its owner
    started = []
    trainer = SimpleNamespace(out=out, checkpoint_path=out / "checkpoint.pt", ranks=SimpleNamespace(barrier=lambda: None, main=True),
                              start=lambda: started.append(True))
    with pytest.raises(FlairsuiteError, match="holds the checkpoint of an earlier run"):
        start_or_resume(trainer, bert_folder(trainer), resume=False, force=False)
    (out / "checkpoint.pt").unlink()
    with pytest.raises(FlairsuiteError, match="holds a trained model: pass --force to replace it"):
        start_or_resume(trainer, bert_folder(trainer), resume=False, force=False)
    with pytest.raises(FlairsuiteError, match="holds a trained model and no checkpoint to continue it from: pass --force to start over"):
        start_or_resume(trainer, bert_folder(trainer), resume=True, force=False)
    assert not started
    start_or_resume(trainer, bert_folder(trainer), resume=False, force=True)
    assert [p.name for p in out.iterdir()] == [".save-123"] and started == [True]


NO_BFLOAT16 = "the CPU has no bfloat16 units (AVX-512 BF16 or AMX)"


@pytest.mark.skipif(not __import__("flairsuite.runtime.precision").runtime.precision.native_bfloat16(torch.device("cpu")), reason=NO_BFLOAT16)
def test_bfloat16_pretraining_learns_and_says_so(raw, tmp_path) -> None:
    """Under autocast the steps' arithmetic differs from float32, the model still learns, and both the summary and each
    validation point say the precision (float32 points stay as they were)."""
    summaries = {}
    for precision in ("float32", "bfloat16"):
        args = bert_args(raw, tmp_path / precision, 20000, "--validate-tokens", "5000", "--precision", precision)
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert ("precision: bfloat16 (training steps under autocast" in result.output) == (precision == "bfloat16")
        summaries[precision] = json.loads((tmp_path / precision / "tiny" / "summary.json").read_text())
        folder = tmp_path / precision / "tiny"
        assert {tensor.dtype for tensor in load_file(folder / "model.safetensors").values() if tensor.is_floating_point()} == {torch.float32}
    for precision, summary in summaries.items():
        assert summary["precision"] == precision
        assert [point.get("precision") for point in summary["history"]] == [None if precision == "float32" else precision] * len(summary["history"])
        assert summary["valid_loss"] < 0.6 * math.log(150), (precision, summary["history"])
    assert summaries["float32"]["history"][0]["train_loss"] != summaries["bfloat16"]["history"][0]["train_loss"]
    from flairsuite.embeddings.bert import summarize  # what a tagging run records of its BERT, for the tables' hours cell

    assert summarize(summaries["bfloat16"])["precision"] == "bfloat16" and summarize(summaries["float32"])["precision"] == "float32"


def test_bfloat16_on_a_cpu_without_it_is_one_line_and_auto_falls_back(raw, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    refused = CliRunner().invoke(cli, [*bert_args(raw, tmp_path, 2000), "--precision", "bfloat16"])
    assert refused.exit_code == 1
    assert error_line(refused.output) == (
        "Error: train-bert --precision: precision bfloat16 needs a device that computes bfloat16, and this CPU has no bfloat16 "
        "units (AVX-512 BF16 or AMX): use --precision float32 (or auto)"
    )
    assert not (tmp_path / "tiny" / "checkpoint.pt").exists()
    option = next(param for param in cli.commands["train-bert"].params if param.name == "precision")
    assert option.default == "auto"
    automatic = CliRunner().invoke(cli, [*bert_args(raw, tmp_path, 2000), "--precision", "auto"])
    assert automatic.exit_code == 0, automatic.output
    summary = json.loads((tmp_path / "tiny" / "summary.json").read_text())
    assert summary["precision"] == "float32" and all("precision" not in point for point in summary["history"])


@pytest.mark.skipif(not __import__("flairsuite.runtime.precision").runtime.precision.native_bfloat16(torch.device("cpu")), reason=NO_BFLOAT16)
def test_a_resume_in_another_precision_says_so_and_the_summary_says_mixed(raw, tmp_path) -> None:
    common = ("--validate-tokens", "5000", "--checkpoint-minutes", "0")
    first = CliRunner().invoke(cli, bert_args(raw, tmp_path, 6000, *common))  # float32; the checkpoint stays beside the model
    assert first.exit_code == 0, first.output
    resumed = CliRunner().invoke(cli, bert_args(raw, tmp_path, 12000, *common, "--resume", "--precision", "bfloat16"))
    assert resumed.exit_code == 0, resumed.output
    assert ("precision: resumed a checkpoint trained in float32 in bfloat16; the run is not bit-exact with an uninterrupted one"
            in resumed.output)
    summary = json.loads((tmp_path / "tiny" / "summary.json").read_text())
    assert summary["precision"] == "mixed"
    marks = [point.get("precision") for point in summary["history"]]  # the first run's points, then the resumed run's
    switch = marks.index("bfloat16")
    assert switch > 0 and set(marks[:switch]) == {None} and set(marks[switch:]) == {"bfloat16"}
