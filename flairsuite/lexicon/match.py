"""Finding lexicon entries in text on an Aho-Corasick automaton (pyahocorasick): two rules.

- `maximum`: Algorithm 1 of Jia et al. 2020 (maximum entity matching): from the first unit on,
  the longest entry that starts at the current unit is matched and the scan goes on after it;
  where none starts, one unit further. Units are characters (Chinese) or word tokens; every unit
  becomes one code point of an encoded string, so the automaton's leftmost-longest search
  (`iter_long`) is exactly this scan and never matches inside a unit.
- `daluke`: the auto-annotation of DaLUKE (Møller et al., daluke-danish.tex, "Auto-annotated
  entities"): at every word start, the next n characters (5 ≤ n ≤ 48) are compared with the
  entries ignoring case; on a match (the longest n) every word the characters cover, whole or in
  part, is annotated, and the scan jumps to the next word start after the match.

A match is (first unit, end unit exclusive, entry index). `position_tags` turns matches into one
tag per unit: B, I, E (first, inner, last unit of a match), S (a one-unit match) or O.
"""

from collections.abc import Sequence
from typing import NamedTuple

import ahocorasick

from flairsuite.errors import FlairsuiteError
from flairsuite.lexicon.store import Lexicon

RULES = ("maximum", "daluke")
DALUKE_LENGTHS = (5, 48)  # characters per match, inclusive (the paper's bounds)
POSITION_TAGS = ("O", "B", "I", "E", "S")
FIRST_CODE = 0x100  # unit codes start above Latin-1; the surrogate block is skipped
NO_UNIT = " "  # the code of every unit no entry holds (no key contains it)


class Match(NamedTuple):
    start: int  # first unit
    end: int  # one past the last unit
    entry: int  # index into the lexicon's entries


def unit_code(index: int) -> str:
    """The code point standing for the unit numbered `index`: above 0xFF, the surrogates 0xD800-0xDFFF left out."""
    point = FIRST_CODE + index
    return chr(point if point < 0xD800 else point + 0x800)


class LexiconMatcher:
    """The entries of a lexicon on an automaton, matched by `rule` (`maximum` or `daluke`)."""

    def __init__(self, lexicon: Lexicon, rule: str = "maximum") -> None:
        if rule not in RULES:
            raise FlairsuiteError(f"unknown matching rule '{rule}' (known: {', '.join(RULES)})")
        self.lexicon, self.rule = lexicon, rule
        self.automaton = ahocorasick.Automaton()
        if rule == "maximum":
            self.codes: dict[str, str] = {}
            shortest = 2 if lexicon.units == "characters" else 1  # Algorithm 1 matches c_i..c_j with j > i
            for index, entry in enumerate(lexicon.entries):
                if len(entry) >= shortest:
                    key = "".join(self.codes.setdefault(unit, unit_code(len(self.codes))) for unit in entry)
                    self.automaton.add_word(key, (len(entry), index))
        else:
            low, high = DALUKE_LENGTHS
            for index, entry in enumerate(lexicon.entries):
                key = lexicon.text(entry).lower()
                if low <= len(key) <= high and not self.automaton.exists(key):
                    self.automaton.add_word(key, (len(key), index))
        self.empty = len(self.automaton) == 0
        if not self.empty:
            self.automaton.make_automaton()

    def encode(self, units: Sequence[str]) -> str:
        """One code point per unit (units no entry holds: a space, which no key contains)."""
        get = self.codes.get
        return "".join([get(unit, NO_UNIT) for unit in units])

    def maximum(self, units: Sequence[str]) -> list[Match]:
        """Algorithm 1 over `units` (characters or tokens)."""
        if self.empty or not units:
            return []
        return [Match(end + 1 - size, end + 1, index) for end, (size, index) in self.automaton.iter_long(self.encode(units))]

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
