"""Finding lexicon entries in text: two rules.

- `maximum`: Algorithm 1 of Jia et al. 2020 (maximum entity matching): from the first unit on,
  the longest entry that starts at the current unit is matched and the scan goes on after it;
  where none starts, one unit further. Units are characters (Chinese; entries of two or more) or
  word tokens. It runs vectorised (`BulkMaximum`): every window of every entry length gets a
  64-bit polynomial hash of its unit codes, a bitmap of the entries' hashes and a sorted search
  mark the windows that are entries, and one left-to-right pass over the marked starts takes the
  longest at each and jumps past it; each match taken is looked up in the entries themselves, so a
  hash collision costs a lookup, never a wrong match. (pyahocorasick's leftmost-longest `iter_long`
  is not Algorithm 1: after a longer entry's prefix fails it can miss an entry starting inside it,
  e.g. `bc` in `dabc` with the entries `abcc` and `bc`; and it spends over a microsecond per match,
  about 1.3 M characters/s on Chinese text, which matches every four or five characters.)
- `daluke`: the auto-annotation of DaLUKE (Møller et al., daluke-danish.tex, "Auto-annotated
  entities"): at every word start, the next n characters (5 ≤ n ≤ 48) are compared with the
  entries ignoring case (on an Aho-Corasick automaton, pyahocorasick, listing every match); on a
  match (the longest n) every word the characters cover, whole or in part, is annotated, and the
  scan jumps to the next word start after the match.

A match is (first unit, end unit exclusive, entry index). `position_tags` turns matches into one
tag per unit: B, I, E (first, inner, last unit of a match), S (a one-unit match) or O.
"""

import re
from collections.abc import Sequence
from typing import NamedTuple, Optional

import ahocorasick
import numpy as np

from flairsuite.errors import FlairsuiteError
from flairsuite.lexicon.store import Lexicon
from flairsuite.rawtext.tokens import TOKEN

RULES = ("maximum", "daluke")
DALUKE_LENGTHS = (5, 48)  # characters per match, inclusive (the paper's bounds)
POSITION_TAGS = ("O", "B", "I", "E", "S")
NO_UNIT = " "  # stands for a unit that is no single character in a characters lexicon's text (no entry holds it)


class Match(NamedTuple):
    start: int  # first unit
    end: int  # one past the last unit
    entry: int  # index into the lexicon's entries


class LexiconMatcher:
    """The entries of a lexicon, matched by `rule`: `maximum` (vectorised, `BulkMaximum`) or `daluke` (an Aho-Corasick automaton)."""

    def __init__(self, lexicon: Lexicon, rule: str = "maximum") -> None:
        if rule not in RULES:
            raise FlairsuiteError(f"unknown matching rule '{rule}' (known: {', '.join(RULES)})")
        self.lexicon, self.rule = lexicon, rule
        self.automaton = ahocorasick.Automaton()
        self.characters = lexicon.units == "characters"
        self.bulk = BulkMaximum(lexicon) if rule == "maximum" else None
        if self.bulk is not None:
            self.empty = not self.bulk.tables
            return
        low, high = DALUKE_LENGTHS
        for index, entry in enumerate(lexicon.entries):
            key = lexicon.text(entry).lower()
            if low <= len(key) <= high and not self.automaton.exists(key):
                self.automaton.add_word(key, (len(key), index))
        self.empty = len(self.automaton) == 0
        if not self.empty:
            self.automaton.make_automaton()

    def text_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The matches in a line of raw text as (start character, end character, entry): maximum rule as
        `BulkMaximum.text_spans`; the DaLUKE rule over the line's word tokens (`rawtext.tokens.TOKEN`)."""
        if self.empty:
            return []
        if self.bulk is not None:
            return self.bulk.text_spans([text])[0]
        tokens = list(TOKEN.finditer(text))
        words = [token.group() for token in tokens]
        return [(tokens[start].start(), tokens[end - 1].end(), index) for start, end, index in self.match(words)]

    def maximum(self, units: Sequence[str]) -> list[Match]:
        """Algorithm 1 over `units` (characters or tokens)."""
        if self.empty or not units:
            return []
        return [Match(*found) for found in self.bulk.unit_matches(units)]

    def daluke(self, words: Sequence[str]) -> list[Match]:
        """The DaLUKE rule over `words` (tokens written with single spaces between them); matches in word positions."""
        if self.empty or not words:
            return []
        text = " ".join(words).lower()
        word_at, starts, position = [], [], 0
        for number, word in enumerate(words):
            starts.append(position)
            word_at += [number] * (len(word) + 1)
            position += len(word) + 1
        longest: dict[int, tuple[int, int]] = {}  # start character -> (length, entry) of the longest match there
        for end, (size, index) in self.automaton.iter(text):
            start = end + 1 - size
            if size > longest.get(start, (0, 0))[0]:
                longest[start] = (size, index)
        matches, number = [], 0
        while number < len(words):
            found = longest.get(starts[number])
            if found is None:
                number += 1
                continue
            size, index = found
            last = word_at[starts[number] + size - 1]  # the word holding the match's last character
            matches.append(Match(number, last + 1, index))
            number = last + 1
        return matches

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
    """Matches in token positions for a sentence's `tokens`: a characters lexicon (maximum rule) runs over the
    tokens' characters and a match covers every token it touches; otherwise the tokens are the units."""
    if matcher.rule == "daluke" or matcher.lexicon.units == "words" or all(len(token) == 1 for token in tokens):
        return matcher.match(tokens)
    owner = [number for number, token in enumerate(tokens) for _ in token]
    characters = [char for token in tokens for char in token]
    return [Match(owner[start], owner[end - 1] + 1, index) for start, end, index in matcher.maximum(characters)]


TOKEN_OR_LINE_END = re.compile(f"{TOKEN.pattern}|\n")
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit multiplier of the polynomial window hash (wraps modulo 2^64)


def window_hashes(codes: np.ndarray, length: int, base: np.uint64 = HASH_BASE) -> np.ndarray:
    """The hash of every window of `length` units of `codes` (uint64): sum of code * base^(length-1-k), modulo 2^64."""
    count = len(codes) - length + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    hashes = codes[:count].copy()
    with np.errstate(over="ignore"):
        for offset in range(1, length):
            hashes = hashes * base + codes[offset : offset + count]
    return hashes


FILTER_BITS = 24  # a bitmap of the entries' hashes modulo 2^24 sorts out almost every window before the exact search
CHECK_BASE = np.uint64(0xC2B2AE3D27D4EB4F)  # a second, independent window hash: a match is taken only if both agree


class BulkMaximum:
    """Algorithm 1 over whole texts at numpy speed (module docstring); the same matches as the definition.

    Per entry length: the entries' window hashes (sorted), their entry numbers in the same order and
    their second hashes. A window whose first hash is an entry's is marked with that entry; the
    left-to-right pass takes the marks; the matches taken are confirmed by the second hash, and a text
    where one is not (a collision of 64-bit hashes) is matched again by exact lookups.
    """

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.characters = lexicon.units == "characters"
        shortest = 2 if self.characters else 1
        self.vocabulary: dict[str, int] = {}  # word units of the entries -> code 1.. (characters: their code points)
        self.index: dict = {}  # "".join(entry) (characters) or the entry tuple (words) -> entry number
        rows: dict[int, list[tuple[int, int, int]]] = {}
        for number, entry in enumerate(lexicon.entries):
            key = "".join(entry) if self.characters else entry
            if len(entry) < shortest or key in self.index:
                continue
            self.index[key] = number
            codes = np.array([ord(unit) if self.characters else self.vocabulary.setdefault(unit, len(self.vocabulary) + 1) for unit in entry],
                             dtype=np.uint64)
            rows.setdefault(len(entry), []).append(
                (int(window_hashes(codes, len(entry))[0]), int(window_hashes(codes, len(entry), CHECK_BASE)[0]), number))
        self.tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        for length, found in rows.items():
            hashes = np.array([h for h, _, _ in found], dtype=np.uint64)
            order = np.argsort(hashes, kind="stable")
            bitmap = np.zeros(1 << FILTER_BITS, dtype=bool)
            bitmap[(hashes & np.uint64((1 << FILTER_BITS) - 1)).astype(np.int64)] = True
            checks = np.array([c for _, c, _ in found], dtype=np.uint64)[order]
            numbers = np.array([n for _, _, n in found], dtype=np.int64)[order]
            self.tables[length] = (hashes[order], checks, numbers, bitmap)
        self.entry_checks = np.zeros(len(lexicon.entries), dtype=np.uint64)  # entry number -> its second hash
        for table in self.tables.values():
            self.entry_checks[table[2]] = table[1]

    @property
    def hashes(self) -> dict[int, np.ndarray]:
        return {length: table[0] for length, table in self.tables.items()}

    def marks(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per unit: the longest entry length whose first hash the window starting there has (0: none), and that entry."""
        best = np.zeros(len(codes), dtype=np.int16)
        entry = np.full(len(codes), -1, dtype=np.int64)
        low = np.uint64((1 << FILTER_BITS) - 1)
        for length in sorted(self.tables):
            hashes = window_hashes(codes, length)
            if not len(hashes):
                continue
            table, _, numbers, bitmap = self.tables[length]
            candidates = np.flatnonzero(bitmap[(hashes & low).astype(np.int64)])
            found = np.minimum(np.searchsorted(table, hashes[candidates]), len(table) - 1)
            hit = table[found] == hashes[candidates]
            best[candidates[hit]] = length
            entry[candidates[hit]] = numbers[found[hit]]
        return best, entry

    def confirmed(self, codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray, entries: np.ndarray) -> bool:
        """Whether every match taken has its entry's second hash too."""
        for length in np.unique(lengths).tolist():
            chosen = starts[lengths == length]
            check = np.zeros(len(chosen), dtype=np.uint64)
            with np.errstate(over="ignore"):
                for offset in range(length):
                    check = check * CHECK_BASE + codes[chosen + offset]
            if not np.array_equal(self.entry_checks[entries[lengths == length]], check):
                return False
        return True

    def scan(self, codes: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(starts, ends, entries) of Algorithm 1 over `codes`; None where a hash collision needs the exact way."""
        best, entry = self.marks(codes)
        marked = np.flatnonzero(best)
        lengths = best[marked].tolist()
        taken, after = [], 0
        for position, (start, length) in enumerate(zip(marked.tolist(), lengths)):
            if start >= after:
                taken.append(position)
                after = start + length
        picks = marked[taken]
        starts, ends, entries = picks, picks + best[picks].astype(np.int64), entry[picks]
        if not self.confirmed(codes, starts, ends - starts, entries):
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

    def codes(self, units: Sequence[str]) -> np.ndarray:
        if self.characters:
            return char_codes("".join(unit if len(unit) == 1 else NO_UNIT for unit in units))
        get = self.vocabulary.get
        return np.fromiter((get(unit, 0) for unit in units), dtype=np.uint64, count=len(units))

    def unit_matches(self, units: Sequence[str]) -> list[tuple[int, int, int]]:
        """Algorithm 1 over `units` (characters or word tokens) as (start unit, end unit, entry)."""
        if not self.tables or not units:
            return []
        found = self.scan(self.codes(units))
        if found is None:
            return self.exact(units)
        return list(zip(*(column.tolist() for column in found)))

    def text_arrays(self, lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The matches of all `lines` in one pass as arrays (line, start character, end character, entry): no match
        crosses a line end; with a characters lexicon none spans whitespace, with a word lexicon units are word tokens."""
        empty = np.zeros(0, dtype=np.int64)
        if not lines or not self.tables:
            return empty, empty, empty, empty
        text = "\n".join(lines)
        line_starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
        if self.characters:
            found = self.scan(char_codes(text))
            if found is None:
                found = tuple(np.array(column, dtype=np.int64) for column in zip(*self.exact(list(text)))) or (empty, empty, empty)
            begin, finish, entries = found
        else:
            found_tokens = list(TOKEN_OR_LINE_END.finditer(text))  # a line end is a unit no entry holds: no match crosses it
            matches = self.unit_matches([token.group() for token in found_tokens])
            begin, finish, entries = (np.array(column, dtype=np.int64) for column in zip(*matches)) if matches else (empty, empty, empty)
            if len(begin):
                first_token, last_token = begin.tolist(), (finish - 1).tolist()
                begin = np.array([found_tokens[i].start() for i in first_token], dtype=np.int64)
                finish = np.array([found_tokens[i].end() for i in last_token], dtype=np.int64)
        numbers = np.searchsorted(line_starts, begin, side="right") - 1
        offsets = line_starts[numbers] if len(numbers) else empty
        return numbers, begin - offsets, finish - offsets, entries

    def text_spans(self, lines: Sequence[str]) -> list[list[tuple[int, int, int]]]:
        """Every line's matches as (start character, end character, entry) (`text_arrays`, grouped by line)."""
        per_line: list[list[tuple[int, int, int]]] = [[] for _ in lines]
        numbers, begin, finish, entries = self.text_arrays(lines)
        for line, first, last, entry in zip(numbers.tolist(), begin.tolist(), finish.tolist(), entries.tolist()):
            per_line[line].append((first, last, entry))
        return per_line


def char_codes(text: str) -> np.ndarray:
    """The code points of `text` as uint64."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
