"""Whole texts matched in pieces of whole lines: bounded memory, and the results as arrays or per line."""

from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

Spans = tuple[np.ndarray, np.ndarray, np.ndarray]  # start character, end character, entry
CHUNK_CHARACTERS = 1 << 22  # a piece holds whole lines, about this many characters


def text_arrays(lines: Sequence[str], match_piece: Callable[[str], Optional[Spans]], exact_line: Callable[[str], list[tuple[int, int, int]]],
                size: Optional[int] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(line, start character, end character, entry) of every match in `lines`: `match_piece` on pieces of lines joined
    by line ends (no match may cross one); where it returns None (a hash collision), `exact_line` on each line of the piece."""
    size = size or CHUNK_CHARACTERS
    pieces, first = [], 0
    while first < len(lines):
        last, total = first, 0
        while last < len(lines) and (total == 0 or total + len(lines[last]) < size):
            total += len(lines[last]) + 1
            last += 1
        chunk = lines[first:last]
        found = match_piece("\n".join(chunk))
        if found is None:
            rows = [(number, *span) for number, line in enumerate(chunk) for span in exact_line(line)]
            numbers, begin, finish, entries = (np.array(column, dtype=np.int64) for column in zip(*rows)) if rows else (np.zeros(0, dtype=np.int64),) * 4
        else:
            begin, finish, entries = found
            line_starts = np.cumsum([0] + [len(line) + 1 for line in chunk[:-1]])
            numbers = np.searchsorted(line_starts, begin, side="right") - 1
            offsets = line_starts[numbers]
            begin, finish = begin - offsets, finish - offsets
        pieces.append((numbers + first, begin, finish, entries))
        first = last
    if not pieces:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    return tuple(np.concatenate([piece[k] for piece in pieces]).astype(np.int64) for k in range(4))


def spans_by_line(lines: Sequence[str], arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> list[list[tuple[int, int, int]]]:
    """`text_arrays`' matches grouped by line: (start character, end character, entry) each."""
    per_line: list[list[tuple[int, int, int]]] = [[] for _ in lines]
    numbers, begin, finish, entries = arrays
    for line, first, last, entry in zip(numbers.tolist(), begin.tolist(), finish.tolist(), entries.tolist()):
        per_line[line].append((first, last, entry))
    return per_line
