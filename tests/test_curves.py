"""`flairsuite results --curve`: the score against the share of train and against the LM's training characters."""

from pathlib import Path

import pytest
from matplotlib.image import imread
from test_results import metrics, run, write_run

from flairsuite.errors import FlairsuiteError
from flairsuite.results import collect
from flairsuite.results.curves import curve_figure, curve_points

NOTE = "{}% of train (fixed sample, seed 1); full dev and test"


def add(root: Path, seed: int, f1: float, percent=None, chars=None, tagger="bilstm-crf", embeddings="proposed+word") -> None:
    data = metrics("sturm", embeddings=embeddings, tagger=tagger, seed=seed, f1=f1, subsample=None if percent is None else NOTE.format(percent))
    if chars is not None:
        data["artifact_summaries"] = {"charlm:de-forward": {"chars": chars}, "charlm:de-backward": {"chars": chars + 2_000_000}}
    data["run"] = f"{data['run']}/{percent}/{chars}"
    write_run(root, data)


def test_train_fraction_points_are_seed_means_per_share(tmp_path: Path) -> None:
    for seed, (f1_10, f1_50, f1_all) in enumerate([(0.60, 0.75, 0.84), (0.62, 0.77, 0.86)], 1):
        add(tmp_path, seed, f1_10, 10)
        add(tmp_path, seed, f1_50, 50)
        add(tmp_path, seed, f1_all)
    add(tmp_path, 1, 0.70, 10, tagger="map-crf")
    points = curve_points(collect(tmp_path), "train-fraction")
    line = points[points["line"] == "proposed+word + bilstm-crf"].set_index("x")
    assert list(line.index) == [10.0, 50.0, 100.0]
    assert line["mean"].round(6).tolist() == [61.0, 76.0, 85.0] and line["n"].tolist() == [2, 2, 2]
    assert line["std"].round(4).tolist() == [1.4142] * 3
    assert points[points["line"] == "proposed+word + map-crf"]["mean"].tolist() == pytest.approx([70.0])
    assert {reference.value for reference in points["best"]} == {87.83}  # Sturm's best published


def test_lm_chars_takes_the_mean_of_the_pair_and_joins_stacks(tmp_path: Path) -> None:
    for seed in (1, 2):
        add(tmp_path, seed, 0.80, chars=20_000_000, embeddings="pair-1h")
        add(tmp_path, seed, 0.84, chars=40_000_000, embeddings="pair-2h")
    points = curve_points(collect(tmp_path), "lm-chars")
    assert points["line"].unique().tolist() == ["bilstm-crf"]  # stacks differ along x
    assert points["x"].tolist() == [21.0, 41.0] and points["mean"].round(6).tolist() == [80.0, 84.0]


def test_curve_png_from_the_cli(tmp_path: Path) -> None:
    for seed in (1, 2):
        add(tmp_path, seed, 0.6 + seed / 100, 25)
        add(tmp_path, seed, 0.8 + seed / 100)
    result = run("results", str(tmp_path), "--curve", "train-fraction")
    assert result.exit_code == 0, result.output
    image = imread(tmp_path / "curve-train-fraction.png")
    assert image.shape[0] > 300 and image.shape[1] > 600
    axis = curve_figure(collect(tmp_path), "train-fraction").axes[0]
    legend = [text.get_text().replace("\n", " ") for text in axis.get_legend().get_texts()]
    assert legend == ["proposed+word + bilstm-crf", "best published 87.83 (Zöllner et al. 2021, Table 8)"]
    assert axis.get_xlabel() == "share of the training set (%), log scale" and axis.get_xscale() == "log"
    assert [tick.get_text() for tick in axis.get_xticklabels()] == ["25", "100"]  # ticked at the runs' shares


def test_a_long_reference_label_wraps_and_leaves_the_axes_their_width(tmp_path: Path) -> None:
    # the Danish anchor's label is 90 characters; on one line it squeezed the axes to a sliver left of the legend
    for seed in (1, 2):
        for percent in (25, 50, None):
            data = metrics("danish-ner", seed=seed, f1=0.5 + seed / 100 + (percent or 100) / 1000,
                           subsample=None if percent is None else NOTE.format(percent))
            data["run"] = f"{data['run']}/{percent}"
            write_run(tmp_path, data)
    figure = curve_figure(collect(tmp_path), "train-fraction")
    figure.canvas.draw()
    axis = figure.axes[0]
    labels = [text.get_text() for text in axis.get_legend().get_texts()]
    assert labels[-1].startswith("anchor 81.78") and "\n" in labels[-1]
    assert all(len(line) <= 36 for label in labels for line in label.splitlines())
    assert axis.get_position().width > 0.4  # of the figure's width


def test_curve_without_its_x_is_an_error(tmp_path: Path) -> None:
    add(tmp_path, 1, 0.8)
    with pytest.raises(FlairsuiteError, match="no runs with an x for --curve lm-chars"):
        curve_points(collect(tmp_path), "lm-chars")
    result = run("results", str(tmp_path), "--curve", "lm-chars")
    assert result.exit_code == 1 and result.output.startswith("Error: no runs with an x for --curve lm-chars")
    assert len(result.output.splitlines()) == 1  # one line, before any table


def test_epochs_curve_is_the_dev_score_after_each_epoch_over_seeds(tmp_path: Path) -> None:
    def history(*scores: float) -> list[dict]:
        return [{"epoch": i, "loss": 1.0 / i, "dev_f1": score, "lr": 0.1} for i, score in enumerate(scores, 1)]

    for seed, scores in ((1, (0.50, 0.70, 0.80)), (2, (0.60, 0.80))):  # seed 2 stopped an epoch earlier
        data = metrics("sturm", seed=seed, history=history(*scores))
        write_run(tmp_path, data)
        write_run(tmp_path, {**data, "run": data["run"] + "/entity-fix", "entity_fix": True})  # the same training: not counted twice
    write_run(tmp_path, metrics("sturm", embeddings="old", seed=3))  # no history recorded: no points
    points = curve_points(collect(tmp_path), "epochs", split="dev")
    assert points["line"].unique().tolist() == ["proposed + bilstm-crf"]
    assert points["x"].tolist() == [1.0, 2.0, 3.0] and points["n"].tolist() == [2, 2, 1]
    assert points["mean"].round(6).tolist() == [55.0, 75.0, 80.0]
    result = run("results", str(tmp_path), "--split", "dev", "--curve", "epochs")
    assert result.exit_code == 0, result.output
    axis = curve_figure(collect(tmp_path), "epochs", split="dev").axes[0]
    assert axis.get_xlabel() == "training epoch" and axis.get_title() == "sturm: dev F1 (%), mean ± std over seeds"
    assert imread(tmp_path / "curve-epochs.png").shape[1] > 600
    wrong = run("results", str(tmp_path), "--curve", "epochs")  # the history holds dev scores only
    assert wrong.exit_code == 1 and wrong.output.strip() == (
        "Error: --curve epochs draws the dev score the runs recorded after each epoch: use --split dev and the default --metric")
