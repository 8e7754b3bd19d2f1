"""`flairsuite tag EXP --ray local` on a real local Ray instance (2 CPUs, worker processes, not local mode).

The runs land exactly as `flairsuite tag` in one process writes them (same metrics and predictions),
every (split, embedding) is computed once, and a worker killed mid-run is retried by Ray from the
run's epoch checkpoint to the uninterrupted result.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_tag_grid import STACKS, experiment_yaml, tag, write_sturm

pytest.importorskip("ray", reason="the `ray` extra (installed by `test`)")

VOLATILE = ("seconds", "memory")


def metrics_of(home: Path, experiment: str) -> dict[str, dict]:
    """run id -> metrics.json without the timing fields, for every run below results/EXPERIMENT."""
    out = home / "results" / experiment
    found = {}
    for path in sorted(out.rglob("metrics.json")):
        metrics = json.loads(path.read_text(encoding="utf-8"))
        found[metrics["run"]] = {key: value for key, value in metrics.items() if key not in VOLATILE}
    return found


def tag_command(experiment: Path, corpora: Path, *extra: str) -> list[str]:
    """`flairsuite tag` on one thread (a Ray task's request below): the same arithmetic in both."""
    return [sys.executable, "-m", "flairsuite", "tag", str(experiment), "--corpora-dir", str(corpora), "--threads", "1", *extra]


def ray_command(experiment: Path, corpora: Path, *extra: str) -> list[str]:
    return tag_command(experiment, corpora, "--ray", "local", *extra)


def run_tag(command: list[str], home: Path) -> str:
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=home.parent)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return done.stdout


def ray_workers_training() -> list[int]:
    """Processes whose title Ray set to the run task (`ray::run_task`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if title.startswith("ray::run_task"):
                pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="module")
def lm_home(tmp_path_factory) -> Path:
    from conftest import train_tiny_embeddings

    return train_tiny_embeddings(tmp_path_factory.mktemp("lms"), "both")


def test_ray_grid_writes_what_one_process_writes(lm_home, tmp_path) -> None:
    corpora = write_sturm(tmp_path / "corpora")
    experiment = experiment_yaml(tmp_path / "grid.yaml", "raygrid", STACKS, ["map"], [1, 2], "{max_epochs: 2, mini_batch_size: 4}")
    local_home, ray_home = tmp_path / "local" / "home", tmp_path / "ray" / "home"
    shutil.copytree(lm_home, local_home)
    shutil.copytree(lm_home, ray_home)
    run_tag(tag_command(experiment, corpora), local_home)
    output = run_tag(ray_command(experiment, corpora), ray_home)
    # 4 runs; the 2 stacks read 2 LMs (forward, backward) on 3 splits: 6 (split, embedding) pairs, each computed once
    assert "raygrid: 4 runs, 0 finished before, 4 to train" in output
    assert "trained 4 runs on Ray" in output and "embeddings computed for 6 (corpus split, embedding) pairs of 6" in output
    assert len(list((ray_home / "cache" / "embeddings").rglob("*.npy"))) == 6
    assert metrics_of(ray_home, "raygrid") == metrics_of(local_home, "raygrid") and len(metrics_of(ray_home, "raygrid")) == 8
    predictions = list((local_home / "results" / "raygrid").rglob("predictions.tsv"))
    assert len(predictions) == 4
    for path in predictions:
        twin = ray_home / path.relative_to(local_home)
        assert twin.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert not list((ray_home / "results").rglob("checkpoint.pt"))
    # finished runs are skipped: nothing to train, Ray not even started
    again = run_tag(ray_command(experiment, corpora), ray_home)
    assert "raygrid: 4 runs, 4 finished before, 0 to train" in again and "nothing to train: Ray not started" in again


FLAIR_LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")  # Flair's log format: "2026-12-04 14:24:45,271 SequenceTagger predicts: ..."


def test_ray_workers_log_to_the_drivers_stderr_and_stdout_is_the_report(lm_home, tmp_path) -> None:
    corpora = write_sturm(tmp_path / "corpora")
    experiment = experiment_yaml(tmp_path / "grid.yaml", "raylogs", {"fwd": STACKS["fwd"]}, ["map"], [1], "{max_epochs: 1}", "[false]")
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(ray_command(experiment, corpora), env=env, capture_output=True, text=True, timeout=600, cwd=home.parent)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "trained 1 runs on Ray" in done.stdout
    assert not [line for line in done.stdout.splitlines() if FLAIR_LOG_LINE.search(line) or "pid=" in line], done.stdout
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stderr)  # Ray colours its prefix; it may follow the driver's progress bar on a line
    # the run's Flair lines, sent back with its result (not left to Ray's best-effort forwarding), each after the run's id
    worker_lines = [line for line in plain.splitlines() if "(sturm/fwd/map/seed-1) " in line and FLAIR_LOG_LINE.search(line)]
    assert any("predicts: Dictionary with" in line for line in worker_lines), done.stderr[-3000:]


def test_killed_ray_worker_is_retried_from_its_checkpoint(lm_home, tmp_path) -> None:
    corpora = write_sturm(tmp_path / "corpora", repeat=8)  # epochs long enough to kill between
    experiment = experiment_yaml(tmp_path / "long.yaml", "long", {"both": STACKS["both"]}, ["bilstm-crf"], [1], "{max_epochs: 4}", "[false]")
    clean_home, killed_home = tmp_path / "clean" / "home", tmp_path / "killed" / "home"
    shutil.copytree(lm_home, clean_home)
    shutil.copytree(lm_home, killed_home)
    run_tag(tag_command(experiment, corpora), clean_home)
    run_dir = killed_home / "results" / "long" / "sturm" / "both" / "bilstm-crf" / "seed-1"
    env = {**os.environ, "FLAIRSUITE_HOME": str(killed_home), "OMP_NUM_THREADS": "1"}
    with (tmp_path / "driver.txt").open("w") as log:
        driver = subprocess.Popen(ray_command(experiment, corpora), env=env, stdout=log, stderr=subprocess.STDOUT, cwd=killed_home.parent)
        deadline = time.monotonic() + 300
        while not (run_dir / "checkpoint.pt").exists() and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = ray_workers_training()
        assert len(workers) == 1, (tmp_path / "driver.txt").read_text()[-3000:]
        os.kill(workers[0], signal.SIGKILL)
        assert driver.wait(timeout=600) == 0, (tmp_path / "driver.txt").read_text()[-4000:]
    output = (tmp_path / "driver.txt").read_text()
    assert "trained 1 runs on Ray" in output
    resumed = [line for line in output.splitlines() if "sturm/both/bilstm-crf/seed-1: continued from its checkpoint after epoch" in line]
    assert len(resumed) == 1 and 1 <= int(resumed[0].rsplit(" ", 1)[1]) < 4, output[-3000:]
    assert metrics_of(killed_home, "long") == metrics_of(clean_home, "long") and len(metrics_of(clean_home, "long")) == 1
    assert not (run_dir / "checkpoint.pt").exists()


def test_ray_needs_a_reachable_cluster(lm_home, tmp_path) -> None:
    corpora = write_sturm(tmp_path / "corpora")
    experiment = experiment_yaml(tmp_path / "grid.yaml", "nocluster", {"fwd": STACKS["fwd"]}, ["map"], [1], "{max_epochs: 1}", "[false]")
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    result = tag(home, corpora, experiment, "--ray", "127.0.0.1:1")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and lines[-1].startswith("Error: --ray 127.0.0.1:1: cannot start or join Ray"), result.output
    assert "Traceback" not in result.output
    gpus = tag(home, corpora, experiment, "--gpus", "1")
    assert gpus.exit_code == 1 and gpus.output.strip() == "Error: --gpus is the request of each Ray task: use it with --ray"


def test_ray_local_refuses_bfloat16_this_cpu_cannot_train_before_starting(lm_home, tmp_path, monkeypatch) -> None:
    import flair
    import torch

    monkeypatch.setattr(flair, "device", torch.device("cpu"))
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    monkeypatch.setattr("flairsuite.experiments.ray_runner.start_ray", lambda address: pytest.fail("Ray was started"))
    corpora = write_sturm(tmp_path / "corpora")
    experiment = experiment_yaml(tmp_path / "grid.yaml", "half", {"fwd": STACKS["fwd"]}, ["map"], [1], "{max_epochs: 1, precision: bfloat16}", "[false]")
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    result = tag(home, corpora, experiment, "--ray", "local")
    assert result.exit_code == 1 and result.output.strip().splitlines()[-1] == (
        f"Error: {experiment} (run sturm/fwd/map/seed-1): precision bfloat16 needs a device that computes bfloat16, and this CPU has no "
        "bfloat16 units (AVX-512 BF16 or AMX): use precision: float32"), result.output
    assert not (home / "cache" / "embeddings").exists()
