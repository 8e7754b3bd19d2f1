"""Results collector: `metrics.json` files of tagging runs -> DataFrames, comparison tables, bar charts.

    from flairsuite.results import collect, comparison_table
    runs = collect("results/sturm-table3")       # one row per run
    table = comparison_table(runs, metric="f1", split="test")   # mean/std/n in percent per corpus
"""

from typing import Any

from flairsuite.results.collect import collect, collect_per_type
from flairsuite.results.metrics_file import SCHEMA
from flairsuite.results.tables import comparison_cells, comparison_table, per_type_table, render, report

LAZY = {"comparison_figure", "write_plot"}  # from plot.py, imported on first use: matplotlib costs a training run ~30 MB


def __getattr__(name: str) -> Any:
    if name in LAZY:
        from flairsuite.results import plot

        return getattr(plot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "SCHEMA",
    "collect",
    "collect_per_type",
    "comparison_cells",
    "comparison_figure",
    "comparison_table",
    "per_type_table",
    "render",
    "report",
    "write_plot",
]
