"""Learning curves: test F1 against how much the model saw, to show what more data or LM training buys.

`flairsuite results DIR --curve train-fraction` puts the share of the training set on the x-axis
(the runs' `subsample`: 10 %, 25 %, ... of train; none is 100 %), `--curve lm-chars` the characters
the runs' character LMs were trained on (`artifact_summaries`, the mean over the stack's `charlm:`
members, in millions). One panel per task (corpus and options), one line per stack × tagger
(× Entity-Fix) with `train-fraction`, per tagger (× Entity-Fix) with `lm-chars` (there the stacks
differ by their LMs, i.e. along x); points are means over seeds with the sample std as error bars,
and the task's reference score (`references.REFERENCES`: best published or anchor) is a dashed line. Shares of train
and LM characters lie on a log2 axis ticked at the runs' values: what each doubling buys is the slope.
`--curve epochs` draws the dev score after each training epoch (the runs' `history`) per stack × tagger: whether
a run capped at N epochs was still rising when the cap ended it (a point's n falls where runs stopped earlier).
Written as PNG, atomically, without pyplot state.
"""

import re
import textwrap
from pathlib import Path
from typing import Callable, Optional

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file
from flairsuite.results.collect import SCORE, trained_runs
from flairsuite.results.references import REFERENCES, known_task
from flairsuite.results.tables import metric_title, score_column

SUBSAMPLE_PERCENT = re.compile(r"^([0-9.]+)% of train")
LEGEND_CHARS = 36  # legend labels wrap at this width: a long reference source must not squeeze the axes


def train_fraction(run: pd.Series) -> Optional[float]:
    """The run's share of train in percent (100 without a subsample)."""
    note = run.get("subsample")
    if note is None or (isinstance(note, float) and np.isnan(note)):
        return 100.0
    match = SUBSAMPLE_PERCENT.match(str(note))
    return float(match.group(1)) if match else None


def lm_chars(run: pd.Series) -> Optional[float]:
    """Millions of characters the run's character LMs were trained on (mean over its `charlm:` members)."""
    summaries = run.get("artifact_summaries") or {}
    chars = [summary.get("chars") for spec, summary in summaries.items() if spec.startswith("charlm:") and summary.get("chars")]
    return float(np.mean(chars)) / 1e6 if chars else None


CURVES: dict[str, tuple[Optional[Callable[[pd.Series], Optional[float]]], str, tuple[str, ...]]] = {
    # name -> (x of a run, or None: one point per epoch of its history; x-axis label; the keys of a line)
    "train-fraction": (train_fraction, "share of the training set (%)", ("embeddings", "tagger", "entity_fix")),
    "lm-chars": (lm_chars, "characters the LM pair was trained on (millions)", ("tagger", "entity_fix")),
    "epochs": (None, "training epoch", ("embeddings", "tagger")),
}


DOUBLING_AXES = ("train-fraction", "lm-chars")  # drawn on a log2 x-axis, ticked at the runs' values


def by_epoch(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, epoch) of the runs' histories: x = the epoch, `score` = the dev score after it (percent).
    A run's Entity-Fix variant shares its training, so only the runs themselves count."""
    rows = []
    for _, run in trained_runs(runs).iterrows():
        key = f"dev_{run['metric']}"
        rows += [{**run.to_dict(), "x": float(point["epoch"]), "score": point[key] * 100}
                 for point in run["history"] if point.get(key) is not None]
    return pd.DataFrame(rows, columns=[*runs.columns, "x", "score"])


def task_label(corpus: str, options: dict) -> str:
    """`ler` with granularity coarse -> `ler (coarse)`."""
    return corpus + (f" ({', '.join(str(v) for v in options.values())})" if options else "")


def curve_points(runs: pd.DataFrame, curve: str, metric: str = SCORE, split: str = "test") -> pd.DataFrame:
    """Mean, std and n of the score (percent) per task, line and x."""
    if curve not in CURVES:
        raise FlairsuiteError(f"unknown curve '{curve}' (known: {', '.join(CURVES)})")
    x_of, _, line_keys = CURVES[curve]
    if x_of is None:
        if split != "dev" or metric != SCORE:
            raise FlairsuiteError(f"--curve {curve} draws the dev score the runs recorded after each epoch: use --split dev and the default --metric")
        runs = by_epoch(runs)
    else:
        runs = runs.assign(x=runs.apply(x_of, axis=1), score=runs[score_column(metric, split)] * 100)
    frame = runs.assign(
        task=[task_label(c, o or {}) for c, o in zip(runs["corpus"], runs["corpus_options"])],
        line=runs[list(line_keys)].apply(lambda row: " + ".join(str(v) if v is not True else "Entity-Fix" for v in row if v is not False), axis=1),
    ).dropna(subset=["x"]) if not runs.empty else runs
    if frame.empty:
        hint = {"lm-chars": " (char-LM runs with a summary.json)", "epochs": " (runs with a training history)"}.get(curve, "")
        raise FlairsuiteError(f"no runs with an x for --curve {curve}{hint}")
    points = frame.groupby(["task", "line", "x"])["score"].agg(["mean", "std", "count"]).rename(columns={"count": "n"}).reset_index()
    tasks = frame.drop_duplicates("task").set_index("task")
    points["best"] = [REFERENCES.get(known_task(tasks.loc[t, "corpus"], tasks.loc[t, "corpus_options"] or {}) or ("", "")) for t in points["task"]]
    return points


def curve_figure(runs: pd.DataFrame, curve: str, metric: str = SCORE, split: str = "test") -> Figure:
    """One panel per task, one line per `CURVES[curve]` keys, error bars = std over seeds."""
    points = curve_points(runs, curve, metric, split)
    title = metric_title(runs, metric)
    tasks = sorted(points["task"].unique())
    lines = sorted(points["line"].unique())  # one colour per line across the panels
    palette = [f"C{i}" for i in range(10)] if len(lines) <= 10 else [matplotlib.colormaps["tab20"](i % 20) for i in range(len(lines))]
    colors = dict(zip(lines, palette))
    marker_size = 3 if curve == "epochs" else 6
    figure = Figure(figsize=(7.5, 3.6 * len(tasks)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(tasks), 1, squeeze=False)[:, 0]
    for axis, task in zip(axes, tasks):
        chosen = points[points["task"] == task]
        for line, group in chosen.groupby("line", sort=True):
            group = group.sort_values("x")
            axis.errorbar(group["x"], group["mean"], yerr=group["std"].fillna(0), marker="o", markersize=marker_size, capsize=3, label=line,
                          color=colors[line])
        best = chosen["best"].dropna()
        if metric in ("f1", SCORE) and split == "test" and not best.empty:
            reference = best.iloc[0]
            label = f"{reference.kind} {reference.value:.2f} ({reference.source})"
            axis.axhline(reference.value, color="0.3", linestyle=(0, (4, 2)), linewidth=1.2, label=label)
        axis.set_title(f"{task}: {split} {title} (%), mean ± std over seeds")
        axis.set_xlabel(CURVES[curve][1])
        if curve in DOUBLING_AXES:  # a doubling of data is one step along x: equal gains per doubling lie on a line
            shares = sorted(chosen["x"].unique())
            axis.set_xscale("log", base=2)
            axis.set_xticks(shares, [f"{share:.3g}" for share in shares])
            axis.minorticks_off()
            axis.set_xlabel(f"{CURVES[curve][1]}, log scale")
        axis.set_ylabel(f"{split} {title} (%)")
        axis.grid(alpha=0.3)
        handles, labels = axis.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: labels[i].startswith(("best published", "anchor")))  # the lines, then the reference
        labels = [textwrap.fill(label, LEGEND_CHARS) for label in labels]
        axis.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                    fontsize="small")
    return figure


def write_curve(runs: pd.DataFrame, curve: str, path: Path, metric: str = SCORE, split: str = "test") -> Figure:
    """Write the learning curve of `runs` to `path` as PNG, atomically; the figure drawn."""
    figure = curve_figure(runs, curve, metric, split)
    with atomic_file(path) as temp:
        figure.savefig(temp, format="png", dpi=120)
    return figure
