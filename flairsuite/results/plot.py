"""Grouped bar chart of the comparison tables: groups = corpora, bars = stack × tagger, error bars = std."""

from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from flairsuite.atomic import atomic_file
from flairsuite.results.tables import comparison_table


def bar_label(key: object) -> str:
    """`("proposed", "bilstm-crf", True)` -> `"proposed + bilstm-crf + Entity-Fix"`."""
    parts = key if isinstance(key, tuple) else (key,)
    return " + ".join("Entity-Fix" if part is True else str(part) for part in parts if part is not False)


def draw_bars(axis: Axes, table: pd.DataFrame) -> None:
    """One bar per table row in each corpus group; the std (0 when n = 1) as error bar."""
    means = table.xs("mean", axis=1, level="stat")
    stds = table.xs("std", axis=1, level="stat").fillna(0)
    width = 0.8 / len(means)
    for i, key in enumerate(means.index):
        offset = (i - (len(means) - 1) / 2) * width
        positions = [group + offset for group in range(len(means.columns))]
        axis.bar(positions, means.loc[key], width, yerr=stds.loc[key], capsize=3, label=bar_label(key))
    axis.set_xticks(range(len(means.columns)), [str(c) for c in means.columns])
    axis.set_xlim(-0.5, len(means.columns) - 0.5)
    axis.grid(axis="y", alpha=0.3)
    axis.legend(fontsize="small")


def comparison_figure(runs: pd.DataFrame, metric: str = "f1", split: str = "test") -> Figure:
    """One panel per experiment of `runs` (no pyplot state: the PNG is drawn by matplotlib's Agg canvas)."""
    experiments = sorted(runs["experiment"].unique())
    figure = Figure(figsize=(8, 3.5 * len(experiments)))
    for axis, experiment in zip(figure.subplots(len(experiments), 1, squeeze=False)[:, 0], experiments):
        draw_bars(axis, comparison_table(runs[runs["experiment"] == experiment], metric, split))
        axis.set_title(str(experiment))
        axis.set_ylabel(f"{split} {metric} (%)")
    figure.tight_layout()
    return figure


def write_plot(runs: pd.DataFrame, path: Path, metric: str = "f1", split: str = "test") -> Figure:
    """Write the comparison chart of `runs` to `path` as PNG, atomically; the figure drawn."""
    figure = comparison_figure(runs, metric, split)
    with atomic_file(path) as temp:
        figure.savefig(temp, format="png", dpi=120)
    return figure
