"""Tables and the plot of an active-learning simulation (`flairsuite.experiments.simulation` writes its files).

Layout below `results/<experiment>/`: `simulation.json` (what was simulated), and per corpus, stack and round
tagger `<corpus>/<stack>/<tagger>/<strategy>/seed-<n>/` with `selection.json` (the sentences of each round) and
`round-<k>.json` (the scores after round k; round 0: the seed set), `final-<tagger>.json` (`final_check`), and
`<corpus>/<stack>/<tagger>/full/seed-<n>.json` (the round tagger on all of train).

`simulation_report` prints, per corpus x stack x tagger: test F1 after each round per strategy (mean ± std over
seeds, with the mean annotated tokens), and a summary: each strategy's F1 at the full budget, the sentences it
needs to reach the F1 that `random` reaches at the full budget (the first round whose mean F1 over seeds is at
least that, as sentences and as a share of the budget; "not reached" otherwise), its final F1 as a share of the
full-data F1, and the budget as a share of train. `write_simulation_plot` draws F1 against annotated sentences
and against tokens per strategy, mean ± std bands, the full-data F1 as a dashed line.
"""

from pathlib import Path
from typing import Optional

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from flairsuite.files.atomic import atomic_file
from flairsuite.files.summary_file import read_record
from flairsuite.settings_schema import FRACTION, INTEGER, NON_NEGATIVE_INTEGER, TEXT, Rule

STATE_FILE = "simulation.json"
SELECTION_FILE = "selection.json"
ROUND_PREFIX = "round-"
FULL_FOLDER = "full"
FINAL_PREFIX = "final-"
PLOT_FILE = "active-learning.png"
TABLE_FILE = "active-learning.md"
CSV_FILE = "rounds.csv"
GROUP = ["corpus", "stack", "tagger"]


def is_simulation(folder: Path) -> bool:
    """Whether `folder` holds an active-learning simulation."""
    return (folder / STATE_FILE).is_file()


def round_file(folder: Path, index: int) -> Path:
    """The scores of round `index` of one simulation folder."""
    return folder / f"{ROUND_PREFIX}{index:02d}.json"


WHERE = {key: TEXT for key in GROUP}
ROUND_RECORD = {**WHERE, "strategy": TEXT, "seed": INTEGER, "round": NON_NEGATIVE_INTEGER, "sentences": NON_NEGATIVE_INTEGER,
                "tokens": NON_NEGATIVE_INTEGER, "dev": FRACTION, "test": FRACTION}
REFERENCE_RECORD = {**WHERE, "kind": TEXT, "seed": INTEGER, "sentences": NON_NEGATIVE_INTEGER, "test": FRACTION}
TRAIN_SENTENCES = Rule("an object of corpus: train sentences", lambda v: isinstance(v, dict) and all(NON_NEGATIVE_INTEGER(n) for n in v.values()))


def rounds_frame(out: Path) -> pd.DataFrame:
    """One row per finished round of every simulation below `out`: corpus, stack, tagger, strategy, seed, round, sentences, tokens, dev, test."""
    rows = [read_record(path, ROUND_RECORD, remedy="delete it to recompute that round") for path in sorted(out.rglob(f"{ROUND_PREFIX}*.json"))]
    return pd.DataFrame([{key: row[key] for key in ROUND_RECORD} for row in rows], columns=list(ROUND_RECORD))


def references_frame(out: Path) -> pd.DataFrame:
    """One row per full-data reference run and final-check run: corpus, stack, tagger, kind (`full` or `final-<tagger>`), strategy, seed, test."""
    rows = [read_record(path, REFERENCE_RECORD, {"strategy": TEXT}, remedy="delete it to train that reference again")
            for path in sorted(out.rglob("*.json")) if path.parent.name == FULL_FOLDER or path.name.startswith(FINAL_PREFIX)]
    columns = [*GROUP, "kind", "strategy", "seed", "sentences", "test"]
    return pd.DataFrame([{key: row.get(key) for key in columns} for row in rows], columns=columns)


def _mean_std(values: pd.Series) -> str:
    std = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{values.mean() * 100:.2f} ± {std * 100:.2f} ({len(values)})"


def needed(curve: pd.DataFrame, target: float) -> Optional[int]:
    """The fewest annotated sentences at which a strategy's mean test F1 (`curve`: sentences, mean) reaches `target`."""
    reached = curve[curve["mean"] >= target - 1e-12]
    return None if reached.empty else int(reached["sentences"].min())


def _markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    return "\n".join([header, rule, *("| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False))])


def group_report(rounds: pd.DataFrame, references: pd.DataFrame, key: tuple[str, str, str], train_sentences: Optional[int]) -> str:
    """The per-round table and the summary of one corpus x stack x round tagger."""
    corpus, stack, tagger = key
    strategies = sorted(set(rounds["strategy"]), key=lambda name: (name != "random", name))  # random, the baseline, first
    per_round = rounds.groupby(["round", "strategy"])
    table = []
    for index in sorted(rounds["round"].unique()):
        row = {"round": index}
        for strategy in strategies:
            if (index, strategy) in per_round.groups:
                group = per_round.get_group((index, strategy))
                row["sentences"] = int(group["sentences"].iloc[0])
                row[f"{strategy} F1"] = _mean_std(group["test"])
                row[f"{strategy} tokens"] = f"{group['tokens'].mean():,.0f}"
            else:
                row[f"{strategy} F1"], row[f"{strategy} tokens"] = "", ""
        table.append(row)
    lines = [f"## {corpus} / {stack} / {tagger}: test F1 (%) after each round, mean ± std (seeds)", "",
             _markdown(pd.DataFrame(table)[["round", "sentences", *[c for s in strategies for c in (f"{s} F1", f"{s} tokens")]]])]
    means = rounds.groupby(["strategy", "round"]).agg(sentences=("sentences", "first"), tokens=("tokens", "mean"), mean=("test", "mean")).reset_index()
    last = int(rounds["round"].max())
    random_final = means[(means["strategy"] == "random") & (means["round"] == last)]
    target = float(random_final["mean"].iloc[0]) if not random_final.empty else None
    full = references[(references["kind"] == FULL_FOLDER) & (references["corpus"] == corpus) & (references["stack"] == stack)
                      & (references["tagger"] == tagger)]
    full_mean = float(full["test"].mean()) if not full.empty else None
    summary = []
    for strategy in strategies:
        curve = means[means["strategy"] == strategy]
        final = rounds[(rounds["strategy"] == strategy) & (rounds["round"] == last)]
        budget = int(curve["sentences"].max())
        row = {"strategy": strategy, f"F1 at {budget} sentences": _mean_std(final["test"]) if not final.empty else ""}
        if target is not None:
            found = needed(curve, target)
            row["sentences to reach random's final F1"] = "not reached" if found is None else f"{found} ({found / budget * 100:.0f} % of budget)"
            tokens = None if found is None else float(curve[curve["sentences"] == found]["tokens"].iloc[0])
            row["their tokens (mean)"] = "" if tokens is None else f"{tokens:,.0f}"
        if full_mean is not None and not final.empty:
            row["share of full-data F1"] = f"{final['test'].mean() / full_mean * 100:.1f} %" if full_mean else ""
            found = needed(curve, full_mean)
            row["sentences to reach full-data F1"] = "not reached" if found is None else str(found)
        summary.append(row)
    lines += ["", f"Summary ({'random' if target is not None else 'no random strategy'} at the full budget: "
              + (f"{target * 100:.2f}" if target is not None else "-") + ")", "", _markdown(pd.DataFrame(summary))]
    if full_mean is not None:
        share = f", {budget / train_sentences * 100:.0f} % of the {train_sentences:,} train sentences" if train_sentences else ""
        lines += ["", f"Full-data reference: {tagger} on all of train, test F1 {_mean_std(full['test'])}; the budget is {budget} sentences{share}."]
    finals = references[references["kind"].astype(str).str.startswith(FINAL_PREFIX) & (references["corpus"] == corpus)
                        & (references["stack"] == stack) & (references["tagger"] == tagger)]
    if not finals.empty:
        rows = [{"final check": kind[len(FINAL_PREFIX):], "strategy": strategy, "test F1 on the final selection": _mean_std(group["test"])}
                for (kind, strategy), group in finals.groupby(["kind", "strategy"], sort=False)]
        lines += ["", _markdown(pd.DataFrame(rows))]
    return "\n".join(lines)


def simulation_report(out: Path) -> str:
    """The tables of every simulation below `out` (markdown)."""
    rounds, references = rounds_frame(out), references_frame(out)
    if rounds.empty:
        return f"{out}: no finished round yet"
    state = read_record(out / STATE_FILE, optional={"train_sentences": TRAIN_SENTENCES}, remedy="pass --force to simulate again") if is_simulation(out) else {}
    sizes = state.get("train_sentences", {})
    parts = [group_report(group, references, key, sizes.get(key[0])) for key, group in rounds.groupby(GROUP, sort=False)]
    return "\n\n".join(parts)


def simulation_figure(out: Path) -> Figure:
    """Test F1 against annotated sentences (left) and tokens (right), one row of panels per corpus x stack x tagger."""
    rounds, references = rounds_frame(out), references_frame(out)
    groups = list(rounds.groupby(GROUP, sort=False))
    figure = Figure(figsize=(11, 4 * max(len(groups), 1)))
    FigureCanvasAgg(figure)
    axes = figure.subplots(max(len(groups), 1), 2, squeeze=False)
    for row, (key, group) in enumerate(groups):
        full = references[(references["kind"] == FULL_FOLDER) & (references[GROUP] == pd.Series(key, index=GROUP)).all(axis=1)]
        for column, x in enumerate(("sentences", "tokens")):
            ax = axes[row][column]
            for i, strategy in enumerate(sorted(set(group["strategy"]), key=lambda name: (name != "random", name))):
                lines = group[group["strategy"] == strategy]
                points = lines.groupby("round").agg(x=(x, "mean"), mean=("test", "mean"), std=("test", "std")).fillna(0.0)
                ax.plot(points["x"], points["mean"] * 100, marker="o", color=f"C{i}", label=f"{strategy} (n={lines['seed'].nunique()})")
                ax.fill_between(points["x"], (points["mean"] - points["std"]) * 100, (points["mean"] + points["std"]) * 100, color=f"C{i}", alpha=0.2)
            if not full.empty:
                ax.axhline(full["test"].mean() * 100, color="grey", linestyle="--", label="all of train")
            ax.set_xlabel(f"annotated {x}" + (" (mean over seeds)" if x == "tokens" else ""))
            ax.set_ylabel("test F1 (%)")
            ax.set_title(" / ".join(key), fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    return figure


def write_simulation_plot(out: Path, target: Optional[Path] = None) -> Path:
    """The plot as PNG (default `out/active-learning.png`), written atomically."""
    path = target or out / PLOT_FILE
    with atomic_file(path) as temp:
        simulation_figure(out).savefig(temp, format="png", dpi=110)
    return path
