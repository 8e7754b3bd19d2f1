"""Word tokens and 64-bit hashes over whole texts with numpy: no Python step per character or token.

- `token_bounds`: the tokens of `rawtext.tokens.TOKEN` (`\\w+|[^\\w\\s]`: runs of word characters, every
  other non-space character alone) as arrays of start and end offsets, from one class per code point
  (a table built once per process with the regular expression itself, so `\\w` and `\\s` mean what
  they mean there). With `line_tokens`, a line end is a token of its own: a unit no entry holds.
- `unit_hashes`: a hash of each unit's characters (a polynomial in an odd base, modulo 2^64, from one
  prefix sum: the sum over a unit's characters of code × base^offset, its start's power divided out
  by the base's inverse modulo 2^64), mixed with the unit's length. Two bases give two independent
  hashes: one finds candidates, the other confirms them.
- `PrefixHashes`: the same hash of any span of one text in O(1) (the DaLUKE rule's character windows).
- `entry_bitmap`, `look_up`: hashes found among an entry length's sorted hashes, a bitmap sorting out the rest first.
- `lowered`: code points lowercased one by one (case ignored without moving any offset).
"""

from functools import lru_cache

import numpy as np

WINDOW_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of the window hash that marks candidates (wraps modulo 2^64)
CHECK_BASE = np.uint64(0xC2B2AE3D27D4EB4F)  # a second, independent window hash: a candidate is taken only if both agree
UNIT_BASES = (0xD6E8FEB86659FD93, 0xA0761D6478BD642F)  # odd bases of the two unit hashes (invertible modulo 2^64)
LENGTH_MIX = np.uint64(0xFF51AFD7ED558CCD)
MASK = (1 << 64) - 1
SPACE, WORD, SINGLE = 0, 1, 2  # character classes: no token, part of a word run, a token by itself


def char_codes(text: str) -> np.ndarray:
    """The code points of `text` as uint64."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


@lru_cache(maxsize=4)
def class_table(bits: int, line_tokens: bool) -> np.ndarray:
    """The class of every code point below 2^bits, by the regular expression's own `\\w` and `\\s`."""
    import re

    size = 1 << bits
    everything = "".join(map(chr, range(size)))
    table = np.full(size, SINGLE, dtype=np.uint8)
    for pattern, value in ((r"\s+", SPACE), (r"\w+", WORD)):
        for run in re.finditer(pattern, everything):
            table[run.start() : run.end()] = value
    if line_tokens:
        table[ord("\n")] = SINGLE
    return table


def token_bounds(codes: np.ndarray, line_tokens: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the word tokens of the text whose code points are `codes`, as `TOKEN.finditer` finds them."""
    if not len(codes):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    bits = max(8, int(codes.max()).bit_length())
    classes = class_table(bits, line_tokens)[codes.astype(np.int64)]
    word = classes == WORD
    single = classes == SINGLE
    previous_word = np.concatenate(([False], word[:-1]))
    next_word = np.concatenate((word[1:], [False]))
    starts = np.flatnonzero((word & ~previous_word) | single)
    ends = np.flatnonzero((word & ~next_word) | single) + 1
    return starts, ends


@lru_cache(maxsize=4)
def lower_table(bits: int) -> np.ndarray:
    """Each code point below 2^bits lowercased, where its lowercase is one code point (else kept): case ignored without moving offsets."""
    table = np.arange(1 << bits, dtype=np.uint64)
    for code in range(1 << bits):
        lower = chr(code).lower()
        if len(lower) == 1 and ord(lower) != code:
            table[code] = ord(lower)
    return table


def lowered(codes: np.ndarray) -> np.ndarray:
    """`codes` with every code point lowercased (`lower_table`)."""
    if not len(codes):
        return codes
    return lower_table(max(8, int(codes.max()).bit_length()))[codes.astype(np.int64)]


def powers(base: int, count: int) -> np.ndarray:
    """base^0 .. base^(count-1) modulo 2^64 (a read-only view of a table kept per base, grown in powers of two)."""
    return power_table(base, max(12, (count - 1).bit_length()))[:count]


@lru_cache(maxsize=16)
def power_table(base: int, bits: int) -> np.ndarray:
    out = np.ones(1 << bits, dtype=np.uint64)
    out[1:] = np.cumprod(np.full((1 << bits) - 1, base, dtype=np.uint64))  # wraps modulo 2^64
    out.flags.writeable = False
    return out


class PrefixHashes:
    """The unit hash of any span of one text in O(1): a prefix sum of code × base^position and the base's inverse powers."""

    def __init__(self, codes: np.ndarray, base: int) -> None:
        with np.errstate(over="ignore"):
            self.prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
            np.cumsum(codes * powers(base, len(codes)), out=self.prefix[1:])
        self.inverse = powers(pow(base, -1, 1 << 64), len(codes))

    def of(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The hash of each span `[start, end)`: sum of code × base^offset (mod 2^64), times a mixer, plus the length."""
        with np.errstate(over="ignore"):
            hashes = (self.prefix[ends] - self.prefix[starts]) * self.inverse[starts]
            return hashes * LENGTH_MIX + (ends - starts).astype(np.uint64)


def unit_hashes(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, base: int) -> np.ndarray:
    """The hash of each unit `codes[start:end]` (`PrefixHashes.of`)."""
    if not len(starts):
        return np.zeros(0, dtype=np.uint64)
    return PrefixHashes(codes, base).of(starts, ends)


def string_hashes(units: list[str], base: int) -> np.ndarray:
    """`unit_hashes` of a list of strings, each one unit."""
    lengths = np.fromiter(map(len, units), dtype=np.int64, count=len(units))
    ends = np.cumsum(lengths)
    return unit_hashes(char_codes("".join(units)), ends - lengths, ends, base)


FILTER_LOAD = 16  # bitmap places per entry of one length: the hashes' low bits index it, sorting out almost every window


def entry_bitmap(hashes: np.ndarray) -> np.ndarray:
    """A bitmap (size a power of two, at least FILTER_LOAD places per hash) marking the low bits of `hashes`."""
    bitmap = np.zeros(1 << max(12, (len(hashes) * FILTER_LOAD - 1).bit_length()), dtype=bool)
    bitmap[(hashes & np.uint64(len(bitmap) - 1)).astype(np.int64)] = True
    return bitmap


def look_up(hashes: np.ndarray, table: np.ndarray, numbers: np.ndarray, bitmap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of `hashes` found in the sorted `table` (bitmap first, then a sorted search) and the entry numbers there."""
    candidates = np.flatnonzero(bitmap[(hashes & np.uint64(len(bitmap) - 1)).astype(np.int64)])
    found = np.minimum(np.searchsorted(table, hashes[candidates]), len(table) - 1)
    hit = table[found] == hashes[candidates]
    return candidates[hit], numbers[found[hit]]
