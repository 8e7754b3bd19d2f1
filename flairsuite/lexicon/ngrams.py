"""Counting every n-gram of a large text with numpy: units as integer ids, n-grams as ids built one unit at a time.

A text becomes one int32 array of unit ids (`UnitText`): characters for Chinese, word tokens
otherwise, with id 0 (`BOUNDARY`) between documents and in place of every unit that is no word
(punctuation, symbols): no n-gram crosses one. As a neighbour (the entropies) a punctuation mark or symbol
is itself, one id per mark (`UnitText.neighbours`), as in the paper, where the text's every character is
a neighbour; a document start or end is one neighbour, as the line break between documents of a raw text. The n-grams of length n are numbered from those of
length n - 1: the n-gram at position p is the pair (id of the (n-1)-gram at p, unit at p + n - 1),
packed into one int64 and numbered by `np.unique`. So every n-gram of every position has an id,
`NgramLevel.ids[p]` (-1 where the window holds a boundary), with its count, and any part of an
n-gram (its first k units: level k at p; its last units: level n - k at p + k) is found by
position, without hashing strings. Sorting int64 arrays is the only heavy step: the German raw text
(71 M characters, 11 M tokens) is counted up to 4-grams in well under a minute on one core.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

BOUNDARY = 0  # the unit id of document ends and of every non-word unit


@dataclass
class UnitText:
    """A text as unit ids (`units`, with BOUNDARY between documents), the document of each position, and the units' strings (`vocabulary[id]`)."""

    units: np.ndarray  # int32 (positions,)
    documents: np.ndarray  # int32 (positions,): the document index of each position
    vocabulary: list[str]  # id -> unit; vocabulary[0] is the boundary ""
    neighbours: np.ndarray  # int32 (positions,): what an n-gram beside the position sees: `units`, but -k for the k-th mark (1, 2, ...)
    marks: int  # distinct non-word units (punctuation, symbols)

    @property
    def size(self) -> int:
        """Units that are words (not boundaries): the N of the probabilities p(s) = count(s) / N."""
        return int(np.count_nonzero(self.units != BOUNDARY))

    @property
    def document_count(self) -> int:
        return int(self.documents[-1]) + 1 if len(self.documents) else 0


def is_word(unit: str) -> bool:
    """Whether a unit may be part of an entry: it holds a letter or a digit (punctuation and symbols are boundaries)."""
    return any(char.isalnum() for char in unit)


def unit_text(documents: Iterable[list[str]]) -> UnitText:
    """The units of `documents` (each a list of unit strings) as ids; non-word units and document ends become BOUNDARY."""
    vocabulary: dict[str, int] = {"": BOUNDARY}
    marks: dict[str, int] = {}
    seen_ids: dict[str, int] = {}  # unit -> its id in `neighbours`: a word's vocabulary id, a mark's -k
    chunks: list[np.ndarray] = []
    document_ids: list[np.ndarray] = []
    for index, units in enumerate(documents):
        ids = []
        for unit in units:
            found = seen_ids.get(unit)
            if found is None:
                found = vocabulary.setdefault(unit, len(vocabulary)) if is_word(unit) else -marks.setdefault(unit, len(marks) + 1)
                seen_ids[unit] = found
            ids.append(found)
        ids.append(BOUNDARY)
        chunks.append(np.asarray(ids, dtype=np.int32))
        document_ids.append(np.full(len(ids), index, dtype=np.int32))
    neighbours = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int32)
    docs = np.concatenate(document_ids) if document_ids else np.zeros(0, dtype=np.int32)
    return UnitText(np.maximum(neighbours, BOUNDARY), docs, list(vocabulary), neighbours, len(marks))


@dataclass
class NgramLevel:
    """The n-grams of one length: the id at every position (-1: the window holds a boundary or runs past the end),
    each id's count and the first position where it occurs."""

    n: int
    ids: np.ndarray  # int64 (positions,)
    counts: np.ndarray  # int64 (distinct n-grams,)
    first: np.ndarray  # int64 (distinct n-grams,)


def first_level(text: UnitText) -> NgramLevel:
    """Unigrams: the unit id itself (boundaries -1)."""
    units = text.units.astype(np.int64)
    ids = np.where(units == BOUNDARY, -1, units)
    counts = np.bincount(units[units != BOUNDARY], minlength=len(text.vocabulary)).astype(np.int64)
    first = np.full(len(text.vocabulary), -1, dtype=np.int64)
    valid = np.flatnonzero(ids >= 0)
    seen, first_index = np.unique(ids[valid], return_index=True)
    first[seen] = valid[first_index]
    return NgramLevel(1, ids, counts, first)


def next_level(text: UnitText, previous: NgramLevel) -> NgramLevel:
    """The (n+1)-grams from the n-grams of `previous`: (n-gram at p, unit at p + n) numbered by np.unique."""
    n, size = previous.n + 1, len(text.units)
    ids = np.full(size, -1, dtype=np.int64)
    if size >= n:
        last = text.units[n - 1 :].astype(np.int64)
        head = previous.ids[: size - n + 1]
        valid = np.flatnonzero((head >= 0) & (last != BOUNDARY))
        codes = head[valid] * len(text.vocabulary) + last[valid]
        _, first_index, inverse, counts = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
        ids[valid] = inverse
        return NgramLevel(n, ids, counts.astype(np.int64), valid[first_index].astype(np.int64))
    return NgramLevel(n, ids, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def levels(text: UnitText, longest: int) -> list[NgramLevel]:
    """The n-gram levels 1..`longest` (index n - 1 holds length n)."""
    found = [first_level(text)]
    while len(found) < longest:
        found.append(next_level(text, found[-1]))
    return found


def neighbour_entropy(text: UnitText, level: NgramLevel, side: int) -> np.ndarray:
    """Per n-gram id: the entropy (bits) of the unit right of it (`side` +1) or left of it (-1): a word, a punctuation mark
    (each its own), or a document start or end (one neighbour)."""
    positions = np.flatnonzero(level.ids >= 0)
    neighbour_at = positions + level.n if side > 0 else positions - 1
    inside = (neighbour_at >= 0) & (neighbour_at < len(text.units))
    neighbours = np.full(len(positions), BOUNDARY, dtype=np.int64)
    neighbours[inside] = text.neighbours[neighbour_at[inside]]
    width = len(text.vocabulary) + text.marks  # neighbour ids -marks..len(vocabulary)-1, shifted to 0..width-1
    codes = level.ids[positions] * width + neighbours + text.marks
    pairs, counts = np.unique(codes, return_counts=True)
    owners = pairs // width  # sorted, as the codes are
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    totals = np.add.reduceat(counts, starts).astype(np.float64)
    weighted = np.add.reduceat(counts * np.log2(counts), starts)
    entropy = np.zeros(len(level.counts), dtype=np.float64)
    entropy[owners[starts]] = np.log2(totals) - weighted / totals
    return entropy


def document_frequency(text: UnitText, level: NgramLevel) -> np.ndarray:
    """Per n-gram id: in how many documents it occurs."""
    positions = np.flatnonzero(level.ids >= 0)
    codes = np.unique(level.ids[positions] * max(text.document_count, 1) + text.documents[positions])
    return np.bincount(codes // max(text.document_count, 1), minlength=len(level.counts)).astype(np.int64)


def ngram_units(text: UnitText, level: NgramLevel, ids: np.ndarray) -> list[tuple[str, ...]]:
    """The unit strings of the n-grams `ids` of `level`, read at their first occurrence."""
    starts = level.first[ids]
    return [tuple(text.vocabulary[u] for u in text.units[start : start + level.n]) for start in starts]
