"""Stream the documents of a raw-text set (for language models), never loading a file whole."""

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from flairsuite.corpora.readers import read_lines
from flairsuite.corpora.registry import DatasetSpec, FileSpec
from flairsuite.errors import FlairsuiteError, InputError


def source_path(spec: DatasetSpec, source: FileSpec, root: Path) -> Path:
    """The local file of one source of a raw-text set, or an error naming the fetch command."""
    path = spec.locate(source, root)
    if path is None:
        raise FlairsuiteError(
            f"{spec.name}: source '{source.name}' not found ({spec.expected_path(source, root)}); "
            f"run `flairsuite corpora fetch {spec.name}`"
        )
    return path


def joined_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(first line number, text) of the documents of a lines file whose words may break at line ends: a line ending in
    a letter and a hyphen (`-`, `¬`, `⸗`, `=`) goes on in the next non-empty line, and the break is joined, kept as a
    compound's hyphen or left (`Haus- und`) by `predict`'s rule (`line_ends.joined_view`)."""
    from flairsuite.corpora.line_ends import LINE_END, joined_view  # flair's Sentence view: loaded where a text is read

    pending, start = "", 0
    for lineno, line in lines:
        text = line.strip()
        if not text:
            continue
        pending, start = (f"{pending}\n{text}", start) if pending else (text, lineno)
        if not LINE_END.search(f"{text}\nx"):
            yield start, " ".join(joined_view(pending).text.split("\n"))
            pending = ""
    if pending:
        yield start, " ".join(joined_view(pending).text.split("\n"))


def iter_documents(path: Path, source: FileSpec, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(line number, document text) for each document of one source file."""
    fmt = source.format
    if fmt.kind == "lines" and fmt.join_line_ends:
        yield from joined_lines(read_lines(path, encoding))
    elif fmt.kind == "lines":
        for lineno, line in read_lines(path, encoding):
            text = line.strip()
            if text:
                yield lineno, text
    elif fmt.kind == "csv":
        # one csv reader over the whole file, so that a quoted field may span lines; each
        # document is reported at the line its record starts on
        lines = (f"{line}\n" for _, line in read_lines(path, encoding))
        reader = csv.reader(lines, delimiter=fmt.delimiter, quotechar=fmt.quotechar, strict=True)
        lineno = 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as err:
                raise InputError(path, lineno, f"malformed CSV record ({err})") from None
            start, lineno = lineno, reader.line_num + 1
            if not row or not "".join(row).strip():
                continue  # empty or whitespace-only line
            if len(row) <= fmt.column:
                raise InputError(path, start, f"expected a text column {fmt.column + 1}, found {len(row)} column(s)")
            text = row[fmt.column].strip()
            if text:
                yield start, text
    elif fmt.kind == "json_lines":
        for lineno, line in read_lines(path, encoding):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as err:
                raise InputError(path, lineno, f"not a JSON object ({err})") from None
            text = record.get(fmt.field) if isinstance(record, dict) else None
            if not isinstance(text, str):
                raise InputError(path, lineno, f"not a JSON object with a '{fmt.field}' text field")
            if text.strip():
                yield lineno, text.strip()
    else:
        raise InputError(path, None, f"format '{fmt.kind}' is not a raw-text format")
