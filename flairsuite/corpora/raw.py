"""Stream the documents of a raw-text set (for language models), never loading a file whole."""

import csv
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
        lines = read_lines(path, encoding)
        for lineno, line in lines:
            row = next(csv.reader([line], delimiter=fmt.delimiter, quotechar=fmt.quotechar), [])
            if not row:
                continue
            if len(row) <= fmt.column:
                raise InputError(path, lineno, f"expected a text column {fmt.column + 1}, found {len(row)} column(s)")
            text = row[fmt.column].strip()
            if text:
                yield lineno, text
    else:
        raise InputError(path, None, f"format '{fmt.kind}' is not a raw-text format")
