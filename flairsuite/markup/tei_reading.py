"""The text of one TEI block as the tagger reads it, and where an entity of that text can go in the document.

A block's content arrives as `Atom`s in document order: character data, milestones, the tags of the inline elements read
through, and left-out stretches (comments, `del`, a nested block, ...). `reading` joins words at `break="no"` milestones
(`flairsuite.markup.tei_blocks` states the rules) and makes a `Segment`: the text, and the places in the document where an
entity may start or end ("cuts"), each with the element it lies directly in. An entity goes in where its start and end
lie directly in one element, so that it wholly contains whatever markup lies between them. Where several elements would do,
the outermost wins (`<persName><hi>Franz</hi></persName>`, `<placeName><choice>…</choice></placeName>`: the entity holds
every reading of a `choice`), then the tightest place (milestones and comments at its ends stay outside).
"""

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from flairsuite.markup.tei_blocks import HYPHENS

TEXT, MILESTONE, TAG, OPAQUE = "text", "milestone", "tag", "opaque"


@dataclass
class Atom:
    """A stretch `[start, end)` of the document inside a block; `before` and `after` the (id, depth) of the element it starts and ends in.

    `data` is what a text atom reads (`literal`: its document characters are that text); a milestone reads " ", or nothing
    when it `joins` a word (`break="no"`) or stands next to one that does (`joined`). `lead` and `tail` count the characters
    of a literal text left out at its ends (a text that is not literal is left out whole or not at all). A tag atom of an
    element read through carries the element's `name` and id (`element`).
    """

    kind: str
    start: int
    end: int
    before: tuple[int, int]
    after: tuple[int, int]
    data: str = ""
    literal: bool = False
    joins: bool = False
    joined: bool = False
    lead: int = 0
    tail: int = 0
    name: str = ""
    element: Optional[int] = None

    @property
    def text(self) -> str:
        """What the atom reads."""
        if self.kind == TEXT:
            return self.data[self.lead : len(self.data) - self.tail]
        return " " if self.kind == MILESTONE and not (self.joins or self.joined) else ""


@dataclass(frozen=True)
class Cut:
    """A place where an entity may begin or end: before `reading` characters of the text, at `source` in the document, directly in `parent`."""

    reading: int
    source: int
    parent: int
    depth: int


@dataclass(frozen=True)
class Run:
    """A literal stretch of the text: `length` characters from `reading` on are the document's from `source` on, directly in `parent`."""

    reading: int
    source: int
    length: int
    parent: int
    depth: int


@dataclass(frozen=True)
class Marked:
    """An inline element read through: its local name and the text it holds (`start`, `end` in the segment text)."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Segment:
    """One block's text for the tagger, the namespace prefix (with colon) of its tag, its cuts, literal runs and inline elements."""

    text: str
    prefix: str
    cuts: tuple[Cut, ...]
    runs: tuple[Run, ...]
    elements: tuple[Marked, ...] = ()
    _cut_keys: list[int] = field(default_factory=list, init=False, repr=False, compare=False)
    _run_keys: list[int] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._cut_keys.extend(cut.reading for cut in self.cuts)
        self._run_keys.extend(run.reading for run in self.runs)

    def candidates(self, offset: int) -> list[Cut]:
        """Every place in the document of the text offset `offset` (none inside a reference such as `&amp;`)."""
        low, high = bisect.bisect_left(self._cut_keys, offset), bisect.bisect_right(self._cut_keys, offset)
        found = list(self.cuts[low:high])
        index = bisect.bisect_right(self._run_keys, offset) - 1
        if index >= 0:
            run = self.runs[index]
            if run.reading < offset < run.reading + run.length:
                found.append(Cut(offset, run.source + offset - run.reading, run.parent, run.depth))
        return found

    def source_range(self, start: int, end: int) -> Optional[tuple[int, int]]:
        """The document range for the text's `[start, end)`: both ends directly in one element, the outermost, then the tightest;
        None if there is none (it would cross markup)."""
        best: Optional[tuple[int, int, int, int]] = None
        for first in self.candidates(start):
            for last in self.candidates(end):
                if first.parent == last.parent and first.source < last.source:
                    key = (-first.depth, first.source, -last.source, last.source)
                    best = max(best, key) if best else key
        return (best[1], best[3]) if best else None


def _join(atoms: list[Atom], milestone: int) -> None:
    """Join the word around the `break="no"` milestone `atoms[milestone]`: whitespace around it and a line-end hyphen before it left out."""
    before = _trim(atoms, range(milestone - 1, -1, -1), backward=True)
    after = _trim(atoms, range(milestone + 1, len(atoms)), backward=False)
    if before is None or before[1][-1:] not in HYPHENS or (after is not None and after[1][:1].isupper()):
        return
    atom = atoms[before[0]]
    if not atom.literal and len(before[1]) > 1:  # a reference read as more than the hyphen cannot be cut
        return
    if atom.literal:
        atom.tail += 1
    else:
        atom.lead = len(atom.data)


def _trim(atoms: list[Atom], order: range, backward: bool) -> Optional[tuple[int, str]]:
    """Leave out the whitespace next to a joining milestone, in `order` from it, up to the first text read (other milestones
    on the way read as nothing); return that text atom's index and its text, None if there is none."""
    for index in order:
        atom = atoms[index]
        if atom.kind == MILESTONE:
            atom.joined = True
        text = atom.text
        if atom.kind != TEXT or not text:
            continue
        kept = text.rstrip() if backward else text.lstrip()
        if not atom.literal:
            if kept:
                return index, text
            atom.lead = len(atom.data)
            continue
        if backward:
            atom.tail += len(text) - len(kept)
        else:
            atom.lead += len(text) - len(kept)
        if kept:
            return index, kept
    return None


def reading(atoms: Sequence[Atom], prefix: str) -> Segment:
    """The segment of a block's atoms: words joined at `break="no"` milestones, then the text, cuts, runs and inline elements."""
    atoms = list(atoms)
    for index, atom in enumerate(atoms):
        if atom.joins:
            _join(atoms, index)
    parts: list[str] = []
    cuts: list[Cut] = []
    runs: list[Run] = []
    opened: dict[int, tuple[str, int]] = {}
    elements: list[Marked] = []
    length = 0
    for atom in atoms:
        cuts.append(Cut(length, atom.start, *atom.before))
        text = atom.text
        if atom.kind == TEXT and atom.literal and text:
            cuts.append(Cut(length, atom.start + atom.lead, *atom.before))
            runs.append(Run(length, atom.start + atom.lead, len(text), *atom.before))
            cuts.append(Cut(length + len(text), atom.start + atom.lead + len(text), *atom.before))
        parts.append(text)
        length += len(text)
        cuts.append(Cut(length, atom.end, *atom.after))
        if atom.element is not None and atom.kind == TAG:
            _element(atom, length, opened, elements)
    return Segment("".join(parts), prefix, tuple(cuts), tuple(runs), tuple(sorted(elements, key=lambda e: (e.start, -e.end))))


def _element(atom: Atom, length: int, opened: dict[int, tuple[str, int]], elements: list[Marked]) -> None:
    """Record an inline element's text range from its start tag atom (read up to `length`) and its end tag atom."""
    if atom.element in opened:
        name, start = opened.pop(atom.element)
        elements.append(Marked(name, start, length))
    elif atom.after[0] == atom.element:  # a start tag: the element goes on after it
        opened[atom.element] = (atom.name, length)
    else:  # an empty element (`<persName/>`)
        elements.append(Marked(atom.name, length, length))
