"""The embedding files behind a comparison table: per stack and member, how it was trained, as the runs recorded it.

An ablation that changes an embedding (LM hours, LM hidden size, fastText dim, a BERT variant) is read beside
what changed: the LM pair's characters and valid perplexity next to the F1 it bought. Each run's `metrics.json`
holds `artifact_summaries` (per embedding spec, what the kind's `summarize` took from the artifact's
`summary.json`) and `artifact_digests` (SHA-256 of its files); this table lists them per (stack, spec), one row
each, the differing values of runs that read different files side by side.
"""

from collections import Counter
from typing import Any, Callable

import pandas as pd

from flairsuite.results.metrics_file import FIX_FOLDER
from flairsuite.results.tables import STYLES, WRITERS
from flairsuite.values import is_number

HEADERS = ("stack", "embedding", "how it was trained (the runs' record)", "file SHA-256", "runs")


def millions(unit: str) -> Callable[[float], str]:
    return lambda value: f"{value / 1e6:.1f} M {unit}"


# How a summary key reads in the table, in this order; a key not listed is shown as `key value`.
FORMATS: dict[str, Callable[[Any], str]] = {
    "chars": millions("characters"),
    "tokens": millions("tokens"),
    "hours": lambda value: f"{value:.2f} h",
    "valid_ppl": lambda value: f"valid perplexity {value:.3f}",
    "valid_accuracy": lambda value: f"valid MLM accuracy {value * 100:.1f} %",
    "hidden_size": lambda value: f"hidden {value}",
    "dim": lambda value: f"dim {value}",
    "parameters": millions("parameters"),
}


def describe(summary: dict[str, Any]) -> str:
    """One artifact summary as a phrase: `82.0 M characters, 2.69 h, valid perplexity 3.502, hidden 512`."""
    keys = [key for key in FORMATS if key in summary] + sorted(key for key in summary if key not in FORMATS)
    parts = []
    for key in keys:
        value = summary[key]
        if value is None:
            continue
        known = FORMATS.get(key)
        parts.append(known(value) if known and is_number(value) else f"{key.replace('_', ' ')} {value}")
    return ", ".join(parts) or "(nothing recorded)"


def artifact_rows(runs: pd.DataFrame) -> list[list[str]]:
    """Rows of HEADERS for `runs` (one experiment): per stack (sorted) and member (stack order), the distinct
    descriptions and file digests its runs recorded, most runs first; runs from before the record are left out."""
    members: dict[tuple[str, str], tuple[Counter, Counter, set]] = {}
    trained = runs.assign(base=runs["run"].str.removesuffix(f"/{FIX_FOLDER}")).drop_duplicates("base")  # a run, not its Entity-Fix variant
    for base, stack, summaries, digests in zip(trained["base"], trained["embeddings"], trained["artifact_summaries"], trained["artifact_digests"]):
        summaries, digests = summaries or {}, digests or {}
        for spec in list(summaries) + [spec for spec in digests if spec not in summaries]:
            told, files, seen = members.setdefault((stack, spec), (Counter(), Counter(), set()))
            if spec in summaries:
                told[describe(summaries[spec])] += 1
            if spec in digests:
                files[digests[spec][:6] + "…"] += 1
            seen.add(base)
    order = {key: place for place, key in enumerate(members)}
    rows = []
    for (stack, spec), (told, files, seen) in sorted(members.items(), key=lambda item: (item[0][0], order[item[0]])):
        rows.append([stack, spec, " / ".join(text for text, _ in told.most_common()) or "(nothing recorded)",
                     " / ".join(digest for digest, _ in files.most_common()), str(len(seen))])
    return rows


def artifact_report(runs: pd.DataFrame, fmt: str = "md") -> str:
    """Per experiment of `runs`, the table of its stacks' embedding files in format `fmt` (tables.WRITERS), blank-line separated."""
    style = STYLES[fmt]
    sections = []
    for experiment, group in runs.groupby("experiment", sort=True):
        rows = [[style.escape(cell) for cell in row] for row in artifact_rows(group)]
        if rows:
            title = style.escape(f"{experiment}: the embedding files of each stack, as its runs recorded them")
            sections.append(WRITERS[fmt](title, [style.escape(h) for h in HEADERS], rows, [], len(HEADERS) - 1))  # text left, runs right
    return "\n\n".join(sections)
