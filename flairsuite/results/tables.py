"""Comparison tables over runs: aggregation over seeds, then Markdown, CSV or LaTeX text.

Rows are embedding stack (× fine-tuned) (× transfer) × tagger (× Entity-Fix), the bracketed levels only when any
run of the table fine-tuned, trained on other corpora first or beside (`transfer:`) or used Entity-Fix; columns are
corpus labels, cells are `mean ± std (n)` over seeds in percent with 2 decimals; std is the sample
std (ddof=1), shown as `–` (LaTeX `--`) when n = 1. The best cell per column (highest mean as
shown; ties all) is bold in md (`**…**`) and LaTeX (`\\textbf{…}`). CSV holds numbers for a program to
read: three columns per corpus, `<corpus> mean`, `<corpus> std` (empty when n = 1) and `<corpus> n`
(per-type tables: the mean per type), nothing marked.

Every table, the paper layouts included, is built of typed cells (`Summary`, `Reference`, `Difference`, a float or
text) and written out by `render` or `written`: in md and LaTeX each cell as text, in CSV as numbers, a column of
`Summary` or `Difference` cells spread over one column per field (`<column> mean`, `<column> std`, `<column> n`).
A corpus evaluated on a subsample gets a `†` and a footnote under the table.

The default metric, `score`, is each run's main score: entity F1 on NER corpora, token accuracy on
PoS ones (`flairsuite.corpora.tasks`). A table that holds both names the metric in each PoS
column's header (`ud-en-ewt [accuracy]`) and in its title; `f1`, `precision`, `recall` and
`accuracy` show that score only, blank where a corpus's task has none.
"""

import csv
import io
import math
import sys
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional, Union

import pandas as pd

from flairsuite.corpora.tasks import TASKS
from flairsuite.errors import FlairsuiteError
from flairsuite.results.collect import SCORE, SCORED_SPLITS, SCORES, TRANSFER, trained_runs
from flairsuite.results.metrics_file import NO_TRANSFER
from flairsuite.results.references import best_published

KEYS = ("embeddings", "tagger")
FIX = "entity_fix"
TUNED = "fine_tune"
STATS = ("mean", "std", "n")
KEY_HEADERS = {FIX: "Entity-Fix", TUNED: "fine-tuned", TRANSFER: "transfer"}


class Style(NamedTuple):
    """How one output format writes the parts of a cell."""

    pm: str
    no_std: str
    dagger: str
    bold: Callable[[str], str]
    escape: Callable[[str], str]


LATEX_SPECIALS = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}
STYLES = {
    "md": Style(" ± ", "–", "†", lambda s: f"**{s}**", lambda s: s.replace("|", "\\|")),
    "csv": Style(" ± ", "–", "†", lambda s: f"{s}*", lambda s: s),  # typed cells are written as numbers, unmarked (`written`)
    "latex": Style(r" $\pm$ ", "--", r"\textsuperscript{\dag}", lambda s: rf"\textbf{{{s}}}", lambda s: "".join(LATEX_SPECIALS.get(c, c) for c in s)),
}



@dataclass(frozen=True)
class Summary:
    """Scores over seeds in percent: mean, sample std (NaN for one run) and n (None for a published `mean ± std`);
    `best`: its column's highest mean as shown, bold in md and LaTeX."""

    mean: float
    std: float = math.nan
    n: Optional[int] = None
    best: bool = False

    def text(self, style: Style) -> str:
        """`77.12 ± 0.45 (3)`, `77.12 ± – (1)`, or without n `88.20 ± 0.21`; bold where best."""
        if self.n is None:
            shown = f"{self.mean:.2f}{style.pm}{self.std:.2f}"
        else:
            shown = f"{self.mean:.2f}{style.pm}{style.no_std if self.n < 2 else f'{self.std:.2f}'} ({self.n})"
        return style.bold(shown) if self.best else shown

    def numbers(self) -> dict[str, Optional[float]]:
        return {"mean": self.mean, "std": self.std, **({"n": self.n} if self.n is not None else {})}


@dataclass(frozen=True)
class Reference:
    """A published score (%) and its short source: `49.49 (Flair)`; in CSV the score alone, under `mean` (the source is footnoted)."""

    value: float
    source: str

    def text(self, style: Style) -> str:
        return f"{self.value:.2f} ({style.escape(self.source)})"

    def numbers(self) -> dict[str, Optional[float]]:
        return {"mean": self.value}


@dataclass(frozen=True)
class Difference:
    """A difference of two means (points) and its confidence interval: `+1.62 [+0.60, +2.64]`, without one `+1.62`;
    `paired`: the interval is that of per-seed differences (`+1.62 [+0.60, +2.64] paired`)."""

    value: float
    low: Optional[float] = None
    high: Optional[float] = None
    paired: bool = False

    def text(self, style: Style) -> str:
        if self.low is None:
            return f"{self.value:+.2f}"
        return f"{self.value:+.2f} [{self.low:+.2f}, {self.high:+.2f}]" + (" paired" if self.paired else "")

    def numbers(self) -> dict[str, Optional[float]]:
        return {"": self.value, "low": self.low, "high": self.high}


Cell = Union[Summary, Reference, Difference, float, str, None]
SPREAD = (Summary, Reference, Difference)  # the cells CSV spreads over a column per field


def summary(values: Sequence[float]) -> Optional[Summary]:
    """The Summary of scores in percent (None for none)."""
    if not len(values):
        return None
    series = pd.Series(values, dtype=float)
    return Summary(float(series.mean()), float(series.std()), len(series))


def cell_text(value: Cell, style: Style) -> str:
    """A cell as md or LaTeX text: typed cells as they write themselves, a number with 2 decimals, none (NaN) empty."""
    if isinstance(value, SPREAD):
        return value.text(style)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.2f}" if isinstance(value, (float, int)) and not isinstance(value, bool) else str(value)


def written(header: list[str], rows: list[list[Cell]], style: Style, numbers: bool) -> tuple[list[str], list[list[str]]]:
    """The header and rows of typed cells as text; with `numbers` (CSV) as numbers, a column holding `Summary`, `Reference` or
    `Difference` cells spread over a column per field (`<column> mean`, `<column> std`, `<column> n`; a Difference's interval
    `<column> low`, `<column> high`), a field none of its cells has left out."""
    if not numbers:
        return header, [[cell_text(value, style) for value in row] for row in rows]
    names: list[str] = []
    columns: list[list[str]] = []
    for index, name in enumerate(header):
        column = [row[index] for row in rows]
        spread = [value.numbers() for value in column if isinstance(value, SPREAD)]
        if not spread:
            names.append(name)
            columns.append([value if isinstance(value, str) else number_text(value) for value in column])
            continue
        fields = [field for field in dict.fromkeys(key for parts in spread for key in parts) if any(parts.get(field) is not None for parts in spread)]
        for field in fields:
            names.append(f"{name} {field}" if field else name)
            columns.append([number_text(value.numbers().get(field)) if isinstance(value, SPREAD) else "" for value in column])
    return names, [list(row) for row in zip(*columns)] if rows else []

def metric_title(runs: pd.DataFrame, metric: str) -> str:
    """How a title names `metric` over `runs`: `F1`, `accuracy`, or for `score` over NER and PoS runs `F1 (NER), accuracy (PoS)`."""
    if metric != SCORE:
        return metric
    tasks = [TASKS[name] for name in TASKS if name in set(runs["task"])]
    if len(tasks) == 1:
        return tasks[0].metric_title
    return ", ".join(f"{t.metric_title} ({t.name.upper() if t.spans else 'PoS'})" for t in tasks)


def labeled_by_metric(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """`runs` with `[accuracy]` after the corpus label of non-NER runs, when `metric` is `score` and the runs mix tasks."""
    if metric != SCORE or runs["task"].nunique() < 2:
        return runs
    titled = runs.copy()
    tagging = titled["task"] != "ner"
    titled.loc[tagging, "corpus_label"] = titled.loc[tagging].apply(lambda row: f"{row['corpus_label']} [{TASKS[row['task']].metric_title}]", axis=1)
    return titled


def score_column(metric: str, split: str) -> str:
    """`("f1", "test")` -> `"test_f1"`; an unknown metric or split is an error."""
    if metric not in SCORES or split not in SCORED_SPLITS:
        raise FlairsuiteError(f"metric must be one of {', '.join(SCORES)} and split one of {', '.join(SCORED_SPLITS)}")
    return f"{split}_{metric}"


def row_keys(runs: pd.DataFrame) -> list[str]:
    """embeddings, fine_tune when any of `runs` fine-tuned, transfer when any of `runs` trained on other corpora too, tagger,
    and entity_fix when any of `runs` used it."""
    tuned = [TUNED] if TUNED in runs and runs[TUNED].any() else []
    transfer = [TRANSFER] if TRANSFER in runs and (runs[TRANSFER] != NO_TRANSFER).any() else []
    return [KEYS[0], *tuned, *transfer, *KEYS[1:], *([FIX] if runs[FIX].any() else [])]


def comparison_table(runs: pd.DataFrame, metric: str = SCORE, split: str = "test") -> pd.DataFrame:
    """Mean, sample std and n over seeds of `<split>_<metric>` in percent.

    Index: embeddings, tagger (, entity_fix); columns: (corpus_label, mean|std|n), corpora sorted.
    """
    scores = runs[score_column(metric, split)] * 100
    groups = [runs[key] for key in row_keys(runs)] + [runs["corpus_label"]]
    stats = scores.groupby(groups).agg(["mean", "std", "count"]).rename(columns={"count": "n"})
    columns = pd.MultiIndex.from_product([sorted(runs["corpus_label"].unique()), STATS], names=["corpus_label", "stat"])
    return stats.unstack("corpus_label").swaplevel(axis=1).reindex(columns=columns)


def per_type_table(per_type: pd.DataFrame, corpus_label: str, metric: str = SCORE, split: str = "test") -> pd.DataFrame:
    """Mean over seeds of `metric` per entity type in percent for one corpus: columns = types.

    Rows as comparison_table; the Entity-Fix level is there when any row of `per_type` (pass one
    experiment's) used it, so the per-type tables match the experiment's comparison table.
    """
    score_column(metric, split)
    keys = row_keys(per_type)
    rows = per_type[(per_type["corpus_label"] == corpus_label) & (per_type["split"] == split)]
    groups = [rows[key] for key in keys] + [rows["type"]]
    return (rows[metric] * 100).groupby(groups).mean().unstack("type")


def subsample_notes(runs: pd.DataFrame) -> dict[str, str]:
    """Corpus label -> footnote, for the corpora with runs on a subsample, on splits other than the dataset's own (`split_note`)
    or with the corpus's own training overrides (`train_note`). Runs are counted as trained: a run's Entity-Fix variant
    (the same model re-decoded) is not a second run."""
    notes = {}
    for label, group in runs.groupby("corpus_label", sort=True):
        trained = trained_runs(group)
        used = trained["subsample"].dropna()
        parts = [f"{len(used)} of {len(trained)} runs on a subsample: {'; '.join(sorted(used.unique()))}"] if not used.empty else []
        if "split_note" in group:
            parts += sorted(group["split_note"].dropna().unique())
        if "train_note" in group:
            parts += [note] if (note := merged_train_note(group)) else []
        if parts:
            notes[label] = "; ".join(parts)
    return notes


TRAIN_NOTE_PREFIX, TRAIN_NOTE_SUFFIX = "trained with ", " on this corpus"


def merged_train_note(runs: pd.DataFrame) -> Optional[str]:
    """One corpus's training overrides as one footnote, from its runs' `train_note`s (`CorpusEntry.train_note`).

    A note lists the corpus-wide settings and, per tagger, that tagger's own (`max_epochs 30; bilstm-crf: max_epochs 10`);
    each run is the authority on its own tagger only, so a tagger's part is taken from that tagger's runs: a note written
    before the experiment gave another tagger new settings does not put the old ones beside the new in the footnote.
    """
    shared: set[str] = set()
    own: dict[str, set[str]] = {}
    for tagger, note in zip(runs["tagger"], runs["train_note"]):
        if not isinstance(note, str):
            continue
        body = note.removeprefix(TRAIN_NOTE_PREFIX).removesuffix(TRAIN_NOTE_SUFFIX)
        for part in body.split("; "):
            name, colon, settings = part.partition(": ")
            if not colon:
                shared.add(part)
            elif name == tagger:
                own.setdefault(name, set()).add(settings)
    parts = sorted(shared) + [f"{name}: {settings}" for name in sorted(own) for settings in sorted(own[name])]
    return f"{TRAIN_NOTE_PREFIX}{'; '.join(parts)}{TRAIN_NOTE_SUFFIX}" if parts else None


def file_notes(runs: pd.DataFrame) -> dict[str, str]:
    """Embedding spec -> footnote, for the specs whose runs in this table read more than one file (`artifact_digests`):
    e.g. fastText vectors trained by the same command on machines whose floats differ. A stack member is known by
    its stack and place, so runs recorded under a spec's former name (tag --force's renaming) count with it, under
    the name most runs give it. A run's Entity-Fix variant is the same trained model, so it is not counted again; runs
    from before digests were recorded are not counted."""
    places: dict[tuple[str, int], tuple[Counter, Counter]] = {}  # (stack, place) -> (spec names, digests)
    trained = trained_runs(runs)
    for stack, digests in zip(trained["embeddings"], trained["artifact_digests"]):
        for place, (spec, digest) in enumerate((digests or {}).items()):
            names, files = places.setdefault((stack, place), (Counter(), Counter()))
            names[spec] += 1
            files[digest] += 1
    by_name: dict[str, Counter] = {}
    for names, files in places.values():
        by_name.setdefault(names.most_common(1)[0][0], Counter()).update(files)
    return {
        spec: f"{len(files)} files (SHA-256) across the runs: "
        + ", ".join(f"{digest[:6]}… {n} run{'s' * (n > 1)}" for digest, n in sorted(files.items(), key=lambda item: (-item[1], item[0])))
        for spec, files in sorted(by_name.items())
        if len(files) > 1
    }


PAPER_FINE_TUNING = "the paper: 30 × 5,000, LER 50 × 5,000 (Zöllner et al. 2021, §6.1)"
FINE_TUNING_NOTE = "fine-tuning"


def fine_tune_notes(runs: pd.DataFrame) -> dict[str, str]:
    """One footnote on the fine-tuned runs' length, epochs × sentences an epoch (`epoch_samples`; the whole train set
    where unset), beside the paper's: a table of BERTs fine-tuned shorter than the paper says so in its notes."""
    if "train" not in runs or "fine_tune" not in runs:
        return {}
    tuned = runs[runs["fine_tune"].fillna(False).astype(bool)]
    lengths = sorted({(int(s.get("max_epochs", 0)), s.get("epoch_samples")) for s in tuned["train"] if isinstance(s, dict) and s.get("max_epochs")},
                     key=lambda pair: (pair[0], pair[1] or 0))
    if not lengths:
        return {}
    shown = "; ".join(f"{epochs} × {samples:,} sentences" if samples else f"{epochs} epochs over the whole train set" for epochs, samples in lengths)
    return {FINE_TUNING_NOTE: f"{shown} ({PAPER_FINE_TUNING})"}


def table_notes(runs: pd.DataFrame) -> dict[str, str]:
    """The footnotes of a table of `runs`: per corpus (`subsample_notes`), per embedding file (`file_notes`), then the
    fine-tuned runs' length (`fine_tune_notes`)."""
    return {**subsample_notes(runs), **file_notes(runs), **fine_tune_notes(runs)}


def reference_notes(runs: pd.DataFrame, measured_columns: Collection[str] = ()) -> dict[str, str]:
    """Corpus label -> footnote with the published reference of its task (`references.REFERENCES`), e.g. `anchor 49.49
    (Flair, ...)`, naming its measure where it averages F1 otherwise than the table (`Measure`), and the table's column
    of ours so measured where it is one of `measured_columns`."""
    notes = {}
    for label, group in runs.groupby("corpus_label", sort=True):
        first = group.iloc[0]
        reference = best_published(first["corpus"], first["corpus_options"] or {})
        if reference is None:
            continue
        measure = reference.measure
        column = f"{label} {measure.name}" if measure else None
        how = "" if measure is None else f", {measure.name}" + (f" (ours so: column '{column}')" if column in measured_columns else "")
        notes[label] = f"{reference.kind} {reference.value:.2f}{how}: {reference.source}"
    return notes


def merged_notes(*parts: dict[str, str]) -> dict[str, str]:
    """Footnote dicts merged in order, the notes of one label joined by `; `."""
    merged: dict[str, str] = {}
    for notes in parts:
        for label, note in notes.items():
            merged[label] = f"{merged[label]}; {note}" if label in merged else note
    return merged


def best_of(means: pd.DataFrame) -> pd.DataFrame:
    """True where a mean is its column's highest as shown (2 decimals; ties all)."""
    shown = means.round(2)
    return shown.eq(shown.max())


def mark_best(cells: pd.DataFrame, means: pd.DataFrame, style: Style) -> pd.DataFrame:
    """Bold (md, LaTeX) or star (CSV) the text cells of the highest mean, as shown, per column."""
    return cells.where(~best_of(means), cells.apply(lambda column: column.map(style.bold)))


def comparison_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison table as `Summary` cells (the best per column marked), empty ("") where a row has no run of a corpus."""
    means, stds, counts = (table.xs(stat, axis=1, level="stat") for stat in STATS)
    return pd.DataFrame(
        [
            ["" if pd.isna(m) else Summary(float(m), float(s), int(n), bool(b)) for m, s, n, b in zip(*values)]
            for values in zip(means.values, stds.values, counts.values, best_of(means).values)
        ],
        index=means.index,
        columns=means.columns,
    )


def number_text(value: object) -> str:
    """A CSV number: up to 4 decimals (a whole number without them), empty for none (None, NaN)."""
    if value is None or pd.isna(value):
        return ""
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number.is_integer() else str(round(number, 4))


def per_type_cells(table: pd.DataFrame, style: Style, numbers: bool = False) -> pd.DataFrame:
    """The per-type table as text cells with 2 decimals (`numbers`: CSV numbers, unmarked), empty where a row lacks the type."""
    if numbers:
        return table.apply(lambda column: column.map(number_text))
    cells = table.apply(lambda column: column.map(lambda mean: "" if pd.isna(mean) else f"{mean:.2f}"))
    return mark_best(cells, table, style)


def key_text(value: object) -> str:
    """A row key as text: Entity-Fix booleans as yes/no."""
    return ("yes" if value else "no") if isinstance(value, bool) else str(value)


def render(title: str, cells: pd.DataFrame, notes: dict[str, str], fmt: str) -> str:
    """One titled table of typed cells in format `fmt` (`written`): index levels as leading columns, a `†` on the columns in
    `notes`, `notes` as footnotes."""
    style = STYLES[fmt]
    keys = [KEY_HEADERS.get(name, name) for name in cells.index.names]
    header = [style.escape(k) for k in keys] + [style.escape(str(c)) + (style.dagger if c in notes else "") for c in cells.columns]
    rows = [
        [style.escape(key_text(k)) for k in (index if isinstance(index, tuple) else (index,))] + list(values)
        for index, values in zip(cells.index, cells.values)
    ]
    header, rows = written(header, rows, style, numbers=fmt == "csv")
    footnotes = [f"{style.dagger} {style.escape(f'{label}: {note}')}" for label, note in notes.items()]
    return WRITERS[fmt](style.escape(title), header, rows, footnotes, len(keys))


def markdown(title: str, header: list[str], rows: list[list[str]], footnotes: list[str], n_keys: int) -> str:
    """A `## title` heading, a pipe table (scores right-aligned), footnotes as lines."""
    align = ["---"] * n_keys + ["--:"] * (len(header) - n_keys)
    lines = [f"## {title}", ""] + ["| " + " | ".join(row) + " |" for row in [header, align, *rows]]
    return "\n".join(lines + ([""] + footnotes if footnotes else []))


def csv_text(title: str, header: list[str], rows: list[list[str]], footnotes: list[str], n_keys: int) -> str:
    """The CSV table alone (header row, rows), which `pandas.read_csv` reads as it is; its title and `†` footnotes go to
    stderr as `# ` lines, where a person sees them and a program reading stdout does not."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *rows])
    print("\n".join([f"# {title}"] + [f"# {note}" for note in footnotes]), file=sys.stderr)
    return buffer.getvalue().rstrip("\n")


def latex(title: str, header: list[str], rows: list[list[str]], footnotes: list[str], n_keys: int) -> str:
    """A `% title` comment and a booktabs tabular; footnotes as full-width rows under the rule."""
    lines = [f"% {title}", rf"\begin{{tabular}}{{{'l' * n_keys}{'r' * (len(header) - n_keys)}}}", r"\toprule"]
    lines.append(" & ".join(header) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(["{}" + row[0] if row[0].startswith("[") else row[0], *row[1:]]) + r" \\" for row in rows]  # `\\ [` reads as a skip
    lines.append(r"\bottomrule")
    lines += [rf"\multicolumn{{{len(header)}}}{{l}}{{\footnotesize {note}}} \\" for note in footnotes]
    lines.append(r"\end{tabular}")
    return "\n".join(lines)


WRITERS = {"md": markdown, "csv": csv_text, "latex": latex}


def report(
    runs: pd.DataFrame, per_type: pd.DataFrame, fmt: str = "md", metric: str = SCORE, split: str = "test", with_per_type: bool = False
) -> str:
    """One comparison table per experiment (and, if asked, one per-type table per corpus), blank-line separated."""
    style = STYLES[fmt]
    sections = []
    for experiment, group in runs.groupby("experiment", sort=True):
        labeled = labeled_by_metric(group, metric)
        notes = table_notes(labeled)
        table = comparison_table(labeled, metric, split)
        title = f"{experiment}: {split} {metric_title(group, metric)} (%), mean ± std over seeds (n)"
        cells = comparison_cells(table)
        sections.append(render(title, cells, notes, fmt))
        if with_per_type:
            types = per_type[per_type["experiment"] == experiment]
            for label in sorted(set(types.loc[types["split"] == split, "corpus_label"])):
                rows = types[types["corpus_label"] == label]
                unit = "entity type" if (rows["task"] == "ner").all() else "tag"
                title = f"{experiment}: {label}, {split} {metric_title(rows, metric)} per {unit} (%), mean over seeds"
                cells = per_type_cells(per_type_table(types, label, metric, split), style, numbers=fmt == "csv")
                sections.append(render(title, cells, {k: v for k, v in notes.items() if k == label}, fmt))
    return "\n\n".join(sections)
