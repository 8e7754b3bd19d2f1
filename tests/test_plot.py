"""The comparison bar chart as drawn: legend placement, distinct row styles, y-range, reference markers."""

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

import flairsuite.results.plot as plot
from flairsuite.cli import cli
from flairsuite.results import comparison_figure
from flairsuite.results.references import REFERENCES, best_published
from flairsuite.results.table8 import COLUMNS, PAPER

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {"arendt": ("arendt", {}), "ler (coarse)": ("ler", {"granularity": "coarse"}), "sturm": ("sturm", {})}
TAGGERS = ("bilstm-crf", "lcrf-ner", "map")
# What Zöllner et al. 2021, Table 8 reports (E-F1 %) for the suite's taggers, by (tagger, Entity-Fix, corpus label)
PAPER_TICKS = {
    ("map", False): {"arendt": 77.41, "ler (coarse)": 93.47, "sturm": 85.55},
    ("map", True): {"arendt": 79.03, "ler (coarse)": 94.74, "sturm": 87.06},
    ("lcrf-ner", False): {"arendt": 78.57, "ler (coarse)": 93.94, "sturm": 85.08},
    ("lcrf-ner", True): {"arendt": 79.99, "ler (coarse)": 94.88, "sturm": 87.83},
}
BEST = {"arendt": 80.48, "ler (coarse)": 94.88, "sturm": 87.83}
LABEL_OF_COLUMN = {"H. Arendt": "arendt", "LER CG": "ler (coarse)", "Sturm": "sturm"}  # table8=True names the groups as the table does


def fake_runs(corpora: dict = CORPORA, taggers: tuple = TAGGERS, stacks: tuple = ("proposed",), seeds: int = 3) -> pd.DataFrame:
    """One row per run as `collect()` gives it: every stack × tagger × Entity-Fix × corpus × seed, F1 in 0.68-0.80."""
    rows = []
    for (s, stack), (t, tagger), fix, (c, label), seed in itertools.product(
        enumerate(stacks), enumerate(taggers), (False, True), enumerate(corpora), range(1, seeds + 1)
    ):
        corpus, options = corpora[label]
        f1 = 0.70 + 0.02 * t + 0.01 * c - 0.005 * s + 0.008 * fix + 0.004 * (seed - 2) * (1 + t)
        rows.append({
            "experiment": "t8", "run": f"{label}/{stack}/{tagger}/{fix}/seed-{seed}", "corpus": corpus, "corpus_options": options,
            "corpus_label": label, "subsample": None, "embeddings": stack, "tagger": tagger, "entity_fix": fix, "seed": seed, "task": "ner",
            "test_score": f1, "test_f1": f1, "test_precision": f1 - 0.05, "test_recall": f1 + 0.03, "dev_score": f1, "dev_f1": f1,
        })
    return pd.DataFrame(rows)


def drawn(figure: Figure) -> Axes:
    """Lay the figure out and render it; its only panel."""
    figure.canvas.draw()
    (axis,) = figure.axes
    return axis


def bar_rows(axis: Axes) -> list[BarContainer]:
    return [container for container in axis.containers if isinstance(container, BarContainer)]


def reference_lines(axis: Axes, gid: str) -> list[tuple[float, float, float]]:
    """(x from, x to, y) of each segment of the reference collection `gid` (data coordinates)."""
    collections = [c for c in axis.collections if isinstance(c, LineCollection) and c.get_gid() == gid]
    return [(min(s[:, 0]), max(s[:, 0]), s[0, 1]) for c in collections for s in c.get_segments()]


def row_key(container: BarContainer) -> tuple[str, bool]:
    """`"map + Entity-Fix"` -> `("map", True)` (one stack: its name is in the legend title, not the labels)."""
    parts = container.get_label().split(" + ")
    return parts[0], parts[-1] == "Entity-Fix"


def stats(runs: pd.DataFrame, column: str = "test_f1") -> pd.DataFrame:
    return runs.groupby(["embeddings", "tagger", "entity_fix", "corpus_label"])[column].agg(["mean", "std"]) * 100


@pytest.mark.parametrize("taggers, stacks", [(TAGGERS, ("proposed",)), (("map", "map-crf", "lcrf-ner", "cse", "bilstm-crf", "bilstm-lcrf-ner"), ("a", "b"))])
def test_legend_outside_axes_and_nothing_overlaps(taggers, stacks):
    figure = comparison_figure(fake_runs(taggers=taggers, stacks=stacks), table8=True)
    axis = drawn(figure)
    legend, frame = axis.get_legend().get_window_extent(), axis.get_window_extent()
    assert not legend.overlaps(frame)
    assert legend.x0 > frame.x1  # right of the panel
    bars = [bar.get_window_extent() for container in bar_rows(axis) for bar in container]
    assert len(bars) == len(taggers) * len(stacks) * 2 * len(CORPORA)
    assert not any(bar.overlaps(legend) for bar in bars)
    ticks = [label.get_window_extent() for label in axis.get_xticklabels()]
    texts = [*ticks, axis.yaxis.label.get_window_extent(), axis.title.get_window_extent(), legend]
    assert all(figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1 and figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1 for box in texts)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(ticks, 2))
    assert not any(tick.overlaps(legend) for tick in ticks)
    assert Bbox.union(ticks).y1 <= frame.y0  # under the panel


def test_every_row_has_its_own_colour_and_hatch():
    axis = drawn(comparison_figure(fake_runs(stacks=("a", "b"))))
    looks = {row_key(c) + (c.get_label(),): (tuple(c.patches[0].get_facecolor()), c.patches[0].get_hatch() or "") for c in bar_rows(axis)}
    assert len(looks) == 2 * len(TAGGERS) * 2
    assert len(set(looks.values())) == len(looks)
    for container in bar_rows(axis):  # the bars of a row all look alike
        assert {(tuple(bar.get_facecolor()), bar.get_hatch() or "") for bar in container} == {looks[row_key(container) + (container.get_label(),)]}
    plain = {label.removesuffix(" + Entity-Fix"): look for (_, fix, label), look in looks.items() if not fix}
    for (_, fix, label), (colour, hatch) in looks.items():  # Entity-Fix: the plain row's colour with a hatch
        if fix:
            assert colour == plain[label.removesuffix(" + Entity-Fix")][0] and hatch and not plain[label.removesuffix(" + Entity-Fix")][1]
    assert len({colour for colour, _ in looks.values()}) == 2 * len(TAGGERS)


def test_row_styles_stay_distinct_beyond_the_palette():
    index = pd.MultiIndex.from_product([[f"stack{i}" for i in range(30)], ["map"], [False, True]], names=["embeddings", "tagger", "entity_fix"])
    styles = plot.row_styles(index)
    assert len(set(styles)) == 60
    unfixed = pd.MultiIndex.from_product([[f"stack{i}" for i in range(25)], ["map"]], names=["embeddings", "tagger"])
    assert len(set(plot.row_styles(unfixed))) == 25


@pytest.mark.parametrize("table8", [False, True])
def test_y_range_shows_the_differences_and_holds_bars_and_references(table8):
    runs = fake_runs()
    axis = drawn(comparison_figure(runs, table8=table8))
    bottom, top = axis.get_ylim()
    table = stats(runs)
    lows, highs = table["mean"] - table["std"], table["mean"] + table["std"]
    references = [y for gid in ("paper", "best-published") for _, _, y in reference_lines(axis, gid)]
    assert 0 < bottom <= min(lows.min(), *references)
    assert top >= max(highs.max(), *references)
    assert bottom > lows.min() - 3 and top < max(highs.max(), *references) + 6  # a little below and above, not from 0
    assert "not 0" in axis.get_ylabel()
    assert [line for line in axis.lines if line.get_gid() == "broken-axis"]
    # the bars are the means, their error bars the std over seeds
    checked = 0
    for container in bar_rows(axis):
        tagger, fix = row_key(container)
        segments = container.errorbar.lines[2][0].get_segments()  # one vertical segment per bar: (x, mean - std), (x, mean + std)
        for bar, label, segment in zip(container, [t.get_text() for t in axis.get_xticklabels()], segments):
            cell = table.loc[("proposed", tagger, fix, LABEL_OF_COLUMN.get(label, label))]
            assert bar.get_height() == pytest.approx(cell["mean"])
            (x0, low), (x1, high) = segment
            assert x0 == x1 == pytest.approx(bar.get_x() + bar.get_width() / 2)
            assert (low, high) == (pytest.approx(cell["mean"] - cell["std"]), pytest.approx(cell["mean"] + cell["std"]))
            checked += 1
    assert checked == len(table)


def test_paper_ticks_over_the_bars_with_a_counterpart():
    axis = drawn(comparison_figure(fake_runs(), table8=True))
    ticks = reference_lines(axis, "paper")
    labels = [t.get_text() for t in axis.get_xticklabels()]
    assert labels == ["H. Arendt", "Sturm", "LER CG"]  # the table's names, in its order
    labels = [LABEL_OF_COLUMN[label] for label in labels]
    found = 0
    for container in bar_rows(axis):
        for bar, label in zip(container, labels):
            over = [y for x0, x1, y in ticks if x0 == pytest.approx(bar.get_x()) and x1 == pytest.approx(bar.get_x() + bar.get_width())]
            expected = PAPER_TICKS.get(row_key(container), {}).get(label)
            assert over == ([pytest.approx(expected)] if expected else [])
            found += bool(over)
    assert found == len(ticks) == len(PAPER_TICKS) * len(CORPORA)
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend.count("paper (Zöllner et al. 2021, Table 8)") == 1
    assert legend.count("best published (Zöllner et al. 2021, Table 8)") == 1


def test_best_published_line_across_each_group_without_table8():
    runs = fake_runs()
    axis = drawn(comparison_figure(runs))
    assert reference_lines(axis, "paper") == []
    lines = reference_lines(axis, "best-published")
    labels = [t.get_text() for t in axis.get_xticklabels()]
    assert sorted(y for _, _, y in lines) == sorted(BEST.values())
    for group, label in enumerate(labels):
        bars = [container[group] for container in bar_rows(axis)]
        (line,) = [(x0, x1, y) for x0, x1, y in lines if x0 < group < x1]
        assert line[2] == pytest.approx(BEST[label])
        assert line[0] <= min(bar.get_x() for bar in bars) and line[1] >= max(bar.get_x() + bar.get_width() for bar in bars)
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend.count("best published (Zöllner et al. 2021, Table 8)") == 1
    assert "paper (Zöllner et al. 2021, Table 8)" not in legend


def test_groups_found_by_corpus_and_options_not_by_label():
    corpora = {"LER, default granularity": ("ler", {}), "my own corpus": ("mine", {}), "Sturm (renamed)": ("sturm", {})}
    axis = drawn(comparison_figure(fake_runs(corpora=corpora)))
    lines = reference_lines(axis, "best-published")
    by_group = {[t.get_text() for t in axis.get_xticklabels()][round((x0 + x1) / 2)]: y for x0, x1, y in lines}
    assert by_group == {"LER, default granularity": pytest.approx(94.55), "Sturm (renamed)": pytest.approx(87.83)}


def test_table8_figure_leaves_out_corpora_the_table_has_not():
    corpora = {"my own corpus": ("mine", {}), "sturm": ("sturm", {}), "arendt": ("arendt", {})}
    axis = drawn(comparison_figure(fake_runs(corpora=corpora), table8=True))
    assert [t.get_text() for t in axis.get_xticklabels()] == ["H. Arendt", "Sturm"]
    assert len(bar_rows(axis)) == len(TAGGERS) * 2 and all(len(container) == 2 for container in bar_rows(axis))


def test_anchors_of_other_languages_are_drawn_and_named_as_anchors():
    corpora = {"wnut17": ("wnut17", {}), "ud-en-ewt (xpos)": ("ud-en-ewt", {"tags": "xpos"}), "ud-en-ewt": ("ud-en-ewt", {})}
    axis = drawn(comparison_figure(fake_runs(corpora=corpora)))
    lines = reference_lines(axis, "best-published")
    by_group = {[t.get_text() for t in axis.get_xticklabels()][round((x0 + x1) / 2)]: y for x0, x1, y in lines}
    assert by_group == {"wnut17": pytest.approx(49.49), "ud-en-ewt (xpos)": pytest.approx(97.85)}  # no anchor for UPOS
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert "anchor (Akbik et al. 2018, Penn Treebank WSJ, with ELMo (not EWT))" in legend
    assert sorted(t.get_text() for t in axis.texts if t.get_text().startswith("anchor ")) == ["anchor 49.49", "anchor 97.85"]


def test_no_references_on_other_scores_than_test_f1():
    runs = fake_runs()
    axis = drawn(comparison_figure(runs, metric="precision", table8=True))
    assert reference_lines(axis, "paper") == reference_lines(axis, "best-published") == []
    table = stats(runs, "test_precision")
    bottom, top = axis.get_ylim()
    assert 0 < bottom <= (table["mean"] - table["std"]).min() and top >= (table["mean"] + table["std"]).max()
    assert top < 85  # the F1 references (87.83 and up) do not stretch it


def test_y_axis_from_0_has_no_broken_axis_mark():
    runs = fake_runs().assign(test_f1=lambda frame: np.where(frame["tagger"] == "map", 0.004, frame["test_f1"]))
    axis = drawn(comparison_figure(runs, metric="f1"))
    assert axis.get_ylim()[0] == 0
    assert not [line for line in axis.lines if line.get_gid() == "broken-axis"] and "not 0" not in axis.get_ylabel()


def test_references_are_the_best_of_table8():
    for (corpus, granularity), column in COLUMNS.items():
        i = list(COLUMNS).index((corpus, granularity))
        best = max(values[i] for fixes in PAPER.values() for values in fixes.values())
        assert REFERENCES[(corpus, granularity)].value == best
        assert best_published(corpus, {"granularity": granularity} if granularity else {}).value == best
    assert best_published("ler", {}).value == 94.55 and best_published("no-such-corpus", {}) is None


@pytest.mark.parametrize("table8", [False, True])
def test_cli_plots_the_committed_table8(tmp_path, monkeypatch, table8):
    figures = []
    original = plot.write_plot
    monkeypatch.setattr(plot, "write_plot", lambda *args, **kwargs: figures.append(original(*args, **kwargs)))
    target = tmp_path / "t8.png"
    result = CliRunner().invoke(cli, ["results", str(ROOT / "results" / "table8-de-1h"), f"--plot={target}", *(["--layout", "table8"] if table8 else [])])
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axis = drawn(figures[0])
    assert len(reference_lines(axis, "paper")) == (8 * 4 if table8 else 0)  # map, map-crf, lcrf-ner, cse, each ± Entity-Fix
    assert sorted(y for _, _, y in reference_lines(axis, "best-published")) == [80.48, 87.83, 94.55, 94.88]
    labels = [t.get_text() for t in axis.get_xticklabels()]
    assert labels == (["H. Arendt", "Sturm", "LER CG", "LER FG"] if table8 else ["arendt", "ler (10% train)", "ler (coarse, 10% train)", "sturm"])
    assert not axis.get_legend().get_window_extent().overlaps(axis.get_window_extent())
