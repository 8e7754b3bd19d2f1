"""The parity scripts (experiments/parity_flair.py, parity_compare.py) on a tiny LM pair and the fake Sturm.

Both sides train the same grid: `flairsuite tag` and Flair's own ModelTrainer; the Flair side's
metrics pass the collector's schema, name the same runs, and the comparison prints one row per
cell with a verdict computed from the two sets of seeds.
"""

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import train_tiny_embeddings
from test_tag_grid import experiment_yaml, tag, write_sturm

from flairsuite.results.collect import collect, read_run

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    home = train_tiny_embeddings(root, "both")
    corpora = write_sturm(root / "corpora", repeat=2)
    experiment = experiment_yaml(root / "p.yaml", "p", {"both": ["charlm:de-forward", "charlm:de-backward"]}, ["map-crf"], [1, 2],
                                 "{max_epochs: 2, mini_batch_size: 4}", "[false]")
    suite = tag(home, corpora, experiment)
    assert suite.exit_code == 0, suite.output
    return home, corpora, experiment


def test_flair_side_writes_the_same_runs_in_the_collectors_schema(sides, monkeypatch, capsys):
    home, corpora, experiment = sides
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    parity_flair = script("parity_flair")
    assert parity_flair.main([str(experiment), "--corpora-dir", str(corpora), "--threads", "1"]) == 0
    suite_runs, flair_runs = (sorted(collect(home / "results" / name)["run"]) for name in ("p", "p-flair"))
    assert flair_runs == suite_runs == ["sturm/both/map-crf/seed-1", "sturm/both/map-crf/seed-2"]
    metrics = read_run(home / "results" / "p-flair" / "sturm/both/map-crf/seed-1" / "metrics.json").metrics
    assert metrics["trainer"] == "flair.trainers.ModelTrainer" and metrics["experiment"] == "p-flair"
    assert metrics["train"]["max_epochs"] == 2 and len(metrics["history"]) == 2
    # scored by the suite's scorer on the raw tags: precision and recall give the F1
    test = metrics["test"]
    f1 = 0 if test["precision"] + test["recall"] == 0 else 2 * test["precision"] * test["recall"] / (test["precision"] + test["recall"])
    assert test["f1"] == pytest.approx(f1)
    # again: finished runs are skipped
    assert parity_flair.main([str(experiment), "--corpora-dir", str(corpora)]) == 0
    assert "2 finished before, 0 to train" in capsys.readouterr().out


def test_compare_prints_the_difference_and_a_welch_interval(sides, capsys):
    home, _, _ = sides
    compare = script("parity_compare")
    assert compare.main([str(home / "results" / "p"), str(home / "results" / "p-flair")]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| sturm")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    ours = [read_run(p).metrics["test"]["f1"] * 100 for p in sorted((home / "results" / "p").rglob("metrics.json"))]
    theirs = [read_run(p).metrics["test"]["f1"] * 100 for p in sorted((home / "results" / "p-flair").rglob("metrics.json"))]
    diff, low, high = compare.welch_interval(ours, theirs)
    assert float(cells[5]) == pytest.approx(sum(ours) / 2 - sum(theirs) / 2, abs=0.006)
    assert cells[6] == f"[{low:+.2f}, {high:+.2f}]" and cells[7] == ("pass" if low > -1.0 else "FAIL")


def test_welch_interval_matches_a_worked_example():
    compare = script("parity_compare")
    diff, low, high = compare.welch_interval([86.01, 87.44, 84.97, 86.29], [82.38, 84.18, 85.71, 85.19])
    # by hand: means 86.1775 and 84.3650; variances 1.03089 and 2.15470; standard error 0.89241;
    # Welch-Satterthwaite df 5.336; t(0.95, 5.336) = 1.98736
    assert diff == pytest.approx(1.8125)
    assert (low, high) == pytest.approx((1.8125 - 1.98736 * 0.89241, 1.8125 + 1.98736 * 0.89241), abs=1e-4)
    assert compare.welch_interval([80.0, 80.0], [79.0, 79.0]) == (1.0, 1.0, 1.0)  # no spread: no interval


def test_compare_without_runs_is_one_line(tmp_path, capsys):
    compare = script("parity_compare")
    (tmp_path / "empty").mkdir()
    assert compare.main([str(tmp_path / "empty"), str(tmp_path / "empty")]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"Error: {tmp_path / 'empty'}") and "no metrics.json found" in error and "\n" not in error


def test_seeds_needed_is_the_fewest_that_clear_the_margin():
    compare = script("parity_compare")
    suite, flair = [82.38, 84.18, 85.71, 85.19, 84.77], [83.89, 84.10, 84.35, 85.57, 85.19]  # Sturm, 5 seeds a side
    needed = compare.seeds_needed(suite, flair, 1.0)
    assert compare.projected_lower(suite, flair, needed) > -1.0 >= compare.projected_lower(suite, flair, needed - 1)
    assert compare.projected_lower(suite, flair, 5) == pytest.approx(compare.welch_interval(suite, flair)[1])  # n = now: the interval now
    assert needed == 10
    assert compare.seeds_needed([80.0, 81.0], [82.5, 83.5], 1.0) is None  # 2.5 points behind: no number of seeds clears −1


def test_lockstep_trains_the_same_model_both_ways(sides, monkeypatch, capsys):
    """Fed the same batch orders and dropout seeds, the suite's loop and Flair's ModelTrainer agree epoch by epoch."""
    home, corpora, _ = sides
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    experiment = experiment_yaml(home / "l.yaml", "l", {"both": ["charlm:de-forward", "charlm:de-backward"]}, ["bilstm-crf"], [3],
                                 "{max_epochs: 3, mini_batch_size: 4}", "[false]")
    lockstep = script("parity_lockstep")
    run = "sturm/both/bilstm-crf/seed-3"
    assert lockstep.main([str(experiment), "--run", run, "--epochs", "3", "--corpora-dir", str(corpora), "--threads", "1"]) == 0
    rows = json.loads((home / "results" / "l-lockstep" / run / "lockstep.json").read_text())["rows"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows[0]["suite_loss"] > rows[-1]["suite_loss"]  # it trained
    for row in rows:
        assert row["suite_loss"] == pytest.approx(row["flair_loss"], rel=1e-5) and row["suite_lr"] == row["flair_lr"]
        assert row["suite_dev_f1"] == row["flair_dev_f1"] and row["max_weight_gap"] < 1e-4
    assert "| 3 |" in capsys.readouterr().out
    # the float16 vectors of the suite's cache move the weights measurably off Flair's
    assert lockstep.main([str(experiment), "--run", run, "--epochs", "3", "--corpora-dir", str(corpora), "--float16"]) == 0
    rounded = json.loads((home / "results" / "l-lockstep" / run / "lockstep-float16.json").read_text())["rows"]
    assert rounded[-1]["max_weight_gap"] > 10 * rows[-1]["max_weight_gap"]


def test_lockstep_names_an_unknown_run(sides, capsys):
    home, corpora, experiment = sides
    assert script("parity_lockstep").main([str(experiment), "--run", "sturm/nope/seed-1", "--corpora-dir", str(corpora)]) == 1
    error = capsys.readouterr().err.strip()
    assert error == f"Error: --run sturm/nope/seed-1: no run of {experiment} has this id"


def test_lockstep_refuses_what_flairs_trainer_cannot_replay(sides, capsys):
    home, corpora, _ = sides
    experiment = experiment_yaml(home / "b.yaml", "b", {"both": ["charlm:de-forward", "charlm:de-backward"]}, ["bilstm-crf"], [1],
                                 "{max_epochs: 2, precision: bfloat16, bucket_batches: 5}", "[false]")
    run = "sturm/both/bilstm-crf/seed-1"
    assert script("parity_lockstep").main([str(experiment), "--run", run, "--corpora-dir", str(corpora)]) == 1
    assert capsys.readouterr().err.strip() == (f"Error: {run}: the lockstep replays the plateau schedule in float32 on frozen embeddings only "
                                               "(training setting precision: bfloat16, bucket_batches: 5)")
    assert not (home / "results" / "b-lockstep").exists()
