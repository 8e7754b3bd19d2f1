"""Finding lexicon entries in text: two rules.

- `maximum`: Algorithm 1 of Jia et al. 2020 (maximum entity matching): from the first unit on,
  the longest entry that starts at the current unit is matched and the scan goes on after it;
  where none starts, one unit further. Units are characters (Chinese; entries of two or more) or
  word tokens. It runs vectorised (`BulkMaximum`), with no Python step per character or token: the
  text's tokens are found and hashed by numpy (`lexicon.hashing`), every window of every entry length
  gets a 64-bit polynomial hash of its unit codes (each length's windows extending the shorter ones),
  a bitmap of the entries' hashes and a sorted search mark the windows that are entries, and the
  left-to-right pass over the marked starts (`greedy_picks`) runs in Python only where marks overlap;
  each match taken is confirmed by a second, independent hash, and a text where one is not is matched
  again by exact lookups, so a hash collision costs time, never a wrong match. (pyahocorasick's
  leftmost-longest `iter_long` is not Algorithm 1: after a longer entry's prefix fails it can miss an
  entry starting inside it, e.g. `bc` in `dabc` with the entries `abcc` and `bc`; and it spends over a
  microsecond per match, about 1.3 M characters/s on Chinese text, which matches every four or five
  characters.)
- `daluke`: the auto-annotation of DaLUKE (Møller et al., daluke-danish.tex, "Auto-annotated
  entities"): at every word start, the next n characters (5 ≤ n ≤ 48) are compared with the
  entries ignoring case; on a match (the longest n) every word the characters cover, whole or in
  part, is annotated, and the scan jumps to the next word start after the match. Vectorised in
  `daluke.py` (`BulkDaluke`), with the definition on an Aho-Corasick automaton beside it.

A match is (first unit, end unit exclusive, entry index). `position_tags` turns matches into one
tag per unit: B, I, E (first, inner, last unit of a match), S (a one-unit match) or O.
"""

from collections.abc import Sequence
from typing import NamedTuple, Optional

import numpy as np

from flairsuite.errors import FlairsuiteError
from flairsuite.lexicon.daluke import BulkDaluke
from flairsuite.lexicon.greedy import greedy_picks
from flairsuite.lexicon.hashing import CHECK_BASE, UNIT_BASES, WINDOW_BASE, char_codes, entry_bitmap, look_up, string_hashes, token_bounds, unit_hashes
from flairsuite.lexicon.pieces import Spans, spans_by_line, text_arrays
from flairsuite.lexicon.store import Lexicon
from flairsuite.rawtext.tokens import tokenize

RULES = ("maximum", "daluke")
POSITION_TAGS = ("O", "B", "I", "E", "S")
NO_UNIT = " "  # stands for a unit that is no single character in a characters lexicon's text (no entry holds it)


class Match(NamedTuple):
    start: int  # first unit
    end: int  # one past the last unit
    entry: int  # index into the lexicon's entries


def check_rule(lexicon: Lexicon, rule: str) -> None:
    """A one-line error for an unknown rule, or the DaLUKE rule on a characters lexicon (it compares the characters after
    word starts, and Chinese text has no words)."""
    if rule not in RULES:
        raise FlairsuiteError(f"unknown matching rule '{rule}' (known: {', '.join(RULES)})")
    if rule == "daluke" and lexicon.units == "characters":
        raise FlairsuiteError(f"{lexicon.source or 'the lexicon'}: the daluke rule matches word lexicons, and this one's units "
                              "are characters: use the maximum rule")


class LexiconMatcher:
    """The entries of a lexicon, matched by `rule`: `maximum` (`BulkMaximum`) or `daluke` (`daluke.BulkDaluke`), both vectorised."""

    def __init__(self, lexicon: Lexicon, rule: str = "maximum") -> None:
        check_rule(lexicon, rule)
        self.lexicon, self.rule = lexicon, rule
        self.characters = lexicon.units == "characters"
        self.bulk = BulkMaximum(lexicon) if rule == "maximum" else BulkDaluke(lexicon)
        self.empty = not self.bulk.tables

    def text_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The matches in a line of raw text as (start character, end character, entry): maximum rule as
        `BulkMaximum.text_spans`; the DaLUKE rule over the line's word tokens (`rawtext.tokens.TOKEN`)."""
        if self.empty:
            return []
        return self.bulk.text_spans([text])[0]

    def maximum(self, units: Sequence[str]) -> list[Match]:
        """Algorithm 1 over `units` (characters or tokens)."""
        if self.empty or not units:
            return []
        return [Match(*found) for found in self.bulk.unit_matches(units)]

    def daluke(self, words: Sequence[str]) -> list[Match]:
        """The DaLUKE rule over `words` (tokens written with single spaces between them); matches in word positions."""
        if self.empty or not words:
            return []
        return [Match(*found) for found in self.bulk.word_matches(words)]

    def match(self, units: Sequence[str]) -> list[Match]:
        """The matches of the matcher's rule: `units` are characters or tokens (maximum), or words (daluke)."""
        return self.maximum(units) if self.rule == "maximum" else self.daluke(units)


def position_tags(matches: Sequence[Match], length: int) -> list[str]:
    """One tag per unit: B/I/E over a match of several units, S for a one-unit match, O elsewhere."""
    tags = ["O"] * length
    for start, end, _ in matches:
        if end - start == 1:
            tags[start] = "S"
        else:
            tags[start : end] = ["B"] + ["I"] * (end - start - 2) + ["E"]
    return tags


def token_matches(matcher: LexiconMatcher, tokens: Sequence[str]) -> list[Match]:
    """Matches in token positions for a sentence's `tokens` (a labeled corpus's, whose tokens may hold punctuation:
    `W.`, `Abs.`, `Mærsk-Møller`). The matcher runs over the units its entries and raw text are split into: characters
    for a characters lexicon, `rawtext.tokens` pieces for a words lexicon (`W.` -> `W`, `.`); a match covers every token
    it touches."""
    if matcher.lexicon.units == "characters":
        if all(len(token) == 1 for token in tokens):
            return matcher.match(tokens)
        pieces = [list(token) for token in tokens]
    else:
        pieces = [tokenize(token) or [token] for token in tokens]  # a token of spaces alone stays one unit
        if all(len(units) == 1 for units in pieces):
            return matcher.match(tokens)
    owner = [number for number, units in enumerate(pieces) for _ in units]
    found = matcher.match([unit for units in pieces for unit in units])
    return [Match(owner[start], owner[end - 1] + 1, index) for start, end, index in found]


class BulkMaximum:
    """Algorithm 1 over whole texts at numpy speed (module docstring); the same matches as the definition.

    Units are code points (a characters lexicon) or word tokens, each token standing for its two
    64-bit hashes (`hashing.unit_hashes`). Per entry length: the entries' window hashes (sorted), their
    entry numbers in the same order and their second hashes. A window whose first hash is an entry's is
    marked with that entry; the left-to-right pass takes the marks (`greedy_picks`); the matches taken are
    confirmed by the second hashes, and a text where one is not (a collision of 64-bit hashes) is
    matched again by exact lookups.
    """

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.characters = lexicon.units == "characters"
        shortest = 2 if self.characters else 1
        self.index: dict = {}  # "".join(entry) (characters) or the entry tuple (words) -> entry number
        by_length: dict[int, list[int]] = {}
        for number, entry in enumerate(lexicon.entries):
            key = "".join(entry) if self.characters else entry
            if len(entry) < shortest or key in self.index:
                continue
            self.index[key] = number
            by_length.setdefault(len(entry), []).append(number)
        self.tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self.entry_checks = np.zeros(len(lexicon.entries), dtype=np.uint64)  # entry number -> its second hash
        for length, numbers in by_length.items():
            first, second = self.unit_codes([unit for number in numbers for unit in lexicon.entries[number]])
            hashes = fold_rows(first.reshape(-1, length), WINDOW_BASE)
            order = np.argsort(hashes, kind="stable")
            bitmap = entry_bitmap(hashes)
            checks = fold_rows(second.reshape(-1, length), CHECK_BASE)[order]
            numbers_sorted = np.array(numbers, dtype=np.int64)[order]
            self.tables[length] = (hashes[order], checks, numbers_sorted, bitmap)
            self.entry_checks[numbers_sorted] = checks

    @property
    def hashes(self) -> dict[int, np.ndarray]:
        return {length: table[0] for length, table in self.tables.items()}

    def unit_codes(self, units: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The two codes of each unit: code points twice (characters; a unit of another length is NO_UNIT), or a word's two hashes."""
        if self.characters:
            codes = char_codes("".join(unit if len(unit) == 1 else NO_UNIT for unit in units))
            return codes, codes
        units = list(units)
        return string_hashes(units, UNIT_BASES[0]), string_hashes(units, UNIT_BASES[1])

    def marks(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per unit: the longest entry length whose first hash the window starting there has (0: none), and that entry
        (valid where the length is not 0). The windows of each length extend those one shorter by a unit."""
        best = np.zeros(len(codes), dtype=np.int16)
        entry = np.zeros(len(codes), dtype=np.int64)
        hashes = None
        with np.errstate(over="ignore"):
            for length in range(1, max(self.tables) + 1):
                if length > len(codes):
                    break
                hashes = codes.copy() if hashes is None else hashes[:-1] * WINDOW_BASE + codes[length - 1 :]
                if length not in self.tables:
                    continue
                table, _, numbers, bitmap = self.tables[length]
                hit, entries = look_up(hashes, table, numbers, bitmap)
                best[hit] = length
                entry[hit] = entries
        return best, entry

    def confirmed(self, checks: np.ndarray, starts: np.ndarray, lengths: np.ndarray, entries: np.ndarray) -> bool:
        """Whether every match taken has its entry's second hash too (over the units' second codes `checks`)."""
        for length in np.unique(lengths).tolist():
            chosen = starts[lengths == length]
            check = np.zeros(len(chosen), dtype=np.uint64)
            with np.errstate(over="ignore"):
                for offset in range(length):
                    check = check * CHECK_BASE + checks[chosen + offset]
            if not np.array_equal(self.entry_checks[entries[lengths == length]], check):
                return False
        return True

    def scan(self, codes: np.ndarray, checks: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(starts, ends, entries) of Algorithm 1 over units with these first and second codes; None where a hash collision needs the exact way."""
        best, entry = self.marks(codes)
        marked = np.flatnonzero(best)
        lengths = best[marked].astype(np.int64)
        taken = greedy_picks(marked, lengths)
        starts, ends, entries = marked[taken], marked[taken] + lengths[taken], entry[marked[taken]]
        if not self.confirmed(checks, starts, ends - starts, entries):
            return None
        return starts, ends, entries

    def exact(self, units: Sequence[str]) -> list[tuple[int, int, int]]:
        """Algorithm 1 by lookups of every length at every unit (for a text with a hash collision)."""
        found, start, lengths = [], 0, sorted(self.tables, reverse=True)
        key = (lambda a, n: "".join(units[a : a + n])) if self.characters else (lambda a, n: tuple(units[a : a + n]))
        while start < len(units):
            hit = next(((n, self.index[key(start, n)]) for n in lengths if start + n <= len(units) and key(start, n) in self.index), None)
            if hit is None:
                start += 1
                continue
            found.append((start, start + hit[0], hit[1]))
            start += hit[0]
        return found

    def unit_matches(self, units: Sequence[str]) -> list[tuple[int, int, int]]:
        """Algorithm 1 over `units` (characters or word tokens) as (start unit, end unit, entry)."""
        if not self.tables or not units:
            return []
        found = self.scan(*self.unit_codes(units))
        if found is None:
            return self.exact(units)
        return list(zip(*(column.tolist() for column in found)))

    def chunk_arrays(self, text: str) -> Spans:
        """(start character, end character, entry) of every match in `text` (lines joined by line ends: none crosses one)."""
        codes = char_codes(text)
        if self.characters:
            found = self.scan(codes, codes)
            if found is None:
                found = as_arrays(self.exact(list(text)))
            return found
        starts, ends = token_bounds(codes, line_tokens=True)  # a line end is a unit no entry holds
        found = self.scan(unit_hashes(codes, starts, ends, UNIT_BASES[0]), unit_hashes(codes, starts, ends, UNIT_BASES[1]))
        if found is None:
            found = as_arrays(self.exact([text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]))
        first, last, entries = found
        return starts[first], ends[last - 1], entries

    def text_arrays(self, lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The matches of all `lines` as arrays (line, start character, end character, entry), in pieces of whole lines
        (`pieces.text_arrays`): no match crosses a line end; with a characters lexicon none spans whitespace, with a word
        lexicon units are word tokens (`rawtext.tokens.TOKEN`)."""
        return text_arrays(lines if self.tables else [], self.chunk_arrays, list)

    def text_spans(self, lines: Sequence[str]) -> list[list[tuple[int, int, int]]]:
        """Every line's matches as (start character, end character, entry) (`text_arrays`, grouped by line)."""
        return spans_by_line(lines, self.text_arrays(lines))


def fold_rows(codes: np.ndarray, base: np.uint64) -> np.ndarray:
    """The window hash of each row of a (rows, length) array of unit codes."""
    hashes = np.zeros(len(codes), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in range(codes.shape[1]):
            hashes = hashes * base + codes[:, column]
    return hashes


def as_arrays(found: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, entry) tuples as three int64 arrays."""
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return tuple(np.array(column, dtype=np.int64) for column in zip(*found))
