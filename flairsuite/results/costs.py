"""What the runs cost: wall hours, CPU-hours and peak memory per run, beside the comparison tables (`results --cost`).

Rows as the comparison table (stack (× fine-tuned) × tagger; Entity-Fix variants are the same training,
so they are left out), one column per corpus. A cell: the mean wall time of a run in hours over its
seeds, the CPU-hours (wall time × the torch threads the run trained with, as newer runs record them: the
cores the run held, an upper bound of its CPU time when runs shared the cores, as three runs on two cores
do here) where every run of the cell recorded its threads, and the largest peak RSS (resident memory, the
embedding cache's mapped pages included) and peak RssAnon (without them) of the cell's runs:
`25.2 min · 25.2 CPU-min · 1,082 / 885 MB (3)` (hours from one hour on). `seconds` of a run resumed after a kill includes the
training of the processes before it (older runs hold the last process's).
"""

import pandas as pd

from flairsuite.results.tables import FIX, STYLES, mark_best, render, row_keys

HOUR = 3600.0


def cost_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per row and corpus: mean hours, mean CPU-hours (NaN unless every run recorded threads), peak RSS and RssAnon (MiB), n."""
    trained = runs[~runs[FIX]] if FIX in runs else runs
    keys = [key for key in row_keys(trained) if key != FIX]
    rows = trained.assign(
        hours=trained["seconds"] / HOUR,
        cpu_hours=trained["seconds"] * trained.get("threads", pd.Series(float("nan"), index=trained.index)) / HOUR,
    )
    groups = [rows[key] for key in keys] + [rows["corpus_label"]]
    stats = rows.groupby(groups).agg(
        hours=("hours", "mean"),
        cpu_hours=("cpu_hours", lambda values: values.mean() if values.notna().all() else float("nan")),
        rss=("peak_rss_mb", "max"),
        rss_anon=("peak_rss_anon_mb", "max"),
        n=("hours", "count"),
    )
    return stats


def duration(hours: float, prefix: str = "") -> str:
    """`25.2 min`, or from one hour on `1.57 h` (`prefix` "CPU-": `25.2 CPU-min`, `1.57 CPU-h`)."""
    return f"{hours * 60:.1f} {prefix}min" if hours < 1 else f"{hours:.2f} {prefix}h"


def cost_cell(hours: float, cpu_hours: float, rss: float, rss_anon: float, n: int) -> str:
    """`25.2 min · 25.2 CPU-min · 1,082 / 885 MB (3)`; parts the runs did not record are left out."""
    parts = [duration(hours)]
    if not pd.isna(cpu_hours):
        parts.append(duration(cpu_hours, "CPU-"))
    if not pd.isna(rss):
        parts.append(f"{rss:,.0f} / {rss_anon:,.0f} MB" if not pd.isna(rss_anon) else f"{rss:,.0f} MB")
    return " · ".join(parts) + f" ({int(n)})"


def cost_report(runs: pd.DataFrame, fmt: str = "md") -> str:
    """One cost table per experiment; the cheapest mean wall time per corpus marked."""
    style = STYLES[fmt]
    sections = []
    for experiment, group in runs.groupby("experiment", sort=True):
        stats = cost_table(group)
        wide = stats.unstack("corpus_label")
        corpora = sorted(stats.index.get_level_values("corpus_label").unique())
        cells = pd.DataFrame(
            [
                [
                    "" if pd.isna(wide.loc[index, ("hours", corpus)]) else cost_cell(*(wide.loc[index, (name, corpus)] for name in stats.columns))
                    for corpus in corpora
                ]
                for index in wide.index
            ],
            index=wide.index,
            columns=corpora,
        )
        cells = mark_best(cells, -60 * wide["hours"][corpora], style)  # the cheapest: the highest negated minutes, as shown
        title = f"{experiment}: wall time a run (mean), CPU time (wall x threads), peak RSS / RssAnon (largest), over seeds (n)"
        sections.append(render(title, cells, {}, fmt))
    return "\n\n".join(sections)
