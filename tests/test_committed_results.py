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
- `--format csv` of every layout holds numbers: Table 8's are the mean, sample std and n of the committed
  metrics.json files' test F1, read back with the csv module.
"""

import csv
import io
import json
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import provide_derived_corpora

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
    provide_derived_corpora(ROOT / "experiments" / f"{name}.yaml")
    assert fingerprint(load_experiment(ROOT / "experiments" / f"{name}.yaml")) == stored["fingerprint"]


@pytest.mark.parametrize("name", ABLATIONS)
def test_ablation_files_name_runs_their_experiments_define(name):
    ablation = load_ablation(ROOT / "results" / name)
    refs = {ablation.baseline} | {ref for change in ablation.changes for ref in (change.runs, change.baseline)}
    for ref in sorted(refs):
        provide_derived_corpora(ROOT / "experiments" / f"{ref.experiment}.yaml")
        config = load_experiment(ROOT / "experiments" / f"{ref.experiment}.yaml")
        assert ref.embeddings in config.embeddings and ref.tagger in config.taggers, f"{name}: {ref} is no run of {ref.experiment}"
        assert ref.fine_tune in config.fine_tune, f"{name}: {ref} is no run of {ref.experiment} (fine_tune: {list(config.fine_tune)})"
        modes = config.transfer.modes if config.transfer is not None else ("none",)
        assert ref.transfer in modes, f"{name}: {ref} is no run of {ref.experiment} (transfer modes: {list(modes)})"
        if ref.round:  # a self-training round: a threshold and round the block studies
            settings = config.self_training
            assert settings is not None, f"{name}: {ref} names a round, and {ref.experiment} has no self_training block"
            thresholds, rounds = ([], [0]) if ref.round == "round-0" else ([float(ref.round.split("-")[1])], [int(ref.round.split("-")[3])])
            assert set(thresholds) <= set(settings.thresholds) and max(rounds) <= settings.rounds, f"{name}: {ref} is no round of {ref.experiment}"
            assert (ROOT / "results" / ref.experiment / "self-training.json").is_file(), f"{name}: {ref.experiment} has no committed rounds"
        else:
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


TABLE8_COLUMN = {("arendt", ""): "H. Arendt", ("sturm", ""): "Sturm", ("ler", "coarse"): "LER CG", ("ler", ""): "LER FG"}  # LER: fine unless said


def test_table8_csv_holds_the_mean_std_and_n_of_the_metrics_files():
    folder = ROOT / "results" / "table8-de"
    output = subprocess.run(["flairsuite", "results", str(folder), "--layout", "table8", "--format", "csv"],
                            capture_output=True, text=True, check=True).stdout
    assert not any(line.startswith("#") for line in output.splitlines())
    rows = list(csv.DictReader(output.splitlines()))
    scores = defaultdict(list)  # (tagger, Entity-Fix, column) -> test F1 (%) per seed, read straight from the files
    for path in folder.rglob("metrics.json"):
        metrics = json.loads(path.read_text(encoding="utf-8"))
        column = TABLE8_COLUMN[(metrics["corpus"], (metrics["corpus_options"] or {}).get("granularity", "").replace("fine", ""))]
        scores[(metrics["tagger"], "yes" if metrics["entity_fix"] else "no", column)].append(metrics["test"]["f1"] * 100)
    checked = 0
    for row in rows:
        means = []
        for column in TABLE8_COLUMN.values():
            header = next(name for name in row if name.removesuffix(" mean").rstrip("†") == column and name.endswith(" mean"))
            base = header.removesuffix(" mean")
            values = scores.get((row["tagger"], row["Entity-Fix"], column), [])
            if not values:
                assert row[header] == row[f"{base} std"] == row[f"{base} n"] == ""
                continue
            assert float(row[header]) == pytest.approx(statistics.mean(values), abs=1e-4)
            assert int(row[f"{base} n"]) == len(values)
            assert (float(row[f"{base} std"]) == pytest.approx(statistics.stdev(values), abs=1e-4)) if len(values) > 1 else row[f"{base} std"] == ""
            means.append(statistics.mean(values))
            checked += 1
        if len(means) == len(TABLE8_COLUMN):
            assert float(row["Average"]) == pytest.approx(statistics.mean(means), abs=1e-4)
    assert checked >= 40 and {row["tagger"] for row in rows} >= {"map", "map-crf", "lcrf-ner", "cse"}
    paper = {(row["tagger"], row["Entity-Fix"]): row["paper Sturm"] for row in rows}
    assert float(paper[("lcrf-ner", "yes")]) == 87.83 and paper[("bilstm-crf", "no")] == ""  # the paper's LCRFNER with Entity-Fix; no BiLSTM


KEY_AND_TEXT_COLUMNS = {"embeddings", "tagger", "Entity-Fix", "fine-tuned", "pre-training", "positions", "WWM", "WWA", "pre-training length",
                        "BERT", "pre-training tokens", "hours", "valid MLM acc. (%)", "fine-tuning h/run", "tasks", "change", "runs", "LM valid ppl"}


@pytest.mark.parametrize("args", [
    ["results/arendt-table3", "--layout", "table3"],
    ["results/zh-cluener", "--layout", "table3"],
    ["results/table6-de", "--layout", "table6"],
    ["results/table9-de", "--layout", "table9"],
    ["results", "--layout", "ablation", "--ablation-file", "results/recipe-ablation-de.yaml"],
], ids=["table3", "table3-reference-measure", "table6", "table9", "ablation"])
def test_every_layouts_csv_reads_into_pandas_as_numbers(args):
    result = CliRunner().invoke(cli, ["results", *[str(ROOT / arg) if arg.startswith("results") else arg for arg in args], "--format", "csv"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for section in result.stdout.strip().split("\n\n"):
        table = pd.read_csv(io.StringIO(section))
        numeric = [name for name in table.columns if name not in KEY_AND_TEXT_COLUMNS]
        assert numeric and len(table) > 0
        for name in numeric:
            assert pd.api.types.is_numeric_dtype(table[name]), f"{args}: column {name!r} holds {table[name].tolist()}"
        assert not any("±" in str(value) or "**" in str(value) for value in table.to_numpy().ravel())
