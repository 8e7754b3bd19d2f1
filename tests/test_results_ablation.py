"""Ablation tables (`flairsuite results --layout ablation --ablation-file FILE`) on hand-made runs, with differences and intervals worked by hand."""

import pytest
from conftest import one_error_line
from test_results import metrics, run, table_rows, write_run

SPEC = """\
title: toy-ablation
baseline: base/lm+word/bilstm-crf
changes:
  - {change: bigger LM, runs: lm/big+word/bilstm-crf}
  - {change: not trained yet, runs: lm/huge+word/bilstm-crf}
  - {change: wider LSTM, runs: wide/x/bilstm512-crf, baseline: wide/x/bilstm-crf}
"""


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "results"
    recorded = {"charlm:de-forward": {"valid_ppl": 4.1624}, "charlm:de-backward": {"valid_ppl": 4.0831}, "fasttext:de": {"dim": 100}}
    specs = ["charlm:de-forward", "charlm:de-backward", "fasttext:de"]
    for seed, (base, big) in enumerate(zip((0.80, 0.82, 0.84), (0.84, 0.86, 0.88)), 1):
        write_run(root, metrics(experiment="base", embeddings="lm+word", seed=seed, f1=base, embedding_specs=specs, artifact_summaries=recorded,
                                seconds=540.0 + 60 * seed, threads=2))  # 20, 22 and 24 core-minutes
        bigger = {**recorded, "charlm:de-forward": {"valid_ppl": 3.5} if seed < 3 else {"valid_ppl": 3.4}}  # seed 3 read a later LM
        write_run(root, metrics(experiment="lm", embeddings="big+word", seed=seed, f1=big, embedding_specs=specs, artifact_summaries=bigger,
                                seconds=900.0, threads=1))
    write_run(root, metrics(experiment="lm", embeddings="big+word", seed=9, f1=0.10, entity_fix=True, run="sturm/big+word/bilstm-crf/fix",
                            seconds=9000.0, threads=1))  # an Entity-Fix variant: in no cell
    write_run(root, metrics(experiment="wide", embeddings="x", tagger="bilstm512-crf", f1=0.70))
    write_run(root, metrics(experiment="wide", embeddings="x", tagger="bilstm-crf", f1=0.71))
    (tmp_path / "ablation.yaml").write_text(SPEC, encoding="utf-8")
    return tmp_path


def test_each_change_beside_its_baseline_with_a_welch_interval(results):
    result = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "ablation.yaml"))
    assert result.exit_code == 0, result.output
    assert "## toy-ablation: sturm, dev and test F1 (%)" in result.output
    rows = table_rows(result.output)
    assert rows["baseline / base/lm+word/bilstm-crf"] == ["4.162 / 4.083", "87.00 ± 2.00 (3)", "", "82.00 ± 2.00 (3)", "", "22.00"]
    # means 86 and 82, variances 4 and 4, 3 seeds: standard error sqrt(8/3) = 1.63299, df 4, t(0.95, 4) = 2.13185
    half = 2.13185 * 1.63299
    interval = f"+4.00 [{4 - half:+.2f}, {4 + half:+.2f}]"
    assert rows["bigger LM / lm/big+word/bilstm-crf"] == ["3.500 / 4.083; 3.400 / 4.083", "91.00 ± 2.00 (3)", interval, "86.00 ± 2.00 (3)", interval,
                                                                 "15.00"]
    assert rows["not trained yet / lm/huge+word/bilstm-crf"] == ["", "", "", "", "", ""]
    assert "† changes[2].runs: no runs of lm/huge+word/bilstm-crf yet (stacks with runs in lm: big+word)" in result.output
    wider = rows["wider LSTM / wide/x/bilstm512-crf against wide/x/bilstm-crf"]
    assert wider == ["", "75.00 ± – (1)", "-1.00", "70.00 ± – (1)", "-1.00", ""]  # no threads recorded: no cost


def test_each_corpus_shows_the_perplexity_of_the_lms_its_own_runs_read(results):
    """A later LM file of the same name, read only by another corpus's runs, stays out of this corpus's table."""
    later = {"charlm:de-forward": {"valid_ppl": 2.5}, "charlm:de-backward": {"valid_ppl": 2.6}}
    specs = ["charlm:de-forward", "charlm:de-backward"]
    for seed in (1, 2):
        write_run(results / "results", metrics(corpus_label="arendt", experiment="lm", embeddings="big+word", seed=seed, f1=0.8,
                                               embedding_specs=specs, artifact_summaries=later))
        write_run(results / "results", metrics(corpus_label="arendt", experiment="base", embeddings="lm+word", seed=seed, f1=0.7,
                                               embedding_specs=specs, artifact_summaries=later))
    result = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "ablation.yaml"))
    assert result.exit_code == 0, result.output
    tables = {part.split(",")[0]: table_rows(part) for part in result.output.split("## toy-ablation: ")[1:]}
    assert tables["sturm"]["bigger LM / lm/big+word/bilstm-crf"][0] == "3.500 / 4.083; 3.400 / 4.083"
    assert tables["arendt"]["bigger LM / lm/big+word/bilstm-crf"][0] == "2.500 / 2.600"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("baseline: base/lm+word\nchanges: [{change: a, runs: lm/big+word/bilstm-crf}]\n", "baseline: expected experiment/stack/tagger"),
        ("baseline: base/lm+word/bilstm-crf\nchanges: []\n", "changes: expected a list"),
        ("baseline: base/lm+word/bilstm-crf\nchanges: [{change: a, run: lm/big+word/bilstm-crf}]\n", "changes[1]: expected"),
        ("baseline: base/lm+word/bilstm-crf\nseeds: [1]\nchanges: [{change: a, runs: lm/big+word/bilstm-crf}]\n", "unknown key 'seeds'"),
        ("baseline: base/lm+word/bilstm-crf\nchanges: [{change: a, runs: gone/big+word/bilstm-crf}]\n", "no runs of experiment 'gone'"),
        ("baseline: base/lm/bilstm-crf\nchanges: [{change: a, runs: lm/big+word/bilstm-crf}]\n", "baseline: base has no runs of lm/bilstm-crf"),
        ("baseline: [unclosed\n", "not valid YAML"),
        ("baseline: base/lm+word/bilstm-crf\n1: 2\nfoo: 3\nchanges: [{change: a, runs: lm/big+word/bilstm-crf}]\n", "unknown key '1'"),
        ("title: [a, b]\nbaseline: base/lm+word/bilstm-crf\nchanges: [{change: a, runs: lm/big+word/bilstm-crf}]\n", "title: expected one line"),
        ("baseline: base/lm+word/bilstm-crf\nchanges: [{change: a, runs: lm/big+word/bilstm-crf, baseline: nope/x/y}]\n",
         "changes[1].baseline: no runs of experiment 'nope'"),
    ],
)
def test_a_bad_ablation_file_is_one_error_line(results, spec, message):
    path = results / "bad.yaml"
    path.write_text(spec, encoding="utf-8")
    line = one_error_line(run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(path)))
    assert str(path) in line and message in line


def test_the_interval_is_welchs_with_unequal_seeds_and_spreads():
    from scipy import stats

    from flairsuite.results.welch import welch_interval

    change, baseline = [88.1, 86.0, 89.9, 87.2], [85.0, 85.4]
    expected = stats.ttest_ind(change, baseline, equal_var=False).confidence_interval(0.90)
    difference, low, high = welch_interval(change, baseline)
    assert difference == pytest.approx(sum(change) / 4 - sum(baseline) / 2)
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_ablation_is_one_layout_among_the_others(results):
    line = one_error_line(run("results", str(results / "results"), "--ablation-file", str(results / "ablation.yaml"), "--layout", "table8"))
    assert line == "Error: --layout ablation reads --ablation-file FILE: give both or neither"
    assert one_error_line(run("results", str(results / "results"), "--layout", "ablation")) == line
    missing = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "none.yaml"))
    assert "no such ablation file" in one_error_line(missing)


def test_fine_tuned_runs_are_their_own_reference(tmp_path):
    """`experiment/stack/ft/tagger` names the runs that fine-tuned the stack's BERT, apart from the frozen runs of the same
    stack and tagger in the same experiment (run ids `CORPUS/STACK/ft/TAGGER/seed-N`)."""
    root = tmp_path / "results"
    for seed, (frozen, head, tuned) in enumerate(zip((0.60, 0.62), (0.80, 0.82), (0.85, 0.87)), 1):
        write_run(root, metrics(experiment="lr", embeddings="bert", tagger="map-crf", seed=seed, f1=frozen, fine_tune=False))
        write_run(root, metrics(experiment="lr", embeddings="bert", tagger="map-crf", seed=seed, f1=head, fine_tune=True,
                                run=f"sturm/bert/ft/map-crf/seed-{seed}"))
        write_run(root, metrics(experiment="head-lr", embeddings="bert", tagger="map-crf", seed=seed, f1=tuned, fine_tune=True,
                                run=f"sturm/bert/ft/map-crf/seed-{seed}"))
    spec = tmp_path / "ft.yaml"
    spec.write_text("baseline: lr/bert/ft/map-crf\nchanges:\n  - {change: head lr, runs: head-lr/bert/ft/map-crf}\n"
                    "  - {change: frozen, runs: lr/bert/map-crf}\n", encoding="utf-8")
    result = run("results", str(root), "--layout", "ablation", "--ablation-file", str(spec))
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    assert rows["baseline / lr/bert/ft/map-crf"][1] == "86.00 ± 1.41 (2)"  # dev is test + 5: the fine-tuned runs only
    assert rows["head lr / head-lr/bert/ft/map-crf"][1:2] == ["91.00 ± 1.41 (2)"]
    assert rows["frozen / lr/bert/map-crf"][1] == "66.00 ± 1.41 (2)"
    spec.write_text("baseline: head-lr/bert/map-crf\nchanges: [{change: a, runs: lr/bert/ft/map-crf}]\n", encoding="utf-8")
    assert "baseline: head-lr has no runs of bert/map-crf" in one_error_line(run("results", str(root), "--layout", "ablation", "--ablation-file", str(spec)))
    spec.write_text("baseline: lr/bert/tuned/map-crf\nchanges: [{change: a, runs: lr/bert/ft/map-crf}]\n", encoding="utf-8")
    assert "experiment/stack/ft/tagger" in one_error_line(run("results", str(root), "--layout", "ablation", "--ablation-file", str(spec)))


def test_self_training_rounds_are_rows_with_the_cost_of_getting_there(results):
    import json

    study = results / "results" / "st" / "sturm" / "lm+word" / "map-crf"
    (results / "results" / "st").mkdir(parents=True)
    (results / "results" / "st" / "self-training.json").write_text(json.dumps({"name": "st", "key": "k", "config": ""}))
    for seed, (zero, later) in enumerate(zip((0.80, 0.82, 0.84), (0.82, 0.85, 0.88)), 1):
        common = {"corpus": "sturm", "stack": "lm+word", "tagger": "map-crf", "seed": seed, "labelled": 10, "pool": 10, "test": zero,
                  "threads": 2}
        for folder, record in ((study / f"seed-{seed}", {**common, "round": 0, "kept": 0, "dev": zero, "seconds": 60.0}),
                               (study / f"seed-{seed}" / "threshold-0.9", {**common, "round": 1, "kept": 8, "dev": later - 0.01,
                                                                            "threshold": 0.9, "seconds": 120.0}),
                               (study / f"seed-{seed}" / "threshold-0.9", {**common, "round": 2, "kept": 9, "dev": later,
                                                                            "threshold": 0.9, "seconds": 180.0})):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"round-{record['round']:02d}.json").write_text(json.dumps(record))
    (results / "rounds.yaml").write_text("title: rounds\nbaseline: base/lm+word/bilstm-crf\nchanges:\n"
                                         "  - {change: self-training, runs: st/lm+word/threshold-0.9-round-2/map-crf,"
                                         " baseline: st/lm+word/round-0/map-crf}\n")
    result = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "rounds.yaml"))
    assert result.exit_code == 0, result.output
    row = table_rows(result.output)["self-training / st/lm+word/threshold-0.9-round-2/map-crf against st/lm+word/round-0/map-crf"]
    # dev 85 ± 3 against 82 ± 2, two rounds of one study: the seeds' differences 2, 3, 4 (mean 3, sd 1) give the paired
    # half-width t(0.95, 2) / sqrt(3) = 1.69, where Welch's over the seeds' spread would be 5.0; test unchanged on every
    # seed: no width; 2 threads x (1 + 2 + 3) minutes
    assert row == ["", "85.00 ± 3.00 (3)", "+3.00 [+1.31, +4.69] paired", "82.00 ± 2.00 (3)", "+0.00 [+0.00, +0.00] paired", "12.00"]
    assert "paired: two rounds of one self-training study" in result.output
    (results / "rounds.yaml").write_text("title: rounds\nbaseline: st/lm+word/round-0/map-crf\nchanges:\n"
                                         "  - {change: self-training, runs: st/lm+word/threshold-0.9-round-2/map-crf}\n"
                                         "  - {change: rounds against runs, runs: base/lm+word/bilstm-crf}\n")
    result = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "rounds.yaml"))
    rows = table_rows(result.output)
    assert rows["self-training / st/lm+word/threshold-0.9-round-2/map-crf"][2] == "+3.00 [+1.31, +4.69] paired"
    assert not rows["rounds against runs / base/lm+word/bilstm-crf"][2].endswith("paired")  # other experiments: Welch
    (results / "rounds.yaml").write_text("title: rounds\nbaseline: base/lm+word/bilstm-crf\nchanges:\n"
                                         "  - {change: self-training, runs: st/lm+word/threshold-0.9-round-7/map-crf}\n")
    result = run("results", str(results / "results"), "--layout", "ablation", "--ablation-file", str(results / "rounds.yaml"))
    assert result.exit_code == 0 and "† changes[1].runs: no runs of st/lm+word/threshold-0.9-round-7/map-crf yet" in result.output
