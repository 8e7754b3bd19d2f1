"""The pre-training tables of Zöllner et al. 2021 on the suite's own BERTs: Table 6 and Table 9.

A run's BERT is told apart by what `train-bert` recorded of it (`artifact_summaries` in the run's
metrics: objective, positions, Whole-Word Masking, attention, sequence length, tokens seen, hours,
MLM accuracy), so the tables need no naming convention for stacks or model folders. Both take the
fine-tuned runs (`fine_tune: true`) whose stack holds exactly one `bert:` embedding.

- Table 6: Default-Fine-Tuning (`map`, no Entity-Fix) per pre-training variant (objective x
  positions x WWM): test E-F1 (%) per task, mean ± std (n), their average; beside them what the
  BERT saw in pre-training (tokens, hours on which device, valid MLM accuracy) and the paper's row.
- Table 9: LCRFNER (`lcrf-ner`) per attention (full, WWA) and pre-training sequence length: the
  average over tasks of the mean test E-F1, without and with Entity-Fix, beside the paper's (its
  row of the same attention and length, else of the same attention at its 320 tokens).

Table 6's paper average is taken over the tasks the runs have (the paper gives each task's value: the
same columns on both sides). Table 9's paper values are its published averages over five tasks with
GermEval: the paper gives no per-task values for WWA, so they cannot be narrowed to the suite's tasks
and stand as reference lines; the table's title says so.
"""

from typing import Any

import pandas as pd

from flairsuite.errors import FlairsuiteError
from flairsuite.results import references
from flairsuite.results.collect import trained_runs
from flairsuite.results.table8 import COLUMNS  # the paper's five tasks, in its order
from flairsuite.results.tables import Cell, fine_tune_notes, render, subsample_notes, summary

ZOELLNER_2021 = "Zöllner et al. 2021"
VARIANT = ("objective", "positions", "wwm")  # the rows of Table 6
# Table 6, E-F1 x 100 per (objective, positions, WWM), columns as COLUMNS (GermEval, H. Arendt, Sturm, LER CG, LER FG).
PAPER_TABLE6 = {
    ("mlm", "absolute", False): (77.85, 76.00, 82.36, 90.61, 89.69),
    ("mlm", "absolute", True): (79.01, 76.81, 81.02, 91.92, 90.28),
    ("mlm", "relative", False): (78.52, 76.74, 80.11, 91.98, 91.44),
    ("mlm", "relative", True): (80.86, 77.41, 85.55, 93.47, 92.06),
    ("mlm+nsp", "absolute", False): (76.09, 76.88, 80.85, 90.67, 89.28),
    ("mlm+nsp", "absolute", True): (74.84, 76.21, 81.10, 90.47, 89.30),
    ("mlm+nsp", "relative", False): (78.02, 74.71, 81.72, 91.93, 91.05),
    ("mlm+nsp", "relative", True): (77.50, 75.64, 81.91, 91.68, 90.44),
    ("mlm+sop", "absolute", False): (75.30, 76.69, 79.42, 89.79, 88.17),
    ("mlm+sop", "absolute", True): (73.55, 75.90, 79.95, 90.47, 89.50),
    ("mlm+sop", "relative", False): (77.45, 75.48, 80.52, 91.76, 90.40),
    ("mlm+sop", "relative", True): (78.63, 78.07, 85.50, 92.46, 91.22),
}
# Table 9: the average E-F1 x 100 over the five tasks (LCRFNER) without and with Entity-Fix, per (attention, pre-training length).
PAPER_LENGTH = "320 tokens"  # the paper's pre-training length; its row stands beside a suite row of another length
PAPER_TABLE9 = {("full", "320 tokens"): (86.51, 88.23), ("wwa", "320 tokens"): (86.76, 88.32), ("wwa", "300 words"): (86.74, 88.32)}


def bert_runs(runs: pd.DataFrame, tagger: str) -> pd.DataFrame:
    """The fine-tuned runs of `tagger` on one BERT, with that BERT's pre-training record as columns and the task as `column`."""
    rows = []
    for _, run in runs.iterrows():
        summaries = run.get("artifact_summaries") or {}
        berts = [spec for spec in run["embedding_specs"].split() if spec.startswith("bert:")]
        column = COLUMNS.get(references.known_task(run["corpus"], run["corpus_options"] or {}) or ("", ""), "")
        if run["tagger"] != tagger or not run["fine_tune"] or len(berts) != 1 or berts[0] not in summaries or not column:
            continue
        rows.append({**run.to_dict(), **{f"bert_{key}": value for key, value in summaries[berts[0]].items()}, "column": column, "bert": berts[0]})
    if not rows:
        raise FlairsuiteError(f"no fine-tuned {tagger} runs on one bert: embedding with a pre-training record (summary.json) on {', '.join(COLUMNS.values())}")
    return pd.DataFrame(rows)


def column_notes(chosen: pd.DataFrame) -> dict[str, str]:
    """The subsample footnotes, keyed by this table's column names, and the fine-tuning length."""
    return {**subsample_notes(chosen.drop(columns="corpus_label").rename(columns={"column": "corpus_label"})), **fine_tune_notes(chosen)}


def pretraining_cells(group: pd.DataFrame) -> dict[str, str]:
    """What the BERT(s) of a row saw in pre-training (several BERTs in one row are listed), and the mean wall hours of a fine-tuning run
    (with its CPU-hours, wall x threads, where every run recorded its threads)."""
    first = group.drop_duplicates("bert")

    def joined(values: Any, show: Any) -> str:
        return " / ".join(show(v) for v in values if v is not None and not pd.isna(v)) or "?"

    return {
        "BERT": joined(first["bert"], str),
        "pre-training tokens": joined(first["bert_tokens"], lambda v: f"{v / 1e6:.1f} M"),
        "hours": joined(zip(first["bert_hours"], first["bert_device"], first["bert_threads"], precisions(first)), hours_cell),
        "valid MLM acc. (%)": joined(first["bert_valid_accuracy"], lambda v: f"{v * 100:.1f}"),
        "fine-tuning h/run": fine_tuning_hours(group.drop_duplicates("run")),
    }


def precisions(berts: pd.DataFrame) -> list[str]:
    """Each BERT's pre-training arithmetic, where its summary recorded one (train-bert --precision; older models: float32)."""
    if "bert_precision" not in berts:
        return [""] * len(berts)
    return ["" if pd.isna(value) else str(value) for value in berts["bert_precision"]]


def hours_cell(values: tuple[Any, Any, Any, str]) -> str:
    """`0.42 (cpu, 1 threads)`, with `, bfloat16` where the steps ran in it."""
    hours, device, threads, precision = values
    arithmetic = f", {precision}" if precision and precision != "float32" else ""
    return f"{hours:.2f} ({device}, {threads} threads{arithmetic})"


def fine_tuning_hours(runs: pd.DataFrame) -> str:
    """`0.42`, or `0.42 (0.84 CPU-h)` when every run recorded its torch threads."""
    hours = f"{runs['seconds'].mean() / 3600:.2f}"
    threads = runs["threads"] if "threads" in runs else pd.Series(float("nan"), index=runs.index)
    return hours if threads.isna().any() else f"{hours} ({(runs['seconds'] * threads).mean() / 3600:.2f} CPU-h)"


def table6(runs: pd.DataFrame, fmt: str = "md") -> str:
    """Table 6 on the suite's BERTs (Default-Fine-Tuning = fine-tuned `map`, no Entity-Fix), the paper's row beside each."""
    chosen = bert_runs(trained_runs(runs), "map")
    tasks = [name for name in COLUMNS.values() if name in set(chosen["column"])]
    rows, index = [], []
    for variant, group in chosen.groupby([f"bert_{key}" for key in VARIANT], sort=True):
        objective, positions, wwm = variant
        means = {task: group.loc[group["column"] == task, "test_f1"].mean() * 100 for task in tasks}
        row: dict[str, Cell] = {task: summary((group.loc[group["column"] == task, "test_f1"] * 100).tolist()) or "" for task in tasks}
        row["Average"] = "" if any(pd.isna(v) for v in means.values()) else sum(means.values()) / len(tasks)
        row.update(pretraining_cells(group))
        paper = dict(zip(COLUMNS.values(), PAPER_TABLE6.get((objective, positions, bool(wwm)), ())))
        for task in tasks:
            row[f"paper {task}"] = paper[task] if paper else ""
        row["paper Average"] = sum(paper[t] for t in tasks) / len(tasks) if paper else ""
        rows.append(row)
        index.append((objective, positions, "WWM" if wwm else "-"))
    cells = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["pre-training", "positions", "WWM"]))
    title = (f"{chosen['experiment'].iloc[0]}: test E-F1 (%) of Default-Fine-Tuning per pre-training variant, "
             f"in the layout of {ZOELLNER_2021}, Table 6 (paper: 16 G tokens on a GPU; averages over the columns shown)")
    return render(title, cells, column_notes(chosen), fmt)


def sequence_length(row: pd.Series) -> str:
    """A BERT's pre-training length as the paper states it: tokens for full attention, tokens or words for WWA."""
    return f"{int(row['bert_seq_len'])} tokens" if not pd.isna(row["bert_seq_len"]) else "?"


def table9(runs: pd.DataFrame, fmt: str = "md") -> str:
    """Table 9 on the suite's BERTs: fine-tuned `lcrf-ner`, the average test E-F1 over tasks without and with Entity-Fix."""
    chosen = bert_runs(runs, "lcrf-ner")
    chosen = chosen.assign(length=chosen.apply(sequence_length, axis=1))
    tasks = [name for name in COLUMNS.values() if name in set(chosen["column"])]
    rows, index = [], []
    for (attention, length), group in chosen.groupby(["bert_attention", "length"], sort=True):
        row: dict[str, Cell] = {}
        for fix, label in ((False, "Avg. E-F1"), (True, "Avg. E-F1 with Entity-Fix")):
            means = group[group["entity_fix"] == fix].groupby("column")["test_f1"].mean() * 100
            complete = all(task in means.index for task in tasks)
            row[label] = float(means[tasks].mean()) if complete else ""
        row["tasks"] = ", ".join(tasks)
        row.update(pretraining_cells(group))
        paper = PAPER_TABLE9.get((attention, length)) or PAPER_TABLE9.get((attention, PAPER_LENGTH))
        row["paper Avg. E-F1"], row["paper with Entity-Fix"] = paper if paper else ("", "")
        rows.append(row)
        index.append(("WWA" if attention == "wwa" else "-", length))
    cells = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["WWA", "pre-training length"]))
    title = (f"{chosen['experiment'].iloc[0]}: average test E-F1 (%) of fine-tuned LCRFNER in the layout of {ZOELLNER_2021}, Table 9 "
             "(paper: averages over five tasks with GermEval)")
    return render(title, cells, column_notes(chosen), fmt)


LAYOUTS = {"table6": table6, "table9": table9}  # `flairsuite results --layout table6` / `table9`
