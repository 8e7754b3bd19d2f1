"""Words broken at a line end, joined for tagging: a view of a text in which "Ber-\\nlin" reads "Berlin".

Letters, diplomatic transcriptions and OCR break words at line ends; a tagger trained on running text misses
"Ber-" + "lin" and tags "Sindels-" as a person. A **line-end break** is a hyphen right after a letter (`-`, the soft
hyphen U+00AD, U+2010, U+2011, `¬`, `⸗` or `=`), then spaces or tabs, one line break (LF, CRLF or CR), spaces or
tabs, and a letter. The letters before the hyphen are the left part, those after the break the right part; the rule,
first match wins:

1. **leave**: the right part is a conjunction (`CONJUNCTIONS`: "und", "oder", "bis", ...): a suspended compound
   ("Haus-\\nund Gartenarbeit" is "Haus- und Gartenarbeit"); the text stays as it is;
2. **join**: a soft hyphen, which only ever marks a syllable break;
3. **keep**: the right part starts with a capital and is not all capitals ("Lasker-\\nSchüler"), or the left part
   is an abbreviation in capitals ("US-\\ngeführt"): a compound; the break goes, the hyphen stays (as `-`):
   "Lasker-Schüler";
4. **join** otherwise: hyphen and break go: "Ber-\\nlin" reads "Berlin", "Sindels-\\ndorf" "Sindelsdorf".

The rule was chosen by measurement (`benchmarks/line_end_joining.py`, benchmarks/README.md). Held-out German novels
and news set in lines of 35-75 characters: it restores 99.9 % of 16,222 line-end hyphens (compounds 91.7 %, suspended
compounds 100 %); every compound hyphen of that text with as many broken words and its 652 suspended compounds:
93.0 %. A lexicon of word counts from the other novels and articles (join when the joined word is at least as
frequent as the hyphenated pair) kept 13.8 % of the compounds alone, and before the capitalisation rule (where it
knows either form) it set two more of the 16,222 cases right and was no better on the second set (93.0 % both), while it would need a
word list per language: none is used.

`joined_view(text)` is the joined text and, for each of its characters, the offset of the character it came from, as
`flairsuite.corpora.segmentation.FlairView` keeps them (a span over "Berlin" maps back to "Ber-\\nlin");
`reading_view(text, join)` composes it with `flair_view` (Flair's own changes first, then the joining), so that
`original(start, end)` of the result is always an offset in `text`. With `join` false it is `flair_view(text)`.
"""

import re
from typing import Optional

from flairsuite.corpora.segmentation import FlairView, flair_view

HYPHENS = "-\u00ad\u2010\u2011¬⸗="
SOFT_HYPHEN = "\u00ad"
LETTER = r"[^\W\d_]"
LINE_END = re.compile(rf"(?<={LETTER})[{re.escape(HYPHENS)}][ \t]*(?:\r\n|\n|\r)[ \t]*(?={LETTER})")
LEFT_PART = re.compile(rf"{LETTER}+$")
RIGHT_PART = re.compile(rf"{LETTER}+")
CONTEXT = 64  # characters before a break searched for its left part
CONJUNCTIONS = frozenset({
    "und", "oder", "bis", "sowie", "als", "sondern", "bzw", "beziehungsweise", "respektive", "u",
    "and", "or", "og", "eller",
})  # fmt: skip  ("wie" and "noch" end "so-|wie" and "den-|noch" too often)
JOIN, KEEP, LEAVE = "join", "keep", "leave"


def capitalised_compound(left: str, right: str) -> bool:
    """Rule 3: the right part starts with a capital and is not all capitals, or the left part is capitals (two or more)."""
    if right[:1].isupper():
        return not (len(right) > 1 and right.isupper())
    return len(left) > 1 and left.isupper()


def decision(left: str, right: str, hyphen: str = "-") -> str:
    """What becomes of a line-end break between the letters `left` and `right` (module docstring): JOIN, KEEP or LEAVE."""
    if right.casefold() in CONJUNCTIONS:
        return LEAVE
    if hyphen == SOFT_HYPHEN:
        return JOIN
    return KEEP if capitalised_compound(left, right) else JOIN


def break_decision(text: str, match: "re.Match[str]") -> str:
    """The decision for one `LINE_END` match in `text`."""
    left = LEFT_PART.search(text, max(0, match.start() - CONTEXT), match.start())
    right = RIGHT_PART.match(text, match.end())
    return decision(left.group() if left else "", right.group() if right else "", match.group()[0])


def joined_view(text: str) -> FlairView:
    """`text` with its line-end breaks joined or kept as compounds (module docstring), and where each character came from."""
    parts: list[str] = []
    origin: list[int] = []
    position = 0
    for match in LINE_END.finditer(text):
        kind = break_decision(text, match)
        if kind == LEAVE:
            continue
        parts.append(text[position : match.start()])
        origin.extend(range(position, match.start()))
        if kind == KEEP:
            parts.append("-")
            origin.append(match.start())
        position = match.end()
    if not parts:
        return FlairView(text, None)
    parts.append(text[position:])
    origin.extend(range(position, len(text) + 1))  # and the end
    return FlairView("".join(parts), origin)


def reading_view(text: str, join: bool = True) -> FlairView:
    """The text as the tagger reads it: Flair's view of it (`flair_view`), with line-end breaks joined when `join`;
    `original(start, end)` gives offsets in `text`."""
    flair = flair_view(text)
    if not join:
        return flair
    joined = joined_view(flair.text)
    if joined.origin is None:
        return flair
    if flair.origin is None:
        return joined
    return FlairView(joined.text, [flair.origin[position] for position in joined.origin])


def inside_break(text: str, position: int) -> bool:
    """Whether `position` lies inside a line-end break of `text` that `joined_view` joins or keeps (a cut there would part the word)."""
    for match in LINE_END.finditer(text, max(0, position - CONTEXT), position + CONTEXT):
        if match.start() < position < match.end() and break_decision(text, match) != LEAVE:
            return True
    return False


def broken_words(text: str, start: int = 0, end: Optional[int] = None) -> list[tuple[int, int]]:
    """The (hyphen, first letter after the break) offsets of every break in `text[start:end]` that `joined_view` joins or keeps."""
    found = LINE_END.finditer(text, start, len(text) if end is None else end)
    return [(match.start(), match.end()) for match in found if break_decision(text, match) != LEAVE]
