"""Which own-corpus format an annotation export is in, told by its files' contents (never their names): the keys of a
corpus entry (`own.py`) that read it, and a line saying what was recognised, so that a wrong guess shows at once.

Rules (`detect_format`), each file judged by its first `HEAD_LINES` lines, in this order:

- A folder or ZIP file in the layout of an INCEpTION project export (`inception_project.is_export`): `webanno`.
- A first line `#FORMAT=WebAnno TSV 3...`: `webanno`.
- A first character `[`: `jsonl` (a Label Studio JSON export). A first line that is a JSON object: `spans_json` where its
  `label` is a mapping (CLUENER), else `jsonl` (doccano JSON lines).
- Every line that is no `#` comment of 10 tab-separated fields, the first a CoNLL-U word id (`3`, `3-4`, `3.1`): `conllu`,
  tags from `misc:KEY`, the MISC key that holds the most entity tags (`NE=B-PER`); none: an error.
- A first line that is no `#` comment and names, tab-separated, the columns of the `hipe` preset (`format_names.PRESETS`:
  TOKEN first, NE-COARSE-LIT and MISC among them): `hipe` (HIPE-2020/2022 TSV).
- Else token and tag columns (`column`): tab-separated where every line has a tab, else any whitespace; the tag column is
  the last one where it holds entity tags (the reader's default), else the first that does (at least 95 % of its
  cells tags, one an entity's); a first line whose cell there is no tag is a header (`header: true`, the column then
  named by it); `#` lines that are no token line are comments (`comment: "# "` where each starts so, else `"#"`); a
  header column whose flags hold `EndOfSentence` (HIPE's MISC) ends sentences (`sentence_end: COLUMN:EndOfSentence`).
  No such column: an error naming the file and the formats looked for.
- A folder: the files of the splits it names (`own.find_files`: `train.tsv`, `dev/`, ...), else each of its files
  (subfolders too, hidden ones aside), is judged; all must be one format read with the same keys, two that differ are
  an error naming both.
"""

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Optional

from flairsuite.corpora.format_names import PRESETS
from flairsuite.corpora.inception_project import is_export
from flairsuite.corpora.own import find_files
from flairsuite.corpora.readers import is_tag
from flairsuite.errors import FlairsuiteError, InputError

HEAD_LINES = 2000
TAG_SHARE = 0.95  # a tag column: at least this share of its cells are tags
CONLLU_ID = re.compile(r"[1-9][0-9]*(-[1-9][0-9]*|\.[1-9][0-9]*)?|0\.[1-9][0-9]*")
SENTENCE_FLAG = "EndOfSentence"
LOOKED_FOR = ("WebAnno TSV (#FORMAT=WebAnno TSV 3.x), doccano JSONL, Label Studio JSON, CLUENER JSON, CoNLL-U with tags in MISC, "
              "HIPE TSV, or token and tag columns with BIO/BIOES tags")
HIPE = PRESETS["hipe"]


@dataclass(frozen=True)
class Detected:
    """A format recognised: the corpus-entry keys that read it and what it is, in words."""

    entry: dict[str, Any] = field(hash=False)
    what: str


def _head(path: Path) -> list[str]:
    """The first HEAD_LINES lines of a file (gzip-aware), without line ends (undecodable bytes replaced: the reader checks them)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
            return [line.rstrip("\r\n") for line in islice(handle, HEAD_LINES)]
    except (OSError, EOFError) as err:
        raise InputError(path, None, f"cannot be read ({getattr(err, 'strerror', None) or err})") from None


def _json_kind(path: Path, lines: list[str]) -> Optional[Detected]:
    """Label Studio, doccano or CLUENER JSON (None: not JSON)."""
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("["):
        return Detected({"format": "jsonl"}, "Label Studio JSON (a list of tasks)")
    if not first.startswith("{"):
        return None
    try:
        record = json.loads(first)
    except ValueError:
        raise InputError(path, 1, "begins like JSON lines (doccano), but its first line is no JSON object") from None
    if isinstance(record, dict) and isinstance(record.get("label"), dict):
        return Detected({"format": "spans_json"}, "CLUENER JSON lines (one token per character)")
    return Detected({"format": "jsonl"}, "doccano JSON lines (texts with character offsets)")


def _conllu(lines: list[str]) -> Optional[list[list[str]]]:
    """The word lines of a CoNLL-U file, split (None: not CoNLL-U)."""
    rows = [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]
    if not rows or not all(len(row) == 10 and CONLLU_ID.fullmatch(row[0]) for row in rows):
        return None
    return rows


def _conllu_kind(path: Path, rows: list[list[str]]) -> Detected:
    """CoNLL-U with its tags read from the MISC key that holds the most entity tags."""
    keys: Counter = Counter()
    for row in rows:
        for item in row[9].split("|"):
            key, sep, value = item.partition("=")
            if sep and value != "O" and is_tag(value):
                keys[key] += 1
    if not keys:
        raise InputError(path, None, "CoNLL-U, but no MISC key holds entity tags (e.g. NE=B-PER): a tagger needs them there")
    key = keys.most_common(1)[0][0]
    return Detected({"format": "conllu", "label": f"misc:{key}"}, f"CoNLL-U, entity tags from MISC {key}=")


def _tag_column(rows: list[list[str]], width: int) -> Optional[int]:
    """The tag column of token lines `rows` (all `width` wide; the first may be a header, so the share of tags leaves it
    out): the last where it holds tags, else the first (module docstring)."""
    def holds_tags(column: int) -> bool:
        cells = [row[column] for row in rows[1:] or rows]
        return (sum(map(is_tag, cells)) >= TAG_SHARE * len(cells)
                and any(is_tag(row[column]) and row[column] != "O" for row in rows))

    found = [column for column in range(1, width) if holds_tags(column)]
    if not found:
        return None
    return width - 1 if width - 1 in found else found[0]


def _comment(lines: list[str], rows_of: Any) -> Optional[str]:
    """`# ` or `#` for `#` lines that are no token line; None without them."""
    comments = [line for line in lines if line.startswith("#") and rows_of(line) is None]
    if not comments:
        return None
    return "# " if all(line.startswith("# ") for line in comments) else "#"


def _column_kind(path: Path, lines: list[str]) -> Detected:
    """Token and tag columns (module docstring)."""
    filled = [line for line in lines if line.strip()]
    tokens = [line for line in filled if not line.startswith("#")]  # a `#` line is judged once the columns are known
    tab = bool(tokens) and all("\t" in line for line in tokens)
    split = (lambda line: line.split("\t")) if tab else (lambda line: line.split())
    widths = Counter(len(split(line)) for line in tokens)
    width = widths.most_common(1)[0][0] if widths else 0
    rows = [split(line) for line in tokens if len(split(line)) == width]
    column = _tag_column(rows, width) if width >= 2 else None
    if column is None:
        raise InputError(path, None, f"format not recognised: no column of entity tags (B-PER, I-PER, O) in its first lines; looked for {LOOKED_FOR}")
    header = not is_tag(rows[0][column])
    names = rows[0] if header else None
    entry: dict[str, Any] = {"format": "column", **({"sep": "tab"} if tab else {}), **({"header": True} if header else {})}
    if column != width - 1:
        entry["label"] = names[column] if names else column
    if names is not None:
        entry["text"] = names[0]
        flagged = [name for index, name in enumerate(names) if any(SENTENCE_FLAG in row[index].split("|") for row in rows[1:])]
        if flagged:
            entry["sentence_end"] = f"{flagged[0]}:{SENTENCE_FLAG}"
    comment = _comment(filled, lambda line: split(line) if len(split(line)) == width and is_tag(split(line)[column]) else None)
    if comment:
        entry["comment"] = comment
    return Detected(entry, _column_what(entry, names, column, width))


def _hipe_kind(lines: list[str]) -> Optional[Detected]:
    """HIPE TSV where the first line that is no `#` comment is a header naming the preset's token, tag and flag columns."""
    first = next((line for line in lines if line.strip() and not line.startswith("#")), "")
    names = [name.strip() for name in first.split("\t")]
    wanted = (HIPE["text"], HIPE["label"], HIPE["sentence_end"].partition(":")[0])
    if names[0] != HIPE["text"] or not set(wanted) <= set(names):
        return None
    return Detected({"format": "hipe"}, f"HIPE TSV (format hipe: a header line of {len(names)} columns, tags in {HIPE['label']}, "
                                        f"sentences ended by {HIPE['sentence_end']}, documents at {HIPE['document_comment']!r})")


def _column_what(entry: dict[str, Any], names: Optional[list[str]], column: int, width: int) -> str:
    """`token and tag columns (tab-separated, a header line, tags in column NE-COARSE-LIT of 10, ...)`."""
    parts = ["tab-separated" if entry.get("sep") == "tab" else "whitespace-separated", "a header line" if names else "no header line",
             f"tags in column {names[column] if names else column + 1} of {width}"]
    if "sentence_end" in entry:
        parts.append(f"sentences ended by {entry['sentence_end']}")
    if "comment" in entry:
        parts.append(f"comment lines starting with {entry['comment'].strip()!r}")
    return f"token and tag columns ({', '.join(parts)})"


def detect_file(path: Path) -> Detected:
    """The format of one annotated file (module docstring)."""
    lines = _head(path)
    if not any(line.strip() for line in lines):
        raise InputError(path, None, "empty: no annotation to read")
    if lines[0].startswith("#FORMAT=WebAnno TSV"):
        version = lines[0].partition("WebAnno TSV")[2].strip()
        return Detected({"format": "webanno"}, f"WebAnno TSV {version} (INCEpTION, WebAnno)")
    found = _json_kind(path, lines)
    if found is not None:
        return found
    rows = _conllu(lines)
    if rows is not None:
        return _conllu_kind(path, rows)
    return _hipe_kind(lines) or _column_kind(path, lines)


def annotated_files(folder: Path) -> list[Path]:
    """A folder's files, subfolders too, hidden ones aside, in name order."""
    return sorted((p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)),
                  key=lambda p: p.relative_to(folder).parts)


def detect_format(location: Path) -> Detected:
    """The format of an export: an INCEpTION project export (ZIP or folder), one file, or a folder of files of one format."""
    if not location.exists():
        raise FlairsuiteError(f"{location}: no such file or folder")
    if is_export(location):
        return Detected({"format": "webanno"}, "INCEpTION project export (its WebAnno TSV files)")
    if location.is_file():
        return detect_file(location)
    named = find_files(location, {})  # the split files a folder names, as the reader finds them (others, e.g. a README, are not read)
    files = sorted({path for paths in named.values() for path in paths}) if named else annotated_files(location)
    if not files:
        raise FlairsuiteError(f"{location}: an empty folder: no annotated file in it")
    first, detected = files[0], detect_file(files[0])
    for path in files[1:]:
        other = detect_file(path)
        if other.entry != detected.entry:
            raise FlairsuiteError(f"{location}: its files are in more than one format: {first.relative_to(location)} is {detected.what}, "
                                  f"{path.relative_to(location)} is {other.what}; give a folder of one format")
    count = f"{len(files)} files" if len(files) > 1 else "1 file"
    return Detected(detected.entry, f"{detected.what}, {count}")
