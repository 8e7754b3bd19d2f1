"""The committed reference results stay reproducible from their run files and experiment files.

- Each committed `results/<name>/table8.md` is what `flairsuite results results/<name> --table8` prints
  from the committed `metrics.json` files, byte for byte.
- Every committed experiment's fingerprint (`results/<name>/experiment.json`) equals the
  fingerprint of `experiments/<name>.yaml` as the suite reads it today, so `flairsuite tag` on it
  skips the finished runs instead of asking for `--force`.
- Every committed ablation file (`results/*.yaml`, `flairsuite results --ablation`) names runs its
  experiment files define, so its rows fill as the runs finish instead of staying empty; its printed
  table (`results/<name>.md`, where committed) is what the command prints from the committed runs.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flairsuite.cli import cli
from flairsuite.experiments.config import load_experiment
from flairsuite.experiments.identity import fingerprint
from flairsuite.results.ablation import load_ablation

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(path.parent.name for path in (ROOT / "results").glob("*/experiment.json"))
TABLE8 = sorted(path.parent.name for path in (ROOT / "results").glob("*/table8.md"))
ABLATIONS = sorted(path.name for path in (ROOT / "results").glob("*.yaml"))


@pytest.mark.parametrize("name", TABLE8)
def test_table8_rebuilds_byte_identically(name):
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results" / name), "--table8"], catch_exceptions=False)
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
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results"), "--ablation", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == path.with_suffix(".md").read_text(encoding="utf-8")


def test_there_are_committed_experiments():
    assert {"table8-de-1h", "sturm-tune"} <= set(COMMITTED) and "table8-de-1h" in TABLE8 and "recipe-ablation-de.yaml" in ABLATIONS
