"""The DaLUKE auto-annotation rule (Møller et al., daluke-danish.tex, "Auto-annotated entities"), two ways.

The rule: the words are written with single spaces between them and case is ignored; at every word
start, the longest entry of 5-48 characters that the next characters spell is matched; every word
the match covers, whole or in part, is annotated, and the scan goes on at the next word start after
the match.

- `automaton_matches`: the definition on an Aho-Corasick automaton (pyahocorasick), word list by word
  list; the reference, and the exact way where a hash collision needs one.
- `BulkDaluke`: the same at numpy speed over whole texts. The words (`rawtext.tokens.TOKEN`, found by
  numpy) are laid out as the rule writes them, lowercased per code point; for each entry length,
  the hash of the characters of that length at every word start comes from one prefix sum
  (`hashing.PrefixHashes`) and is looked up in the entries of that length (bitmap, sorted search);
  the left-to-right pass over words is `match.greedy_picks`; every match taken is confirmed by a
  second, independent hash.

Both lowercase one code point at a time (`hashing.lower_table`): a character whose lowercase is two
(`İ`) keeps its case, so character offsets never move.
"""

from collections.abc import Sequence
from typing import Optional

import ahocorasick
import numpy as np

from flairsuite.lexicon.greedy import greedy_picks
from flairsuite.lexicon.hashing import LENGTH_MIX, UNIT_BASES, PrefixHashes, char_codes, entry_bitmap, look_up, lowered, token_bounds
from flairsuite.lexicon.pieces import Spans, spans_by_line, text_arrays
from flairsuite.lexicon.store import Lexicon
from flairsuite.rawtext.tokens import TOKEN

DALUKE_LENGTHS = (5, 48)  # characters per match, inclusive (the paper's bounds)


def entry_keys(lexicon: Lexicon) -> dict[str, int]:
    """The entries as the rule compares them (lowercased text, 5-48 characters) -> the first entry with that key."""
    low, high = DALUKE_LENGTHS
    keys: dict[str, int] = {}
    for index, entry in enumerate(lexicon.entries):
        text = lexicon.text(entry)
        key = "".join(map(chr, lowered(char_codes(text)).tolist()))
        if low <= len(key) <= high and key not in keys:
            keys[key] = index
    return keys


def build_automaton(keys: dict[str, int]) -> Optional[ahocorasick.Automaton]:
    """An automaton of the keys with (length, entry) as values; None when there are none."""
    if not keys:
        return None
    automaton = ahocorasick.Automaton()
    for key, index in keys.items():
        automaton.add_word(key, (len(key), index))
    automaton.make_automaton()
    return automaton


def automaton_matches(automaton: Optional[ahocorasick.Automaton], words: Sequence[str]) -> list[tuple[int, int, int]]:
    """The rule over `words` by the definition: (first word, end word exclusive, entry) per match."""
    if automaton is None or not words:
        return []
    text = "".join(map(chr, lowered(char_codes(" ".join(words))).tolist()))
    word_at, starts, position = [], [], 0
    for number, word in enumerate(words):
        starts.append(position)
        word_at += [number] * (len(word) + 1)
        position += len(word) + 1
    longest: dict[int, tuple[int, int]] = {}  # start character -> (length, entry) of the longest match there
    for end, (size, index) in automaton.iter(text):
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
        matches.append((number, last + 1, index))
        number = last + 1
    return matches


class BulkDaluke:
    """The DaLUKE rule over whole texts at numpy speed (module docstring); the same matches as `automaton_matches`."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.keys = entry_keys(lexicon)
        self._automaton: Optional[ahocorasick.Automaton] = None
        self.entry_checks = np.zeros(len(lexicon.entries), dtype=np.uint64)  # entry -> second hash of its key
        self.tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # length -> sorted first hashes, entries, bitmap
        by_length: dict[int, list[str]] = {}
        for key in self.keys:
            by_length.setdefault(len(key), []).append(key)
        for length, keys in by_length.items():
            codes = char_codes("".join(keys))
            starts = np.arange(len(keys), dtype=np.int64) * length
            first = PrefixHashes(codes, UNIT_BASES[0]).of(starts, starts + length)
            second = PrefixHashes(codes, UNIT_BASES[1]).of(starts, starts + length)
            entries = np.array([self.keys[key] for key in keys], dtype=np.int64)
            self.entry_checks[entries] = second
            order = np.argsort(first, kind="stable")
            self.tables[length] = (first[order], entries[order], entry_bitmap(first))

    @property
    def automaton(self) -> Optional[ahocorasick.Automaton]:
        if self._automaton is None:
            self._automaton = build_automaton(self.keys)
        return self._automaton

    def word_spans(self, codes: np.ndarray, word_starts: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(first word, end word, entry) of the rule over a text laid out as it writes words (`codes`, lowercased;
        `word_starts` sorted); None where a match taken is not confirmed by the second hash."""
        best = np.zeros(len(word_starts), dtype=np.int64)
        entry = np.zeros(len(word_starts), dtype=np.int64)
        hashes = PrefixHashes(codes, UNIT_BASES[0])
        at_starts, inverse = hashes.prefix[word_starts], hashes.inverse[word_starts]  # gathered once, for every length
        for length in sorted(self.tables):
            count = int(np.searchsorted(word_starts, len(codes) - length, side="right"))
            with np.errstate(over="ignore"):
                found_hashes = (hashes.prefix[word_starts[:count] + length] - at_starts[:count]) * inverse[:count] * LENGTH_MIX + np.uint64(length)
            hit, entries = look_up(found_hashes, *self.tables[length])
            best[hit] = length
            entry[hit] = entries
        marked = np.flatnonzero(best)
        first_char = word_starts[marked]
        last_word = np.searchsorted(word_starts, first_char + best[marked] - 1, side="right") - 1
        taken = greedy_picks(marked, last_word + 1 - marked)
        first_char, size = first_char[taken], best[marked[taken]]
        if not np.array_equal(PrefixHashes(codes, UNIT_BASES[1]).of(first_char, first_char + size), self.entry_checks[entry[marked[taken]]]):
            return None
        return marked[taken], last_word[taken] + 1, entry[marked[taken]]

    def word_matches(self, words: Sequence[str]) -> list[tuple[int, int, int]]:
        """The rule over `words` (tokens written with single spaces between them): (first word, end word, entry) per match."""
        if not self.tables or not words:
            return []
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        word_starts = np.cumsum(lengths + 1) - lengths - 1
        found = self.word_spans(lowered(char_codes(" ".join(words))), word_starts)
        if found is None:
            return automaton_matches(self.automaton, words)
        return list(zip(*(column.tolist() for column in found)))

    def chunk_arrays(self, text: str) -> Optional[Spans]:
        """(start character, end character, entry) of the matches in `text`, lines joined by line ends (no match crosses
        one); None where a hash collision needs the exact way."""
        codes = char_codes(text)
        starts, ends = token_bounds(codes)
        empty = np.zeros(0, dtype=np.int64)
        if not len(starts):
            return empty, empty, empty
        # the words as the rule writes them: each followed by a space, or by a line end where the next is on another line
        lengths = ends - starts
        blocks = lengths + 1
        word_starts = np.cumsum(blocks) - blocks
        source = np.repeat(starts - word_starts, blocks) + np.arange(int(blocks.sum()))
        laid = lowered(codes)[np.minimum(source, len(codes) - 1)]
        line_ends = np.flatnonzero(codes == ord("\n"))
        line_of = np.searchsorted(line_ends, starts)
        last_of_line = np.concatenate((line_of[1:] != line_of[:-1], [True]))
        laid[word_starts + lengths] = np.where(last_of_line, ord("\n"), ord(" ")).astype(np.uint64)
        found = self.word_spans(laid, word_starts)
        if found is None:
            return None
        first, end, entries = found
        return starts[first], ends[end - 1], entries

    def exact_line(self, line: str) -> list[tuple[int, int, int]]:
        """The definition's matches in one line of raw text, as character spans."""
        tokens = list(TOKEN.finditer(line))
        return [(tokens[a].start(), tokens[b - 1].end(), entry) for a, b, entry in automaton_matches(self.automaton, [t.group() for t in tokens])]

    def text_arrays(self, lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The matches of all `lines` as arrays (line, start character, end character, entry), in pieces of whole lines."""
        return text_arrays(lines if self.tables else [], self.chunk_arrays, self.exact_line)

    def text_spans(self, lines: Sequence[str]) -> list[list[tuple[int, int, int]]]:
        """Every line's matches as (start character, end character, entry)."""
        return spans_by_line(lines, self.text_arrays(lines))
