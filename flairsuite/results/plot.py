"""Grouped bar chart of the comparison tables: groups = corpora, bars = stack × tagger (× Entity-Fix), error bars = std.

One panel per experiment, its legend right of the panel. Each row has its own colour; the
Entity-Fix variant of a row shares it, hatched. The y-axis runs from a little below the lowest
mean − std (or reference) to a little above the highest mean + std, so differences of a point
show; a broken-axis mark on the y-axis and the axis label say that it does not start at 0.

For the test score (the scores the references are), each corpus group gets a dashed line at the
reference score of its task (`references.REFERENCES`: best published, or an anchor), and with `table8=True` each bar whose
tagger has a counterpart in Zöllner et al. 2021, Table 8 a short black tick at the paper's value.
"""

from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from flairsuite.files.atomic import atomic_file
from flairsuite.results.collect import SCORE
from flairsuite.results.references import REFERENCES, ZOELLNER_2021_TABLE8, known_task
from flairsuite.results.table8 import paper_value, table8_order, table8_runs
from flairsuite.results.tables import FIX, comparison_table, labeled_by_metric, metric_title

GROUP_SHARE = 0.8  # share of a corpus group's slot the bars fill
BAR_INCHES = 0.15  # width of one bar
MAX_BAR_INCHES = 0.35  # widest a bar gets when a panel has room to spare
CHAR_INCHES = 0.075  # width of a character of a tick or legend label, roughly
# 20 colours told apart at a glance: tab10, then the light halves of tab20's pairs; a further
# round of the palette adds a pattern, so up to 100 rows apart from Entity-Fix are all distinct.
PALETTE = [*colormaps["tab10"].colors, *colormaps["tab20"].colors[1::2]]
ROUND_HATCHES = ("", "..", "oo", "xx", "**")
FIX_HATCH = "////"
PAPER_LABEL = f"paper ({ZOELLNER_2021_TABLE8})"
PAPER_GID = "paper"
BEST_GID = "best-published"


class RowStyle(NamedTuple):
    """How one row's bars look."""

    color: tuple[float, ...]
    hatch: str


def bar_label(key: object) -> str:
    """`("proposed", "bilstm-crf", True)` -> `"proposed + bilstm-crf + Entity-Fix"`."""
    parts = key if isinstance(key, tuple) else (key,)
    return " + ".join("Entity-Fix" if part is True else str(part) for part in parts if part is not False)


def row_fields(index: pd.Index, key: object) -> dict[str, object]:
    """A table row key by level name: `{"embeddings": ..., "tagger": ..., "entity_fix": ...}`."""
    return dict(zip(index.names, key if isinstance(key, tuple) else (key,)))


def row_styles(index: pd.Index) -> list[RowStyle]:
    """One colour per row apart from Entity-Fix, which adds a hatch: every (colour, hatch) pair is distinct."""
    numbers: dict[tuple, int] = {}
    styles = []
    for key in index:
        fields = row_fields(index, key)
        number = numbers.setdefault(tuple(v for name, v in fields.items() if name != FIX), len(numbers))
        hatch = ROUND_HATCHES[number // len(PALETTE) % len(ROUND_HATCHES)] + (FIX_HATCH if fields.get(FIX) else "")
        styles.append(RowStyle(PALETTE[number % len(PALETTE)], hatch))
    return styles


def row_labels(index: pd.Index) -> tuple[list[str], str]:
    """Legend labels of the rows and the legend's title: a stack all rows share goes to the title."""
    stacks = set(index.get_level_values("embeddings")) if "embeddings" in index.names else set()
    if len(stacks) == 1 and index.nlevels > 1:
        return [bar_label(tuple(v for name, v in row_fields(index, key).items() if name != "embeddings")) for key in index], f"stack: {stacks.pop()}"
    return [bar_label(key) for key in index], " + ".join(index.names).replace(FIX, "Entity-Fix")


def group_tasks(runs: pd.DataFrame) -> dict[str, Optional[tuple[str, str]]]:
    """corpus_label -> the task (corpus, granularity) of its runs, None for a corpus the registry lacks."""
    first = runs.drop_duplicates("corpus_label")
    options = first["corpus_options"] if "corpus_options" in first else [{}] * len(first)
    return {label: known_task(corpus, option or {}) for label, corpus, option in zip(first["corpus_label"], first["corpus"], options)}


def y_range(values: list[float]) -> tuple[float, float]:
    """From a little below the lowest to a little above the highest of `values`; not below 0 unless a value is."""
    low, high = min(values), max(values)
    pad = max(0.05 * (high - low), 0.5)
    bottom = low - pad
    return (0.0 if bottom < 0 <= low else bottom), high + 1.6 * pad  # room for the value labels of the best published lines


def mark_broken_axis(axis: Axes) -> None:
    """Two short slanted strokes across the foot of the y-axis: it does not start at 0."""
    for y in (0.012, 0.032):
        axis.plot([-0.012, 0.012], [y - 0.008, y + 0.008], transform=axis.transAxes, color="black", linewidth=1, clip_on=False, gid="broken-axis")


class Panel(NamedTuple):
    """One experiment's table and the groups' tasks, before drawing."""

    title: str
    table: pd.DataFrame
    tasks: dict[str, Optional[tuple[str, str]]]


def draw_rows(axis: Axes, means: pd.DataFrame, stds: pd.DataFrame, width: float) -> tuple[list[BarContainer], list[np.ndarray]]:
    """One bar per row in each corpus group, the std as error bar; the bar containers and each row's bar centres."""
    labels, _ = row_labels(means.index)
    containers: list[BarContainer] = []
    centres = []
    for i, (key, style, label) in enumerate(zip(means.index, row_styles(means.index), labels)):
        positions = np.arange(len(means.columns)) + (i - (len(means) - 1) / 2) * width
        bars = axis.bar(
            positions, means.loc[key], width, yerr=stds.loc[key], label=label, color=style.color, hatch=style.hatch,
            edgecolor="white", linewidth=0.5, error_kw={"ecolor": "0.15", "elinewidth": 1, "capsize": 2},
        )
        containers.append(bars)
        centres.append(positions)
    return containers, centres


def draw_paper(axis: Axes, means: pd.DataFrame, centres: list[np.ndarray], tasks: list, width: float) -> tuple[list[Artist], list[float]]:
    """A short black tick at the paper's value over each bar whose tagger and task Table 8 has; the artist (if any) and the values."""
    ticks = []
    for key, positions in zip(means.index, centres):
        fields = row_fields(means.index, key)
        for position, mean, task in zip(positions, means.loc[key], tasks):
            value = paper_value(str(fields.get("tagger")), bool(fields.get(FIX, False)), task) if task else None
            if value is not None and not pd.isna(mean):
                ticks.append((position, value))
    if not ticks:
        return [], []
    xs, ys = np.array([x for x, _ in ticks]), [y for _, y in ticks]
    return [axis.hlines(ys, xs - width / 2, xs + width / 2, colors="black", linewidth=2.2, zorder=4, label=PAPER_LABEL, gid=PAPER_GID)], ys


def draw_best(axis: Axes, tasks: list, share: float) -> tuple[list[Artist], list[float]]:
    """A dashed line across each corpus group at its task's best published score, labelled with the value; the artists (one per source) and the values."""
    best = {group: REFERENCES[task] for group, task in enumerate(tasks) if task in REFERENCES}
    reach = share / 2 + 0.04
    lines: list[Artist] = []
    for label in sorted({reference.label for reference in best.values()}):
        chosen = {group: reference.value for group, reference in best.items() if reference.label == label}
        groups = np.array(list(chosen))
        lines.append(
            axis.hlines(
                list(chosen.values()), groups - reach, groups + reach, colors="0.3", linestyles=(0, (4, 2)), linewidth=1.4, zorder=3,
                label=label, gid=BEST_GID,
            )
        )
    for group, reference in best.items():  # above the line: the paper's ticks, at most the best, stay below it
        axis.text(group - reach, reference.value, f"{reference.short} {reference.value:.2f}", ha="left", va="bottom", fontsize="x-small",
                  color="0.3", zorder=4, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none", "pad": 1})  # readable over a bar
    return lines, [reference.value for reference in best.values()]


def draw_panel(axis: Axes, panel: Panel, metric: str, split: str, table8: bool, axes_inches: float, title: str) -> None:
    """Bars, error bars and reference markers of one experiment, legend right of the axes (about `axes_inches` wide)."""
    means = panel.table.xs("mean", axis=1, level="stat")
    stds = panel.table.xs("std", axis=1, level="stat").fillna(0)
    n_rows, n_groups = means.shape
    share = min(GROUP_SHARE, n_groups * n_rows * MAX_BAR_INCHES / axes_inches)  # few bars in a wide figure: no slabs
    containers, centres = draw_rows(axis, means, stds, share / n_rows)
    handles: list[object] = [*containers]  # legend: the rows, then the references
    extremes = [*(means - stds).stack().dropna(), *(means + stds).stack().dropna()]
    if metric in ("f1", SCORE) and split == "test":
        tasks = [panel.tasks.get(label) for label in means.columns]
        for artists, values in [draw_paper(axis, means, centres, tasks, share / n_rows) if table8 else ([], []), draw_best(axis, tasks, share)]:
            handles += artists
            extremes += values
    bottom, top = y_range(extremes)
    axis.set_ylim(bottom, top)
    axis.set_xticks(range(n_groups), [str(c) for c in means.columns])
    axis.set_xlim(-0.5, n_groups - 0.5)
    axis.grid(axis="y", alpha=0.3)
    axis.set_axisbelow(True)
    axis.set_title(f"{panel.title}: {split} {title} (%), mean ± std over seeds")
    if bottom > 0:
        mark_broken_axis(axis)
    axis.set_ylabel(f"{split} {title} (%)" + (f"; axis starts at {bottom:.1f}, not 0" if bottom > 0 else ""))
    axis.legend(
        handles=handles, title=row_labels(means.index)[1], loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
        fontsize="small", title_fontsize="small", alignment="left",
    )


class Room(NamedTuple):
    """Inches one panel needs: its axes' width, its legend's width, its height."""

    axes: float
    legend: float
    height: float


MARGIN_INCHES = 1.2  # y-axis label, tick labels and padding


def panel_room(panel: Panel, reference_labels: list[str]) -> Room:
    """Wider with more bars, corpora and longer tick labels; the legend wider with longer labels; taller with more legend entries."""
    n_rows, n_groups = len(panel.table.index), len(panel.table.columns.get_level_values(0).unique())
    longest_tick = max(len(str(label)) for label in panel.table.columns.get_level_values(0))
    slot = max(n_rows * BAR_INCHES / GROUP_SHARE, longest_tick * CHAR_INCHES + 0.3)
    labels, _ = row_labels(panel.table.index)
    legend = 0.8 + 0.065 * max(len(label) for label in [*labels, *reference_labels])
    return Room(max(4.5, n_groups * slot), legend, max(6.5, 0.23 * (n_rows + 1 + len(reference_labels)) + 1.6))


def panel_table(runs: pd.DataFrame, metric: str, split: str, table8: bool) -> pd.DataFrame:
    """The comparison table one panel draws; with `table8` its columns in the paper's order."""
    table = comparison_table(runs, metric, split)
    return table[table8_order(table)] if table8 else table


def comparison_figure(runs: pd.DataFrame, metric: str = SCORE, split: str = "test", table8: bool = False) -> Figure:
    """One panel per experiment of `runs`; `table8`: also the paper's values as ticks over the bars (no pyplot state: an Agg canvas)."""
    if table8:  # the table's column names and order (H. Arendt, Sturm, LER CG, LER FG), other corpora left out as there
        runs = table8_runs(runs)
    groups = [(str(experiment), labeled_by_metric(group, metric)) for experiment, group in runs.groupby("experiment", sort=True)]
    panels = [Panel(experiment, panel_table(group, metric, split, table8), group_tasks(group)) for experiment, group in groups]
    titles = [metric_title(group, metric) for _, group in groups]
    references = metric in ("f1", SCORE) and split == "test"  # the references are test E-F1 (NER corpora only)
    reference_labels = ([PAPER_LABEL] if table8 else []) + sorted({r.label for r in REFERENCES.values()})
    rooms = [panel_room(panel, reference_labels if references else []) for panel in panels]
    width = max(room.axes + room.legend for room in rooms) + MARGIN_INCHES
    figure = Figure(figsize=(width, sum(room.height for room in rooms)), layout="constrained")
    FigureCanvasAgg(figure)  # figure.canvas.draw() works, still without pyplot
    axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=[room.height for room in rooms])[:, 0]
    for axis, panel, room, title in zip(axes, panels, rooms, titles):
        draw_panel(axis, panel, metric, split, table8, width - room.legend - MARGIN_INCHES, title)
    return figure


def write_plot(runs: pd.DataFrame, path: Path, metric: str = SCORE, split: str = "test", table8: bool = False) -> Figure:
    """Write the comparison chart of `runs` to `path` as PNG, atomically; the figure drawn."""
    figure = comparison_figure(runs, metric, split, table8)
    with atomic_file(path) as temp:
        figure.savefig(temp, format="png", dpi=120)
    return figure
