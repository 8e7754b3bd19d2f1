"""The committed reference results stay reproducible from their run files and experiment files.

- Each committed `results/<name>/table8.md` is what `flairsuite results results/<name> --layout table8` prints
  from the committed `metrics.json` files, byte for byte.
- Every committed experiment's fingerprint (`results/<name>/experiment.json`) equals the
  fingerprint of `experiments/<name>.yaml` as the suite reads it today, so `flairsuite tag` on it
  skips the finished runs instead of asking for `--force`. "Committed" means tracked by git: the
  runs a user makes in the clone (`flairsuite quickstart` writes `results/quickstart/`) are not
  reference experiments. Outside a git checkout (an unpacked archive) the committed ones are those
  with an experiment file of the same name in `experiments/`.
- Every committed ablation file (`results/*.yaml`, `flairsuite results --layout ablation`) names runs its
  experiment files define, so its rows fill as the runs finish instead of staying empty; its printed
  table (`results/<name>.md`, where committed) is what the command prints from the committed runs.
"""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from flairsuite.cli import cli
from flairsuite.experiments.identity import fingerprint
from flairsuite.experiments.reading import load_experiment
from flairsuite.results.ablation import load_ablation

ROOT = Path(__file__).resolve().parents[1]


def committed_experiments(root: Path) -> list[str]:
    """The experiments whose `results/<name>/experiment.json` is committed (see the module docstring)."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
        tracked = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", "results/*/experiment.json"],
                                 capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        top = None
    if top is not None and Path(top.stdout.strip()).resolve() == root.resolve():
        return sorted(Path(name).parent.name for name in tracked.stdout.split("\0") if name)
    return sorted(path.parent.name for path in (root / "results").glob("*/experiment.json")
                  if (root / "experiments" / f"{path.parent.name}.yaml").is_file())


COMMITTED = committed_experiments(ROOT)
TABLE8 = sorted(path.parent.name for path in (ROOT / "results").glob("*/table8.md"))
ABLATIONS = sorted(path.name for path in (ROOT / "results").glob("*.yaml"))


@pytest.mark.parametrize("name", TABLE8)
def test_table8_rebuilds_byte_identically(name):
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results" / name), "--layout", "table8"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == (ROOT / "results" / name / "table8.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_experiment_fingerprints_are_unchanged(name):
    stored = json.loads((ROOT / "results" / name / "experiment.json").read_text(encoding="utf-8"))
    assert fingerprint(load_experiment(ROOT / "experiments" / f"{name}.yaml")) == stored["fingerprint"]


@pytest.mark.parametrize("name", ABLATIONS)
def test_ablation_files_name_runs_their_experiments_define(name):
    ablation = load_ablation(ROOT / "results" / name)
    refs = {ablation.baseline} | {ref for change in ablation.changes for ref in (change.runs, change.baseline)}
    for ref in sorted(refs):
        config = load_experiment(ROOT / "experiments" / f"{ref.experiment}.yaml")
        assert ref.embeddings in config.embeddings and ref.tagger in config.taggers, f"{name}: {ref} is no run of {ref.experiment}"
        assert ref.fine_tune in config.fine_tune, f"{name}: {ref} is no run of {ref.experiment} (fine_tune: {list(config.fine_tune)})"
        assert (ROOT / "results" / ref.experiment / "experiment.json").is_file(), f"{name}: {ref.experiment} has no committed runs"


@pytest.mark.parametrize("name", [name for name in ABLATIONS if (ROOT / "results" / name).with_suffix(".md").is_file()])
def test_ablation_tables_rebuild_byte_identically(name):
    path = ROOT / "results" / name
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results"), "--layout", "ablation", "--ablation-file", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == path.with_suffix(".md").read_text(encoding="utf-8")


def test_there_are_committed_experiments():
    assert {"table8-de-1h", "sturm-tune"} <= set(COMMITTED) and "table8-de-1h" in TABLE8 and "recipe-ablation-de.yaml" in ABLATIONS


def _experiment(root: Path, name: str) -> None:
    (root / "results" / name).mkdir(parents=True)
    (root / "results" / name / "experiment.json").write_text('{"fingerprint": "x"}', encoding="utf-8")


def test_runs_made_in_the_clone_are_not_taken_for_committed_experiments(tmp_path):
    # a clone after `flairsuite quickstart`: results/quickstart/experiment.json is there, untracked
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "ref.yaml").write_text("name: ref\n", encoding="utf-8")
    _experiment(tmp_path, "ref")
    _experiment(tmp_path, "quickstart")
    assert committed_experiments(tmp_path) == ["ref"]  # no git here: the experiment file decides
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert committed_experiments(tmp_path) == []
    subprocess.run(["git", "-C", str(tmp_path), "add", "results/ref/experiment.json"], check=True)
    assert committed_experiments(tmp_path) == ["ref"]
    _experiment(tmp_path, "mine")  # a user's own experiment file elsewhere, its runs in the clone
    (tmp_path / "experiments" / "quickstart.yaml").write_text("name: quickstart\n", encoding="utf-8")
    assert committed_experiments(tmp_path) == ["ref"]
