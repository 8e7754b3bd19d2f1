"""Data-parallel `train-charlm` and `train-bert` under torchrun with 2 gloo ranks on this CPU.

A 2-rank run with global batch B gives the weights of a 1-process run with batch B (dropout 0: each
rank draws its own dropout masks); a SIGKILL of one rank, then `--resume`, gives the weights of the
uninterrupted run; a checkpoint of 2 ranks resumes in 1 process.
"""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from flairsuite.files import checkpoint

NAMES = ["Anna", "Herwarth", "Nell", "Franz", "Else", "Walden", "Marc", "Kandinsky"]
PLACES = ["Berlin", "München", "Wien", "Paris", "Dresden", "Zürich"]
VERBS = ["schreibt", "besucht", "grüßt", "erwartet", "kennt"]


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> tuple[Path, Path]:
    """(raw text of template sentences, an empty corpora folder)."""
    folder = tmp_path_factory.mktemp("ddp")
    rng = random.Random(0)
    lines = [
        " ".join(f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(NAMES)} in {rng.choice(PLACES)} ." for _ in range(5))
        for _ in range(400)
    ]
    raw = folder / "raw.txt"
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "corpora").mkdir()
    return raw, folder / "corpora"


def charlm_args(text: tuple[Path, Path], out: Path, max_chars: int, *extra: str) -> list[str]:
    raw, corpora = text
    return [
        "train-charlm", "--lang", "de", "--direction", "forward", "--corpus", str(raw), "--corpora-dir", str(corpora),
        "--out", str(out), "--hidden-size", "16", "--embedding-size", "8", "--sequence-length", "20", "--ramp-chars", "0",
        "--batch-size", "4", "--learning-rate", "2", "--dropout", "0", "--validate-chars", "3000", "--checkpoint-minutes", "0",
        "--valid-chars", "2000", "--heldout-fraction", "0.1", "--max-chars", str(max_chars),
        "--precision", "float32",  # ranks equal one process to float rounding only in float32 (bfloat16 rounds per rank's batch)
        *extra,
    ]


def bert_args(text: tuple[Path, Path], out: Path, max_tokens: int, *extra: str) -> list[str]:
    raw, corpora = text
    return [
        "train-bert", "--lang", "de", "--corpus", str(raw), "--corpora-dir", str(corpora), "--out", str(out), "--name", "tiny",
        "--layers", "1", "--hidden-size", "32", "--heads", "2", "--sequence-length", "32", "--vocab-size", "150", "--batch-size", "8",
        "--learning-rate", "0.003", "--dropout", "0", "--attention", "wwa", "--validate-tokens", "5000", "--checkpoint-minutes", "0",
        "--max-tokens", str(max_tokens), "--precision", "float32", *extra,  # as train-charlm's: float rounding only in float32
    ]


def environment(tmp: Path) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "FLAIRSUITE_HOME": str(tmp / "home")}


def launch(args: list[str], tmp: Path, ranks: int) -> subprocess.Popen:
    """`python -m flairsuite ARGS` (1 rank) or `torchrun --standalone --nproc_per_node RANKS -m flairsuite ARGS`."""
    runner = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks)] if ranks > 1 else []
    command = [sys.executable, *runner, "-m", "flairsuite", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment(tmp), text=True, cwd=tmp)


def run(args: list[str], tmp: Path, ranks: int) -> str:
    process = launch(args, tmp, ranks)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output[-3000:]
    return output


def weights(path: Path) -> dict[str, torch.Tensor]:
    return {name: tensor.float() for name, tensor in checkpoint.load(path)["model"].items()}


def assert_same_weights(a: Path, b: Path, atol: float = 1e-5) -> None:
    first, second = weights(a), weights(b)
    assert first.keys() == second.keys()
    worst = max((first[name] - second[name]).abs().max().item() for name in first)
    assert worst < atol, f"weights differ by up to {worst}"


def workers(process: subprocess.Popen) -> list[int]:
    """The rank processes torchrun started (its children)."""
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    return [int(pid) for pid in children]


def kill_one_rank(process: subprocess.Popen, path: Path, progress_key: str, at_least: int) -> None:
    """SIGKILL the second rank once the checkpoint at `path` has `progress_key` >= `at_least`; torchrun then fails."""
    deadline = time.time() + 240
    while time.time() < deadline:
        assert process.poll() is None, process.stdout.read()[-3000:]
        try:
            if path.exists() and checkpoint.load(path)["progress"][progress_key] >= at_least:
                break
        except Exception:  # replaced while being read
            pass
        time.sleep(0.1)
    else:
        raise AssertionError("no checkpoint appeared")
    ranks = workers(process)
    assert len(ranks) == 2
    os.kill(sorted(ranks)[1], signal.SIGKILL)
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0, output[-2000:]


def test_char_lm_two_ranks_equal_one_process_and_survive_a_killed_rank(text, tmp_path) -> None:
    chars = 12000
    single = run(charlm_args(text, tmp_path / "one", chars), tmp_path, 1)
    double = run(charlm_args(text, tmp_path / "two", chars), tmp_path, 2)
    assert "data-parallel: 2 ranks, 2 of the 4 streams each" in double and "data-parallel" not in single
    one, two = (tmp_path / name / "de-forward" / "checkpoint.pt" for name in ("one", "two"))
    assert_same_weights(one, two)
    state = checkpoint.load(two)
    assert state["progress"]["chars"] == checkpoint.load(one)["progress"]["chars"] == chars
    assert [entry["hidden"][0].shape[1] for entry in state["ranks"]] == [2, 2]  # each rank's own streams
    curve = [round(point["valid_ppl"], 4) for point in state["progress"]["history"]]
    assert curve == [round(point["valid_ppl"], 4) for point in checkpoint.load(one)["progress"]["history"]] and len(curve) == 4
    # one rank killed mid-training, then --resume on 2 ranks: the uninterrupted run's weights
    killed = launch(charlm_args(text, tmp_path / "killed", chars), tmp_path, 2)
    kill_one_rank(killed, tmp_path / "killed" / "de-forward" / "checkpoint.pt", "steps_done", 40)
    assert checkpoint.load(tmp_path / "killed" / "de-forward" / "checkpoint.pt")["progress"]["chars"] < chars
    run(charlm_args(text, tmp_path / "killed", chars, "--resume"), tmp_path, 2)
    assert_same_weights(two, tmp_path / "killed" / "de-forward" / "checkpoint.pt", atol=1e-6)
    # a 2-rank checkpoint continued by one process: the streams' hidden states go back together
    run(charlm_args(text, tmp_path / "mixed", chars // 2), tmp_path, 2)
    run(charlm_args(text, tmp_path / "mixed", chars, "--resume"), tmp_path, 1)
    assert_same_weights(one, tmp_path / "mixed" / "de-forward" / "checkpoint.pt")


def test_char_lm_batch_must_split_over_the_ranks(text, tmp_path) -> None:
    process = launch(charlm_args(text, tmp_path / "odd", 4000, "--batch-size", "5"), tmp_path, 2)
    output, _ = process.communicate(timeout=300)
    assert process.returncode != 0
    assert "Error: --batch-size 5 (character streams) does not split evenly over 2 ranks" in output
    # the ranks end with the one-line error; the only traceback is torchrun's own report of the failed ranks
    assert not any('File "' in line and "/flairsuite/" in line for line in output.splitlines())


def test_bert_two_ranks_equal_one_process_and_survive_a_killed_rank(text, tmp_path) -> None:
    tokens = 20000  # crosses an epoch end whose last batch has fewer samples than ranks
    run(bert_args(text, tmp_path / "one", tokens), tmp_path, 1)
    double = run(bert_args(text, tmp_path / "two", tokens), tmp_path, 2)
    assert "data-parallel: 2 ranks sharing each batch of 8 samples" in double
    one, two = (tmp_path / name / "tiny" / "checkpoint.pt" for name in ("one", "two"))
    assert_same_weights(one, two)
    first, second = checkpoint.load(one)["progress"], checkpoint.load(two)["progress"]
    assert first["tokens"] == second["tokens"] >= tokens and first["epoch"] == second["epoch"] >= 1
    assert [round(p["valid_loss"], 4) for p in first["history"]] == [round(p["valid_loss"], 4) for p in second["history"]]
    killed = launch(bert_args(text, tmp_path / "killed", tokens), tmp_path, 2)
    kill_one_rank(killed, tmp_path / "killed" / "tiny" / "checkpoint.pt", "steps", 30)
    run(bert_args(text, tmp_path / "killed", tokens, "--resume"), tmp_path, 2)
    assert_same_weights(two, tmp_path / "killed" / "tiny" / "checkpoint.pt", atol=1e-6)
