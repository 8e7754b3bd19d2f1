"""The report of one tagging run for the people who annotated its data: one self-contained HTML page (`report.html`).

Everything comes from the run's own files (metrics.json with its training history, predictions.tsv) and the facts the
caller gives (data, split, recipe, model). The page holds:

- the facts, and precision, recall and F1 on dev and test;
- per entity type on test: precision, recall, F1, gold and predicted entities (metrics.json's strict IOB2 scores);
- the confusions on test, entity by entity (`confusions`). Each gold entity counts once, in its type's row: in a type's
  column where a predicted entity has exactly its extent (its own type: right; another: confused), under "other
  boundaries" where predicted entities only overlap it, else under "missed (O)". The last row counts the spurious
  predicted entities, which overlap no gold entity, by their type. Entities are read as the scores read them (seqeval,
  strict IOB2: an I-X that continues no X entity starts none), so the diagonal is each type's true positives;
- the learning curve: the dev score after each epoch (`curves.curve_figure`, as `results --curve epochs` draws it),
  a PNG embedded as base64;
- test sentences with gold and predicted entities side by side: up to `EXAMPLES`, those where the two differ first, then
  right ones, each group in test order.
"""

import base64
import html
import io
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from seqeval.scheme import IOB2, Entities

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_text
from flairsuite.results.collect import runs_frame
from flairsuite.results.curves import curve_figure
from flairsuite.results.metrics_file import RunMetrics
from flairsuite.results.predictions import PREDICTIONS_FILE, read_prediction_sentences

EXAMPLES = 8
BOUNDARY, MISSED, SPURIOUS = "other boundaries", "missed (O)", "spurious (O)"
COLOURS = ("#ffe08a", "#a8d8ff", "#c3f0b0", "#f7b8d0", "#d9c8ff", "#ffc9a0", "#b8f0ea", "#e6e6a0")
STYLE = """body{font-family:sans-serif;max-width:64em;margin:2em auto;line-height:1.4;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}.sentences td,.sentences th,.facts td{text-align:left}
.entity{border-radius:3px;padding:0 2px}.entity sub{font-size:70%;font-weight:bold}.differs{outline:2px solid #c0392b}
.diagonal{background:#eaf6e6}.error{background:#fbeaea}"""

Span = tuple[int, int, str]  # start, end (exclusive), type


def strict_entities(tags: Sequence[Sequence[str]]) -> list[list[Span]]:
    """The entities of each sentence as seqeval's strict IOB2 mode reads them (the scores' convention)."""
    return [[(entity.start, entity.end, entity.tag) for entity in sentence] for sentence in Entities([list(t) for t in tags], IOB2).entities]


def confusions(gold: list[list[Span]], predicted: list[list[Span]]) -> Counter:
    """(gold type or SPURIOUS, predicted type or BOUNDARY or MISSED) -> entities (module docstring)."""
    counts: Counter = Counter()
    for gold_spans, found in zip(gold, predicted, strict=True):
        extents = {(start, end): kind for start, end, kind in found}
        for start, end, kind in gold_spans:
            overlaps = any(s < end and start < e for s, e, _ in found)
            counts[kind, extents.get((start, end), BOUNDARY if overlaps else MISSED)] += 1
        for start, end, kind in found:
            if not any(s < end and start < e for s, e, _ in gold_spans):
                counts[SPURIOUS, kind] += 1
    return counts


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], css: str = "", cell_class: Any = None) -> str:
    """An HTML table (no header row where `header` is empty); cells are escaped, `cell_class(row, column)` may give a cell a class."""
    head = f"<tr>{''.join(f'<th>{html.escape(str(cell))}</th>' for cell in header)}</tr>" if header else ""
    body = []
    for r, row in enumerate(rows):
        cells = []
        for c, cell in enumerate(row):
            kind = cell_class(r, c) if cell_class else None
            cells.append(f"<td{f' class={kind!r}' if kind else ''}>{html.escape(str(cell))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table{f' class={css!r}' if css else ''}>{head}{''.join(body)}</table>"


def _percent(value: float) -> str:
    return f"{value * 100:.2f}"


def scores_table(metrics: dict[str, Any]) -> str:
    """Micro precision, recall and F1 on dev and test."""
    rows = [[split, *(_percent(metrics[split][score]) for score in ("precision", "recall", "f1"))] for split in ("dev", "test")]
    return _table(["split", "precision", "recall", "F1"], rows)


def per_type_table(metrics: dict[str, Any]) -> str:
    """Test precision, recall, F1, gold and predicted entities per type, and all types together."""
    test = metrics["test"]
    rows = [[kind, *(_percent(s[score]) for score in ("precision", "recall", "f1")), s["support"], s.get("predicted", "")]
            for kind, s in sorted(test["per_type"].items())]
    total = sum(s["support"] for s in test["per_type"].values())
    rows.append(["all types", *(_percent(test[score]) for score in ("precision", "recall", "f1")), total, ""])
    return _table(["type", "precision", "recall", "F1", "gold entities", "predicted"], rows)


def confusion_table(counts: Counter, types: Sequence[str]) -> str:
    """Rows: gold types, then SPURIOUS; columns: predicted types, BOUNDARY, MISSED (module docstring)."""
    columns, row_names = [*types, BOUNDARY, MISSED], [*types, SPURIOUS]
    rows = [[f"gold {name}" if name != SPURIOUS else name, *(counts.get((name, column), 0) for column in columns)] for name in row_names]

    def cell_class(r: int, c: int) -> Optional[str]:
        if c == 0 or not rows[r][c]:
            return None
        return "diagonal" if c - 1 == r and r < len(types) else "error"

    return _table(["", *(f"found {column}" if column in types else column for column in columns)], rows, cell_class=cell_class)


def curve_png(run: RunMetrics) -> Optional[str]:
    """The run's dev score per epoch as a base64 PNG (None where the run recorded no history)."""
    try:
        figure = curve_figure(runs_frame([run]), "epochs", split="dev")
    except FlairsuiteError:
        return None
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def marked(tokens: Sequence[str], spans: list[Span], others: list[Span], colours: dict[str, str]) -> str:
    """The sentence with its entities marked by type; one not in `others` (the other side) is outlined."""
    starts = {start: (end, kind) for start, end, kind in spans}
    parts, index = [], 0
    while index < len(tokens):
        if index not in starts:
            parts.append(html.escape(tokens[index]))
            index += 1
            continue
        end, kind = starts[index]
        differs = " differs" if (index, end, kind) not in others else ""
        text = html.escape(" ".join(tokens[index:end]))
        parts.append(f'<span class="entity{differs}" style="background:{colours.get(kind, "#ddd")}">{text}<sub>{html.escape(kind)}</sub></span>')
        index = end
    return " ".join(parts)


def examples_table(tokens: list[list[str]], gold: list[list[Span]], predicted: list[list[Span]], colours: dict[str, str]) -> str:
    """Up to EXAMPLES test sentences with entities, those where gold and predicted differ first (module docstring)."""
    with_entities = [i for i in range(len(tokens)) if gold[i] or predicted[i]]
    differ = [i for i in with_entities if set(gold[i]) != set(predicted[i])]
    chosen = (differ + [i for i in with_entities if i not in differ])[:EXAMPLES]
    rows = [f"<tr><td>{i + 1}</td><td>{marked(tokens[i], gold[i], predicted[i], colours)}</td>"
            f"<td>{marked(tokens[i], predicted[i], gold[i], colours)}</td></tr>" for i in chosen]
    return f'<table class="sentences"><tr><th>#</th><th>gold</th><th>predicted</th></tr>{"".join(rows)}</table>'


def report_html(run: RunMetrics, facts: Sequence[tuple[str, str]], title: str) -> str:
    """The page (module docstring) of the run whose metrics.json is `run`, with the `facts` (label, text) on top."""
    sentences = read_prediction_sentences(run.path.parent / PREDICTIONS_FILE)
    tokens = [[p.token for p in sentence] for sentence in sentences]
    gold = strict_entities([[p.gold for p in sentence] for sentence in sentences])
    predicted = strict_entities([[p.predicted for p in sentence] for sentence in sentences])
    types = sorted(run.metrics["test"]["per_type"])
    colours = {kind: COLOURS[i % len(COLOURS)] for i, kind in enumerate(types)}
    png = curve_png(run)
    curve = f'<img alt="dev score after each epoch" src="data:image/png;base64,{png}">' if png else "<p>The run recorded no training history.</p>"
    return "\n".join([
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>", _table([], list(facts), css="facts"),
        "<h2>Scores</h2><p>Entities count as found only with exactly their extent and type (seqeval, strict IOB2).</p>", scores_table(run.metrics),
        "<h2>Per entity type (test)</h2>", per_type_table(run.metrics),
        "<h2>Confusions (test)</h2><p>Each gold entity once, in its type's row: found with exactly its extent as a type, found only with other "
        "boundaries, or missed. The last row: predicted entities that overlap no gold entity.</p>",
        confusion_table(confusions(gold, predicted), types),
        "<h2>Learning curve</h2>", curve,
        "<h2>Test sentences, gold and predicted</h2><p>Outlined: an entity the other side lacks (other extent or type). "
        "Sentences with a difference come first.</p>", examples_table(tokens, gold, predicted, colours),
        "</body></html>\n",
    ])


def write_tagger_report(path: Path, run: RunMetrics, facts: Sequence[tuple[str, str]], title: str) -> None:
    """Write the report of `run` to `path` (HTML, atomically)."""
    write_text(path, report_html(run, facts, title))
