"""torch's default threads without `--threads` (flairsuite.runtime.threads): the cores other processes leave free,
`--threads` and the environment winning over the rule, OpenMP's wait policy passive unless set, and nothing paid by a
command that never loads torch."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flairsuite.runtime import threads
from flairsuite.runtime.threads import BeforeTorch, Reading, busy_cores, choose_threads, cpu_quota, cpu_ticks, physical_cores


@pytest.mark.parametrize("cores, busy, expected", [
    (2, 0.0, 2), (2, 0.3, 2), (2, 0.35, 1), (2, 1.0, 1), (2, 2.0, 1), (2, 6.3, 1), (1, 0.0, 1), (2, -0.1, 2),
    (8, 0.2, 8), (8, 2.6, 5), (16, 1.0, 15), (16, 15.9, 1),
])
def test_the_rule_counts_the_cores_other_processes_leave_free(cores, busy, expected):
    assert choose_threads(cores, busy) == expected


@pytest.mark.parametrize("cores, busy, workers, expected", [(2, 2.0, 2, 2), (2, 0.0, 2, 2), (1, 0.0, 2, 1), (4, 3.5, 2, 2), (8, 0.0, 2, 8)])
def test_independent_workers_keep_a_thread_each(cores, busy, workers, expected):
    assert choose_threads(cores, busy, workers) == expected


def test_busy_cores_are_the_cpus_share_less_this_process():
    start, end = Reading(busy=0, total=200, own=0.0, at=0.0), Reading(busy=150, total=200 + 200, own=0.5, at=1.0)
    assert busy_cores(start, end, 2) == pytest.approx(150 / 200 * 2 - 0.5)
    assert busy_cores(start, Reading(busy=20, total=400, own=0.9, at=1.0), 2) == 0.0  # never below none


def test_cpu_ticks_read_only_the_cpus_given(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  9 9 9 9 9 0 0 0 0 0\ncpu0 10 0 5 80 5 0 0 0 0 0\ncpu1 50 10 10 20 0 5 5 0 0 0\ncpu2 1 1 1 1 1 0 0 0 0 0\n"
                    "procs_running 3\n")
    assert cpu_ticks({0, 1}, stat) == (15 + 80, 100 + 100)
    assert cpu_ticks({7}, stat) == (None, None)
    assert cpu_ticks({0}, tmp_path / "missing") == (None, None)


def test_hyperthread_siblings_count_once(tmp_path):
    for cpu, siblings in {0: "0,2", 1: "1,3", 2: "0,2", 3: "1,3"}.items():
        (tmp_path / f"cpu{cpu}" / "topology").mkdir(parents=True)
        (tmp_path / f"cpu{cpu}" / "topology" / "thread_siblings_list").write_text(siblings + "\n")
    assert physical_cores({0, 1, 2, 3}, tmp_path) == 2
    assert physical_cores({0, 1}, tmp_path) == 2 and physical_cores({0}, tmp_path) == 1
    assert physical_cores({5, 6}, tmp_path) == 2  # no topology: one core a CPU


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "150000 100000\n"}, 1.5), ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None), ({}, None),
])
def test_cgroup_quota(tmp_path, files, quota):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpu_quota(tmp_path) == quota


def test_default_threads_read_the_window_once(monkeypatch):
    monkeypatch.setattr(threads, "CHOICE", threads.Choice(start=Reading(0, 0, 0.0, time.monotonic() - 1)))
    monkeypatch.setattr(threads, "affinity", lambda: {0, 1})
    monkeypatch.setattr(threads, "usable_cores", lambda cpus: 2)
    reads = []
    monkeypatch.setattr(threads, "read_cpus", lambda cpus: reads.append(cpus) or Reading(150, 200, 0.0, time.monotonic()))
    assert threads.default_threads() == 1  # 0.75 of 2 CPUs busy: 1.5 cores taken
    assert threads.default_threads() == 1 and len(reads) == 1


def test_wait_policy_passive_unless_the_environment_sets_it(monkeypatch):
    monkeypatch.setattr(threads, "CHOICE", threads.Choice())
    environ: dict = {}
    threads.prepare_for_torch(environ, [])
    assert environ["OMP_WAIT_POLICY"] == "PASSIVE"
    environ = {"OMP_WAIT_POLICY": "ACTIVE"}
    threads.prepare_for_torch(environ, [])
    assert environ == {"OMP_WAIT_POLICY": "ACTIVE"}
    environ = {"FLAIRSUITE_THREADS_POLICY": "torch"}
    hooks: list = []
    threads.prepare_for_torch(environ, hooks)
    assert environ == {"FLAIRSUITE_THREADS_POLICY": "torch"} and hooks == []


def test_the_import_hook_sets_omp_num_threads_once_unless_the_environment_does(monkeypatch):
    monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=3))
    environ: dict = {}
    hooks: list = []
    hooks.append(BeforeTorch(environ, hooks))
    assert hooks[0].find_spec("numpy") is None and environ == {} and len(hooks) == 1
    assert hooks[0].find_spec("torch") is None
    assert environ == {"OMP_NUM_THREADS": "3"} and hooks == []
    assert threads.CHOICE.ruling and threads.CHOICE.last is not None  # the rule's count: looked at again during training
    environ = {"OMP_NUM_THREADS": "2"}
    BeforeTorch(environ, []).find_spec("torch")
    assert environ == {"OMP_NUM_THREADS": "2"}


def test_threads_option_wins_and_the_environment_decides_without_it(monkeypatch):
    import torch

    from flairsuite.cli.group import set_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=1, cores=2, busy=1.0))
        set_threads(2)
        assert torch.get_num_threads() == 2
        set_threads(None)  # the default: 1 of 2 cores free
        assert torch.get_num_threads() == 1
        monkeypatch.setattr(threads, "CHOICE", threads.Choice())
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        set_threads(None)
        assert torch.get_num_threads() == 1 and threads.CHOICE.threads is None  # the environment's: left alone
        monkeypatch.delenv("OMP_NUM_THREADS")
        monkeypatch.setattr(threads, "CHOICE", threads.Choice(start=Reading(0, 0, 0.0, time.monotonic() - 1)))
        monkeypatch.setattr(threads, "usable_cores", lambda cpus: 2)
        monkeypatch.setattr(threads, "read_cpus", lambda cpus: Reading(200, 200, 0.0, time.monotonic()))  # both cores busy
        set_threads(2)
        set_threads(None)
        assert torch.get_num_threads() == 1 and threads.CHOICE.threads == 1
    finally:
        torch.set_num_threads(before)


def test_predict_serve_and_evaluate_keep_two_workers_beside_other_work(monkeypatch):
    import click
    import torch

    from flairsuite.cli import cli
    from flairsuite.cli.group import set_threads

    before = torch.get_num_threads()
    monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=1, cores=2, busy=2.0))
    try:
        for name, expected in (("predict", 2), ("serve", 2), ("evaluate", 2), ("charlm-perplexity", 1)):
            with click.Context(cli.commands[name]):
                set_threads(None)
            assert torch.get_num_threads() == expected, name
    finally:
        torch.set_num_threads(before)


PROBE = """
import json, os, sys
from flairsuite.cli import main
from flairsuite.runtime import threads
sys.argv = ["flairsuite", "--help"]
try:
    main()
except SystemExit:
    pass
print(file=sys.stderr)
seen = {"torch": "torch" in sys.modules, "hooks": sum(isinstance(h, threads.BeforeTorch) for h in sys.meta_path),
        "chosen_at_help": threads.CHOICE.threads}
import torch
seen.update(threads=torch.get_num_threads(), omp=os.environ.get("OMP_NUM_THREADS"), policy=os.environ.get("OMP_WAIT_POLICY"),
            chosen=threads.CHOICE.threads, cores=len(os.sched_getaffinity(0)))
print(json.dumps(seen))
"""


def probe(**environ: str) -> dict:
    """`flairsuite --help` through the console entry point, then `import torch`, in a fresh interpreter."""
    env = {name: value for name, value in os.environ.items() if name not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", threads.POLICY_ENV)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env={**env, **environ}, timeout=300,
                          cwd=Path(__file__).resolve().parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_pays_nothing_and_torch_starts_with_the_rules_count():
    seen = probe()
    assert seen["torch"] is False and seen["hooks"] == 1 and seen["chosen_at_help"] is None  # --help: no window waited for
    assert 1 <= seen["threads"] <= seen["cores"] and seen["threads"] == seen["chosen"] == int(seen["omp"])
    assert seen["policy"] == "PASSIVE"


def test_the_users_environment_wins_over_the_rule():
    seen = probe(OMP_NUM_THREADS="1", OMP_WAIT_POLICY="ACTIVE")  # the rule is never asked (chosen: None)
    assert seen["threads"] == 1 and seen["omp"] == "1" and seen["chosen"] is None and seen["policy"] == "ACTIVE"
    seen = probe(FLAIRSUITE_THREADS_POLICY="torch")
    assert seen["hooks"] == 0 and seen["chosen"] is None and seen["omp"] is None and seen["policy"] is None


def test_long_work_looks_again_once_a_minute_and_follows_the_load(monkeypatch):
    import torch

    before = torch.get_num_threads()
    start = time.monotonic()
    monkeypatch.setattr(threads, "affinity", lambda: {0, 1})
    readings = iter([Reading(400, 400, 0.0, start + 61), Reading(420, 600, 0.0, start + 122)])  # both CPUs busy; then quiet
    reads: list = []
    monkeypatch.setattr(threads, "read_cpus", lambda cpus: reads.append(cpus) or next(readings))
    try:
        monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=2, cores=2, ruling=True, last=Reading(0, 0, 0.0, start)))
        torch.set_num_threads(2)
        assert threads.recheck(now=start + 30) is None and reads == []  # not due: nothing read
        assert threads.recheck(now=start + 61) == 1 and torch.get_num_threads() == 1  # another job took both cores
        assert threads.recheck(now=start + 100) is None and torch.get_num_threads() == 1
        assert threads.recheck(now=start + 122) == 2 and torch.get_num_threads() == 2  # it ended: both cores again
        # --threads (or the environment) decided: never changed
        monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=2, cores=2, ruling=False, last=Reading(0, 0, 0.0, start)))
        assert threads.recheck(now=start + 1000) is None and torch.get_num_threads() == 2 and len(reads) == 2
    finally:
        torch.set_num_threads(before)


def test_apply_hands_the_count_to_the_rule_only_without_threads(monkeypatch):
    monkeypatch.setattr(threads, "CHOICE", threads.Choice(threads=1, cores=2, busy=1.0))
    monkeypatch.setattr(threads, "read_cpus", lambda cpus: Reading(0, 0, 0.0, time.monotonic()))
    import torch

    before = torch.get_num_threads()
    try:
        threads.apply(None, workers=2)
        assert threads.CHOICE.ruling and threads.CHOICE.workers == 2 and threads.CHOICE.last is not None
        threads.apply(1)
        assert not threads.CHOICE.ruling
    finally:
        torch.set_num_threads(before)


def test_training_loops_look_again_after_every_batch_and_step(monkeypatch, tmp_path):
    from test_dev_every import LINEAR, trained

    from flairsuite import training
    from flairsuite.tagging import tagger_training

    calls: list[str] = []
    monkeypatch.setattr(tagger_training, "recheck_threads", lambda: calls.append("batch"))
    monkeypatch.setattr(training, "recheck_threads", lambda: calls.append("step"))
    trained(tmp_path, "recheck", {**LINEAR, "max_epochs": 2})
    assert calls.count("step") == 2 and calls.count("batch") == 2 * 8  # 60 sentences in batches of 8, two epochs
