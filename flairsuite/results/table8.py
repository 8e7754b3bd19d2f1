"""The layout of Zöllner et al. 2021, Table 8: fine-tuning method x Entity-Fix over the German NER tasks.

Rows are tagger x Entity-Fix, columns the paper's five tasks the runs have (GermEval, whose train split the user
supplies: the experiment files list it `if_present`; H. Arendt, Sturm, LER coarse, LER fine), then their average, then the
paper's values for the same columns and their average. Cells are test E-F1 in percent, mean ± std
over seeds (n). The paper fine-tunes a whole small BERT; its DFT (a softmax layer), LCRF and
LCRFNER correspond to the suite's `map`, `map-crf` and `lcrf-ner`, its CSE to `cse`, on whatever stack
the experiment gives them (table8-de: frozen character LMs and fastText; table8-bert-de: a fine-tuned
suite BERT); `bilstm-*` have no counterpart in the paper. What the runs cost: `results --cost`.
"""

from typing import Optional

import pandas as pd

from flairsuite.errors import FlairsuiteError
from flairsuite.results import references
from flairsuite.results.tables import comparison_cells, comparison_table, render, table_notes

COLUMNS = {("germeval14", ""): "GermEval", ("arendt", ""): "H. Arendt", ("sturm", ""): "Sturm", ("ler", "coarse"): "LER CG", ("ler", "fine"): "LER FG"}
PAPER_METHOD = {"map": "DFT", "cse": "CSE", "map-crf": "LCRF", "lcrf-ner": "LCRFNER"}
# Table 8 of the paper, E-F1 x 100: method -> Entity-Fix -> (GermEval, H. Arendt, Sturm, LER CG, LER FG)
PAPER = {
    "DFT": {False: (80.86, 77.41, 85.55, 93.47, 92.06), True: (84.08, 79.03, 87.06, 94.74, 94.27)},
    "CSE": {False: (83.97, 80.48, 86.47, 94.29, 94.01), True: (83.97, 80.48, 86.47, 94.29, 94.01)},
    "LCRF": {False: (82.16, 78.22, 84.53, 93.65, 92.61), True: (84.22, 79.41, 86.29, 94.77, 94.10)},
    "LCRFNER": {False: (82.20, 78.57, 85.08, 93.94, 92.78), True: (84.48, 79.99, 87.83, 94.88, 94.55)},
}


def column(corpus: str, options: dict[str, str]) -> str:
    """The Table 8 column of a run's corpus, or "" for corpora the table does not have."""
    return COLUMNS.get(references.known_task(corpus, options), "")


def paper_value(tagger: str, entity_fix: bool, task_key: tuple[str, str]) -> Optional[float]:
    """The paper's E-F1 (%) of the suite's `tagger` (with or without Entity-Fix) on a task, or None where it has none."""
    values = PAPER.get(PAPER_METHOD.get(tagger, ""), {}).get(entity_fix, ())
    return dict(zip(COLUMNS, values)).get(task_key)


def paper_row(row_key: dict[str, object], tasks: list[str]) -> dict[str, float]:
    """The paper's values for a row (`tagger`, `entity_fix`) under `tasks`, as `paper <task>` and their `paper Average`; none where
    the paper has no such row."""
    values = {task: paper_value(str(row_key["tagger"]), bool(row_key.get("entity_fix", False)), key) for key, task in COLUMNS.items() if task in tasks}
    if None in values.values():
        return {}
    return {**{f"paper {task}": value for task, value in values.items()}, "paper Average": sum(values.values()) / len(tasks)}


def table8_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs on Table 8's tasks, each labelled with its column's name (`LER CG`); an error when there are none."""
    runs = runs.assign(corpus_label=[column(c, o) for c, o in zip(runs["corpus"], runs["corpus_options"])])
    runs = runs[runs["corpus_label"] != ""]
    if runs.empty:
        raise FlairsuiteError(f"no runs on the tasks of Table 8 ({', '.join(COLUMNS.values())})")
    return runs


def table8_order(table: pd.DataFrame) -> list[str]:
    """The Table 8 columns a comparison table holds, in the paper's order."""
    return [name for name in COLUMNS.values() if name in table.columns.get_level_values(0)]


def table8(runs: pd.DataFrame, fmt: str = "md") -> str:
    """Table 8 of the runs (one experiment's) with the paper's values beside them."""
    runs = table8_runs(runs)
    table = comparison_table(runs)
    tasks = table8_order(table)
    cells = comparison_cells(table)[tasks]
    cells["Average"] = table.xs("mean", axis=1, level="stat")[tasks].mean(axis=1, skipna=False)
    papers = [paper_row(dict(zip(cells.index.names, key)), tasks) for key in cells.index]
    for column in [*(f"paper {task}" for task in tasks), "paper Average"]:
        cells[column] = [paper.get(column, "") for paper in papers]
    notes = table_notes(runs)
    title = f"{runs['experiment'].iloc[0]}: test E-F1 (%) in the layout of Zöllner et al. 2021, Table 8 (paper: fine-tuned BERT)"
    return render(title, cells, notes, fmt)
