"""Lexicon files: `lexicons/NAME.tsv`, one entry per line with its frequency and scores, read back with one-line errors.

    # flairsuite lexicon: units=characters language=zh
    entry	frequency	documents	mi	left_entropy	right_entropy	score
    宋江	1021	734	9.12	5.81	6.02	20.95

The header comment says how the entries split into units: `characters` (Chinese: every character
a unit, entries written without spaces) or `words` (word tokens, entries written with single
spaces; an entry splits as text does, so `St. Pauli` is the tokens `St`, `.`, `Pauli`). A hand-made
lexicon needs only the comment line and the `entry` column; the scores are optional (`score` feeds the
optional score buckets of the `lexicon:` embedding).
"""

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pandas as pd

from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.files.atomic import write_text
from flairsuite.rawtext.tokens import tokenize

UNITS = ("characters", "words")
MAGIC = "# flairsuite lexicon:"
SCORE_COLUMNS = ("frequency", "documents", "mi", "left_entropy", "right_entropy", "score")


@dataclass(frozen=True)
class Lexicon:
    """Entries (each a tuple of units) with their scores (NaN where the file has none), and how text splits into units."""

    units: str  # "characters" or "words"
    entries: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    language: str = "unknown"
    source: Optional[Path] = field(default=None, compare=False)

    def text(self, entry: tuple[str, ...]) -> str:
        """An entry as written: characters joined without, words with single spaces."""
        return ("" if self.units == "characters" else " ").join(entry)


def split_entry(text: str, units: str) -> tuple[str, ...]:
    """`"北京大学"` -> 4 characters; `"Franz Marc"` -> 2 words; `"St. Pauli"` -> `St`, `.`, `Pauli`: words are split as the
    text is (`rawtext.tokens`: punctuation is a token of its own), so an entry with a full stop or hyphen matches."""
    return tuple(tokenize(text, units == "characters"))


def write_lexicon(path: Path, table: pd.DataFrame, units: str, language: str) -> None:
    """Write the discovered `table` (columns `entry` + SCORE_COLUMNS) atomically as a lexicon TSV."""
    lines = [f"{MAGIC} units={units} language={language}", "\t".join(["entry", *SCORE_COLUMNS])]
    for row in table.itertuples(index=False):
        values = [f"{getattr(row, column):.4f}" if isinstance(getattr(row, column), float) else str(getattr(row, column)) for column in SCORE_COLUMNS]
        lines.append("\t".join([row.entry, *values]))
    write_text(path, "\n".join(lines) + "\n")


def _header(path: Path, line: str) -> dict[str, str]:
    if not line.startswith(MAGIC):
        raise InputError(path, 1, f"not a flairsuite lexicon: the first line must be `{MAGIC} units=characters|words`")
    fields = dict(item.partition("=")[::2] for item in line[len(MAGIC):].split())
    if fields.get("units") not in UNITS:
        raise InputError(path, 1, f"units must be one of {', '.join(UNITS)} (found {fields.get('units')!r})")
    return fields


def read_lexicon(path: Path) -> Lexicon:
    """The lexicon in `path`; a missing file, a bad header or a bad line is a one-line error naming file and line."""
    if not path.is_file():
        raise FlairsuiteError(f"{path}: lexicon not found (make one with `flairsuite discover-words --lang LANG --out {path}`)")
    lines = read_utf8(path, "lexicon").splitlines()
    if not lines:
        raise InputError(path, None, "empty file")
    fields = _header(path, lines[0])
    columns = lines[1].split("\t") if len(lines) > 1 else ["entry"]
    if columns[0] != "entry":
        raise InputError(path, 2, "the second line must name the columns, the first being `entry`")
    score_at = columns.index("score") if "score" in columns else None
    entries, scores, seen = [], [], set()
    for number, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise InputError(path, number, f"{len(cells)} tab-separated cells, the header names {len(columns)}")
        entry = split_entry(cells[0], fields["units"])
        if not entry:
            raise InputError(path, number, "empty entry")
        for column, cell in zip(columns[1:], cells[1:]):
            if column in SCORE_COLUMNS and not finite_number(cell):
                raise InputError(path, number, f"{column} {cell!r} is not a number")
        score = float(cells[score_at]) if score_at is not None else math.nan
        if entry not in seen:
            seen.add(entry)
            entries.append(entry)
            scores.append(score)
    return Lexicon(fields["units"], tuple(entries), tuple(scores), fields.get("language", "unknown"), path)


def finite_number(text: str) -> bool:
    """Whether a lexicon cell reads as a finite number (`nan` and `inf` do not)."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False

