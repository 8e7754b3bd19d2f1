"""The layout of Akbik et al. 2018, Table 3: embedding stack (PROPOSED+WORD, PROPOSED, CLASSIC) x architecture
(BiLSTM-CRF, Map-CRF, Map), on the experiment's corpora, the paper's values beside.

Rows in the paper's order: the stacks `proposed+word`, `proposed`, `classic` (others after them, by name), within each
the taggers `bilstm-crf`, `map-crf`, `map` (others after). Columns: per corpus the test score, mean ± std over seeds
(n), and the dev mean beside it (settings are chosen on dev); then the paper's value of the same row for the task of
the corpora's language (CoNLL-03 German NER for German corpora; CoNLL-03 English NER and WSJ PoS for English ones).
Those are other data: reference lines, footnoted, not targets. Entity-Fix variants are left out (the paper has none).
A last row `reference` holds each corpus's published reference (`references.REFERENCES`: the best published on the same
data, or an anchor), footnoted with its source; where that reference averages F1 otherwise (CLUENER's macro F1, the
Danish anchor without MISC: `references.Measure`) a column `<corpus> <measure>` beside the corpus's dev holds ours so
measured, and the reference stands in it.
"""

from typing import Optional

import pandas as pd

from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.results.collect import REFERENCE_SCORE, trained_runs
from flairsuite.results.references import best_published
from flairsuite.results.tables import Reference, Summary, comparison_cells, comparison_table, merged_notes, metric_title, reference_notes, render, table_notes

STACK_ORDER = ("proposed+word", "proposed", "classic")
TAGGER_ORDER = ("bilstm-crf", "map-crf", "map")
SOURCE = "Akbik et al. 2018, Table 3"
# The paper's Table 3 (test, (mean, std) over its seeds): column -> (language, task) it stands beside -> stack -> tagger -> value
PAPER: dict[str, tuple[tuple[str, str], dict[str, dict[str, tuple[float, float]]]]] = {
    "paper NER-German (CoNLL-03)": (("de", "ner"), {
        "proposed+word": {"bilstm-crf": (88.20, 0.21), "map-crf": (85.17, 0.04), "map": (76.97, 0.16)},
        "proposed": {"bilstm-crf": (85.78, 0.18), "map-crf": (82.27, 0.22), "map": (73.90, 0.09)},
        "classic": {"bilstm-crf": (82.32, 0.35), "map-crf": (72.69, 0.12), "map": (57.43, 0.12)},
    }),
    "paper NER-English (CoNLL-03)": (("en", "ner"), {
        "proposed+word": {"bilstm-crf": (93.07, 0.10), "map-crf": (90.17, 0.06), "map": (79.86, 0.12)},
        "proposed": {"bilstm-crf": (91.97, 0.04), "map-crf": (88.62, 0.15), "map": (81.42, 0.16)},
        "classic": {"bilstm-crf": (88.54, 0.08), "map-crf": (66.53, 0.03), "map": (48.79, 0.27)},
    }),
    "paper POS (WSJ)": (("en", "pos"), {
        "proposed+word": {"bilstm-crf": (97.82, 0.02), "map-crf": (97.62, 0.01), "map": (97.35, 0.01)},
        "proposed": {"bilstm-crf": (97.73, 0.02), "map-crf": (97.53, 0.02), "map": (97.26, 0.01)},
        "classic": {"bilstm-crf": (96.94, 0.02), "map-crf": (94.06, 0.02), "map": (89.58, 0.02)},
    }),
}


def rank(value: str, order: tuple[str, ...]) -> tuple[int, str]:
    return (order.index(value), "") if value in order else (len(order), value)


def language(corpus: str) -> Optional[str]:
    """The registered dataset's language; None for a user's own corpus (no paper column is set beside it)."""
    try:
        return dataset(corpus).language
    except FlairsuiteError:
        return None


def measured_cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Per corpus whose published reference averages F1 otherwise (`references.Measure`), the test score so measured,
    as `Summary` cells in a column `<corpus> <measure>` (e.g. `cluener macro F1`); rows as the comparison table."""
    measured = runs["reference_measure"].notna()
    renamed = runs.assign(test_score=runs[f"test_{REFERENCE_SCORE}"].where(measured),
                          corpus_label=runs["corpus_label"].where(~measured, runs["corpus_label"] + " " + runs["reference_measure"].fillna("")))
    table = comparison_table(renamed)  # every run, so that the rows are the comparison table's (fine_tune, entity_fix levels)
    kept = [label for label in table.columns.get_level_values(0).unique() if table[label]["mean"].notna().any()]
    return comparison_cells(table[kept]) if kept else pd.DataFrame(index=table.index)


def with_reference_row(cells: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`cells` and a last row `reference` holding each corpus's published reference (best published or anchor,
    `references.REFERENCES`) under the column of its measure; unchanged where no corpus has one."""
    row = {}
    for label, group in runs.groupby("corpus_label"):
        first = group.iloc[0]
        reference = best_published(first["corpus"], first["corpus_options"] or {})
        if reference is not None:
            measured = f"{label} {reference.measure.name}" if reference.measure else label
            column = measured if measured in cells.columns else label  # runs without the per-type counts: the corpus's column
            row[column] = Reference(reference.value, reference.short)
    if not row:
        return cells
    key = ("reference",) + ("",) * (cells.index.nlevels - 1)
    extra = pd.DataFrame([[row.get(column, "") for column in cells.columns]], columns=cells.columns,
                         index=pd.MultiIndex.from_tuples([key], names=cells.index.names))
    return pd.concat([cells, extra])


def table3(runs: pd.DataFrame, fmt: str = "md") -> str:
    """One experiment's runs in the layout of Akbik et al. 2018, Table 3 (see the module docstring)."""
    runs = trained_runs(runs)
    if runs.empty:
        raise FlairsuiteError("no runs without Entity-Fix for the Table 3 layout")
    table = comparison_table(runs)
    test = comparison_cells(table)
    dev = comparison_table(runs, split="dev").xs("mean", axis=1, level="stat")
    order = sorted(test.index, key=lambda key: (rank(key[0], STACK_ORDER), rank(key[-1], TAGGER_ORDER)))
    cells = pd.DataFrame(index=pd.MultiIndex.from_tuples(order, names=test.index.names))
    measured = measured_cells(runs)
    for corpus in test.columns:
        cells[corpus] = test.loc[order, corpus].values
        cells[f"{corpus} dev"] = dev.loc[order, corpus].values
        for measure in sorted(runs.loc[runs["corpus_label"] == corpus, "reference_measure"].dropna().unique()):
            if (column := f"{corpus} {measure}") in measured.columns:
                cells[column] = measured.reindex(order)[column].fillna("").values
    present = {(language(corpus), task) for corpus, task in zip(runs["corpus"], runs["task"])}
    notes = merged_notes(table_notes(runs), reference_notes(runs, measured_columns=set(cells.columns)))
    for name, (beside, values) in PAPER.items():
        if beside in present:
            cells[name] = [Summary(*paper) if (paper := values.get(key[0], {}).get(key[-1])) else "" for key in order]
            notes[name] = f"{SOURCE}: other data than this table's corpora, a reference line per row, not a target"
    cells = with_reference_row(cells, runs)
    title = f"{runs['experiment'].iloc[0]}: test {metric_title(runs, 'score')} (%) in the layout of {SOURCE}, dev means beside"
    return render(title, cells, notes, fmt)
