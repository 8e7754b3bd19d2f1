"""The table of a self-training experiment (`flairsuite.experiments.self_training` writes its files; `flairsuite results`
reads them without loading torch or Flair).

Layout below `results/<experiment>/`: `self-training.json` (what was studied), and per run of the grid
`<corpus>/<stack>/<tagger>/seed-<n>/` with `pool.json` (where the pool came from: the held-back train sentences or the
text's sentence count), `round-00.json` (round 0: the tagger on the labelled part only) and `labels-00.json` (its
pseudo-labels of the pool), and per threshold `threshold-<t>/round-<r>.json` (round r's scores) and
`threshold-<t>/labels-<r>.json` (round r's pseudo-labels, which round r + 1 trains on); `model.pt`, `predictions.tsv` and
`model.json`: the study's best round on dev, kept to predict with (`model.json`: its run record in metrics.json's schema,
`round` naming it as `round_name` does, `self_training` what it trained on).

`self_training_report` prints per corpus x stack x tagger one row for round 0 and one per threshold and round: the pool
sentences kept (mean over seeds, and as a share of the pool), where the pool's gold tags are known (hold_back) the F1 of
the kept pseudo-labels against them, dev and test F1 (mean ± std over seeds), and the change of test F1 against round 0
(mean of the per-seed differences). Each later round's dev F1 stands against round 0's with the 90 % interval of the
per-seed differences (paired: a seed's rounds share its labelled part, its pool and its round 0), and each row says what
it cost: the minutes of every training up to it (round 0 and the threshold's rounds so far, mean over seeds), times their
torch threads where the rounds recorded them (core-minutes; rounds from before that record wall minutes, and the header
says so). `round_name` is how other tables name a round (`round-0`, `threshold-0.9-round-2`). The row with the best mean dev
F1 is the one chosen (marked, and said below the table): test F1 is read there, never chosen on.
"""

from pathlib import Path
from typing import Any, Optional

import pandas as pd

from flairsuite.files.summary_file import read_record
from flairsuite.results.welch import paired_interval
from flairsuite.settings_schema import FRACTION, INTEGER, NON_NEGATIVE_INTEGER, NON_NEGATIVE_NUMBER, POSITIVE_INTEGER, TEXT, Rule

STATE_FILE = "self-training.json"
POOL_FILE = "pool.json"
ROUND_PREFIX = "round-"
LABELS_PREFIX = "labels-"
THRESHOLD_PREFIX = "threshold-"
TABLE_FILE = "self-training.md"
CHOSEN_FILE = "model.json"  # beside the study's model.pt: its run record and round
CSV_FILE = "rounds.csv"
GROUP = ["corpus", "stack", "tagger"]
CONFIDENCE = Rule("a confidence in [0, 1]", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1)
ROUND_RECORD = {**{key: TEXT for key in GROUP}, "seed": INTEGER, "round": NON_NEGATIVE_INTEGER, "labelled": NON_NEGATIVE_INTEGER,
                "pool": NON_NEGATIVE_INTEGER, "kept": NON_NEGATIVE_INTEGER, "dev": FRACTION, "test": FRACTION}
OPTIONAL = {"threshold": CONFIDENCE, "pseudo": FRACTION, "seconds": NON_NEGATIVE_NUMBER, "threads": POSITIVE_INTEGER}
LEVEL = 0.90
COLUMNS = [*ROUND_RECORD, *OPTIONAL]


def is_self_training(folder: Path) -> bool:
    """Whether `folder` holds a self-training experiment."""
    return (folder / STATE_FILE).is_file()


def threshold_folder(study: Path, threshold: float) -> Path:
    """Where the rounds of one threshold of a study live: `threshold-0.9`."""
    return study / f"{THRESHOLD_PREFIX}{threshold:g}"


def round_name(threshold: Optional[float], index: int) -> str:
    """A round as the ablation files name it: `round-0`, or `threshold-0.9-round-2` (its threshold's folder, then the round)."""
    return f"{ROUND_PREFIX}0" if index == 0 else f"{THRESHOLD_PREFIX}{threshold:g}-{ROUND_PREFIX}{index}"


def round_file(folder: Path, index: int) -> Path:
    """The scores of round `index` (round 0 in the study folder, the others in their threshold's folder)."""
    return folder / f"{ROUND_PREFIX}{index:02d}.json"


def labels_file(folder: Path, index: int) -> Path:
    """The pseudo-labels of the pool by the model of round `index`."""
    return folder / f"{LABELS_PREFIX}{index:02d}.json"


def rounds_frame(out: Path) -> pd.DataFrame:
    """One row per finished round below `out`: corpus, stack, tagger, seed, round, labelled, pool, kept, dev, test, threshold
    (None for round 0), pseudo (the kept pseudo-labels' main score against gold; None where unknown)."""
    rows = [read_record(path, ROUND_RECORD, OPTIONAL, remedy="delete it to train that round again")
            for path in sorted(out.rglob(f"{ROUND_PREFIX}*.json"))]
    return pd.DataFrame([{key: row.get(key) for key in COLUMNS} for row in rows], columns=COLUMNS)


def _mean_std(values: pd.Series) -> str:
    std = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{values.mean() * 100:.2f} ± {std * 100:.2f} ({len(values)})"


def _markdown(rows: list[dict[str, Any]]) -> str:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(row[column]) for column in columns) + " |" for row in rows])


def _cells(group: pd.DataFrame, base: pd.DataFrame, threshold: Optional[float], index: int, with_pseudo: bool) -> dict[str, Any]:
    """One row of the table: the rounds `group` (one per seed) against round 0's `base`."""
    pool = group["pool"].mean()
    kept = group["kept"].mean()
    row: dict[str, Any] = {"threshold": "–" if threshold is None else f"{threshold:g}", "round": index,
                           "kept sentences": f"{kept:,.0f}" if kept == round(kept) else f"{kept:,.1f}",
                           "share of pool": f"{kept / pool * 100:.0f} %" if pool else "–"}
    if with_pseudo:
        pseudo = group["pseudo"].dropna()
        row["pseudo-label F1"] = _mean_std(pseudo.astype(float)) if len(pseudo) else "–"
    row["dev F1"] = _mean_std(group["dev"])
    row[f"Δ dev [{LEVEL * 100:.0f} % interval]"] = "–" if threshold is None else _dev_difference(group, base)
    row["test F1"] = _mean_std(group["test"])
    paired = group.merge(base[["seed", "test"]], on="seed", suffixes=("", "_base"))
    row["test − round 0"] = "–" if threshold is None or paired.empty else f"{(paired['test'] - paired['test_base']).mean() * 100:+.2f}"
    cost = group["cost"].dropna()
    row["cost"] = f"{cost.mean() / 60:.1f}" if len(cost) else "–"
    return row


def _dev_difference(group: pd.DataFrame, base: pd.DataFrame) -> str:
    """Mean dev F1 − round 0's in points over the seeds both have, with the paired interval where there are two or more
    (a seed's rounds share its labelled part, its pool and its round 0)."""
    paired = group.merge(base[["seed", "dev"]], on="seed", suffixes=("", "_base"))
    if paired.empty:
        return "–"
    if len(paired) < 2:
        return f"{(paired['dev'] - paired['dev_base']).mean() * 100:+.2f}"
    difference, low, high = paired_interval(list(paired["dev"] * 100), list(paired["dev_base"] * 100), LEVEL)
    return f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def with_costs(rounds: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """`rounds` with a `cost` column: the seconds of every training up to each round of its seed (round 0, then its
    threshold's rounds up to it), times their threads where every round recorded them; and the cost column's header."""
    threaded = rounds["threads"].notna().all()
    own = rounds["seconds"].astype(float) * (rounds["threads"].astype(float) if threaded else 1.0)
    rounds = rounds.assign(own=own)
    zero = rounds[rounds["round"] == 0].set_index("seed")["own"]
    later = rounds["round"] > 0
    key = rounds["seed"].astype(str) + "|" + rounds["threshold"].astype(str)
    ordered = rounds[later].sort_values("round")
    running = ordered.groupby(key[later].loc[ordered.index])["own"].cumsum()
    cost = rounds["own"].where(~later)
    cost.loc[running.index] = running + ordered["seed"].map(zero)
    header = "core-min up to this round" if threaded else "wall-min up to this round (threads not recorded)"
    return rounds.drop(columns="own").assign(cost=cost), header


def group_report(rounds: pd.DataFrame, key: tuple[str, str, str]) -> str:
    """The table of one corpus x stack x tagger."""
    corpus, stack, tagger = key
    rounds, cost_header = with_costs(rounds)
    base = rounds[rounds["round"] == 0]
    later = rounds[rounds["round"] > 0]
    with_pseudo = later["pseudo"].notna().any()
    cells, dev_means = [], []
    if not base.empty:
        cells.append(_cells(base, base, None, 0, with_pseudo))
        dev_means.append(base["dev"].mean())
    for (threshold, index), group in later.groupby(["threshold", "round"], sort=True):
        cells.append(_cells(group, base, float(threshold), int(index), with_pseudo))
        dev_means.append(group["dev"].mean())
    best = max(range(len(cells)), key=lambda i: (dev_means[i], -i))  # ties: the earlier row (round 0 first)
    cells[best]["dev F1"] = f"**{cells[best]['dev F1']}**"
    cells = [{(cost_header if column == "cost" else column): value for column, value in cell.items()} for cell in cells]
    chosen = cells[best]
    labelled, pool = int(rounds["labelled"].max()), int(rounds["pool"].max())
    where = "held-back train sentences, their gold labels hidden" if with_pseudo else "sentences of your text"
    said = ("round 0 (no self-training)" if chosen["threshold"] == "–" else f"threshold {chosen['threshold']}, round {chosen['round']}")
    lines = [f"## {corpus} / {stack} / {tagger}: self-training, F1 (%) mean ± std (seeds)", "",
             f"Labelled: {labelled:,} sentences; pool: {pool:,} {where}. A pseudo-labelled sentence is kept where p(decoded tags)^(1/n) "
             "reaches the threshold.", "", _markdown(cells), "",
             f"Chosen on dev (bold): {said}, test F1 {chosen['test F1']}" + (f" ({chosen['test − round 0']} against round 0)."
                                                                                 if chosen["threshold"] != "–" else ".")]
    return "\n".join(lines)


def self_training_report(out: Path) -> str:
    """The tables of every study below `out` (markdown)."""
    rounds = rounds_frame(out)
    if rounds.empty:
        return f"{out}: no finished round yet"
    return "\n\n".join(group_report(group, key) for key, group in rounds.groupby(GROUP, sort=False))
