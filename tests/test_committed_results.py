"""The committed reference results stay reproducible from their run files and experiment files.

- Each committed `results/<name>/table8.md` is what `flairsuite results results/<name> --table8` prints
  from the committed `metrics.json` files, byte for byte.
- Every committed experiment's fingerprint (`results/<name>/experiment.json`) equals the
  fingerprint of `experiments/<name>.yaml` as the suite reads it today, so `flairsuite tag` on it
  skips the finished runs instead of asking for `--force`.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flairsuite.cli import cli
from flairsuite.experiments.config import load_experiment
from flairsuite.experiments.identity import fingerprint

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(path.parent.name for path in (ROOT / "results").glob("*/experiment.json"))
TABLE8 = sorted(path.parent.name for path in (ROOT / "results").glob("*/table8.md"))


@pytest.mark.parametrize("name", TABLE8)
def test_table8_rebuilds_byte_identically(name):
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results" / name), "--table8"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == (ROOT / "results" / name / "table8.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_experiment_fingerprints_are_unchanged(name):
    stored = json.loads((ROOT / "results" / name / "experiment.json").read_text(encoding="utf-8"))
    assert fingerprint(load_experiment(ROOT / "experiments" / f"{name}.yaml")) == stored["fingerprint"]


def test_there_are_committed_experiments():
    assert {"table8-de-1h", "sturm-tune"} <= set(COMMITTED) and "table8-de-1h" in TABLE8
