"""Stream the documents of a raw-text set (for language models), never loading a file whole."""

import csv
import json
from collections.abc import Iterator
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


def iter_documents(path: Path, source: FileSpec, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(line number, document text) for each document of one source file."""
    fmt = source.format
    if fmt.kind == "lines":
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
