"""The taggable text of a TEI/XML document and where each of its characters is in the document.

Taggable are the `p`, `s` and `ab` elements (TEI namespace or none, outside `teiHeader`) whose content is
text with at most milestone elements (`lb`, `pb`, `cb`, `milestone`), comments and processing instructions.
Each becomes a `Segment`: the text the tagger sees (references such as `&amp;` resolved, a milestone read
as a space, or as nothing with `break="no"`, comments as nothing) and its pieces, each with its range in
the document, so that an entity found in the segment text maps back to exact document offsets.
expat parses the document (well-formedness, and the byte offset of every event).
"""

import bisect
import re
import xml.parsers.expat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Optional

from flairsuite.errors import InputError

TEI_NAMESPACE = "http://www.tei-c.org/ns/1.0"
TAGGABLE = frozenset({"p", "s", "ab"})
MILESTONES = frozenset({"lb", "pb", "cb", "milestone"})
HEADER = "teiHeader"
QNAME = re.compile(r"<([^\s/>]+)")
HANDLERS = ("StartElement", "EndElement", "CharacterData", "Comment", "ProcessingInstruction", "StartCdataSection", "EndCdataSection", "SkippedEntity")


@dataclass(frozen=True)
class Piece:
    """A stretch of a segment: `text` at `start` in the segment text, from `source_start` to `source_end` in the document.

    A text piece whose document characters are its text maps character by character (`literal`); any other text piece
    (a reference such as `&amp;`, a CRLF read as a newline) only as a whole. Markup pieces can never lie inside an entity.
    """

    start: int
    text: str
    source_start: int
    source_end: int
    markup: bool
    literal: bool

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class Segment:
    """One taggable element: its text for the tagger, its pieces, and the namespace prefix (with colon) of its tag."""

    text: str
    pieces: tuple[Piece, ...]
    prefix: str

    @cached_property
    def _texts(self) -> tuple[list[Piece], list[int], list[int]]:
        """The text pieces, their starts in the segment text, and the document starts of the markup pieces."""
        texts = [piece for piece in self.pieces if not piece.markup]
        return texts, [piece.start for piece in texts], [piece.source_start for piece in self.pieces if piece.markup]

    def source_range(self, start: int, end: int) -> Optional[tuple[int, int]]:
        """The document range of the segment text's `[start, end)`, or None if markup lies in it or it splits a reference."""
        texts, starts, markup = self._texts
        first = _boundary(texts, starts, start, at_end=False)
        last = _boundary(texts, starts, end, at_end=True)
        if first is None or last is None or first >= last:
            return None
        following = bisect.bisect_left(markup, first)  # the first markup piece at or after the start: it must not begin before the end
        if following < len(markup) and markup[following] < last:
            return None
        return first, last


def _boundary(pieces: list[Piece], starts: list[int], offset: int, at_end: bool) -> Optional[int]:
    """The document offset of a segment-text offset at an entity's start (or end): inside a literal piece, or at a piece's edge."""
    index = (bisect.bisect_left(starts, offset) if at_end else bisect.bisect_right(starts, offset)) - 1
    if index < 0:
        return None
    piece = pieces[index]
    if not (piece.start <= offset < piece.end or (at_end and piece.start < offset <= piece.end)):
        return None
    if piece.literal:
        return piece.source_start + offset - piece.start
    if offset == piece.start and not at_end:
        return piece.source_start
    if offset == piece.end and at_end:
        return piece.source_end
    return None


@dataclass(frozen=True)
class XmlSource:
    """A parsed document: its text, its taggable segments, and how many p/s/ab elements were passed over (other elements inside)."""

    text: str
    segments: tuple[Segment, ...]
    passed_over: int


@dataclass
class _Event:
    index: int  # byte offset in the document, then character offset
    kind: str
    name: str = ""
    data: str = ""
    attributes: Optional[dict[str, str]] = None


def _events(data: bytes, path: Path) -> list[_Event]:
    """Every expat event of the document with its byte offset; malformed XML is a one-line error with its line."""
    parser = xml.parsers.expat.ParserCreate(encoding="UTF-8", namespace_separator=" ")
    events: list[_Event] = []

    def record(kind: str):
        def handler(*args) -> None:
            name = args[0] if kind in ("StartElement", "EndElement", "SkippedEntity") else ""
            text = args[0] if kind in ("CharacterData", "Comment") else ""
            attributes = args[1] if kind == "StartElement" else None
            events.append(_Event(parser.CurrentByteIndex, kind, name, text, attributes))

        return handler

    for kind in HANDLERS:
        setattr(parser, f"{kind}Handler", record(kind))
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as err:
        reason = xml.parsers.expat.ErrorString(err.code)
        raise InputError(path, err.lineno, f"not well-formed XML: {reason} (column {err.offset + 1})") from None
    return events


def _to_characters(events: list[_Event], data: bytes, path: Path) -> int:
    """Turn the events' byte offsets into character offsets (they are monotonic and fall between characters); return the text length."""
    position, characters = 0, 0
    for event in events:
        if event.index < position:
            raise InputError(path, None, f"cannot locate the XML parser's events in the file (offset {event.index} after {position}; please report this)")
        characters += len(data[position : event.index].decode("utf-8"))
        position, event.index = event.index, characters
    return characters + len(data[position:].decode("utf-8"))


def _local(name: str) -> Optional[str]:
    """The local name of an expat name in the TEI namespace or none; None for other namespaces."""
    namespace, _, local = name.rpartition(" ")
    return local if namespace in ("", TEI_NAMESPACE) else None


class _SegmentBuilder:
    """Collects the pieces of one taggable element while its events arrive; `taggable` turns False on anything else."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.pieces: list[Piece] = []
        self.length = 0
        self.taggable = True
        self.milestone: Optional[int] = None  # index into pieces of the open milestone
        self.empty = False  # whether that milestone is an empty-element tag (`<lb/>`)

    def add(self, text: str, start: int, end: int, markup: bool, literal: bool = False) -> None:
        self.pieces.append(Piece(self.length, text, start, end, markup, literal))
        self.length += len(text)

    def start_child(self, local: Optional[str], event: _Event, end: int, text: str, direct: bool) -> None:
        """A child element starts at `event.index`, its start tag ends at `end`: a milestone becomes a markup piece."""
        if local not in MILESTONES or self.milestone is not None or not direct:
            self.taggable = False
            return
        spacing = "" if (event.attributes or {}).get("break") == "no" else " "
        self.milestone, self.empty = len(self.pieces), text[event.index : end].endswith("/>")
        self.add(spacing, event.index, end, markup=True)

    def end_child(self, end: int) -> None:
        """A direct child ends; a milestone written `<lb></lb>` grows to the end of its end tag (`end`)."""
        if self.milestone is not None and not self.empty:
            old = self.pieces[self.milestone]
            self.pieces[self.milestone] = Piece(old.start, old.text, old.source_start, end, True, False)
        self.milestone = None

    def segment(self) -> Segment:
        return Segment("".join(piece.text for piece in self.pieces), tuple(self.pieces), self.prefix)


def _following(events: list[_Event], length: int) -> list[int]:
    """For each event, the offset of the next event that starts later (the end of what this event read), or `length`."""
    following, later = [length] * len(events), length
    for number in range(len(events) - 1, -1, -1):
        following[number] = later
        if number and events[number - 1].index < events[number].index:
            later = events[number].index
    return following


def parse_xml(text: str, path: Path) -> XmlSource:
    """The taggable segments of the XML document `text` (without a BOM); malformed XML is a one-line error naming `path` and the line."""
    data = text.encode("utf-8")
    events = _events(data, path)
    following = _following(events, _to_characters(events, data, path))
    segments: list[Segment] = []
    passed_over = 0
    stack: list[Optional[str]] = []  # local names (None: another namespace) of the open elements
    in_header = 0
    builders: list[tuple[int, _SegmentBuilder]] = []  # the open p/s/ab elements, innermost last, with their depths
    for event, end in zip(events, following):
        depth, builder = builders[-1] if builders else (0, None)
        if event.kind == "StartElement":
            local = _local(event.name)
            stack.append(local)
            in_header += local == HEADER
            if builder is not None:
                builder.start_child(local, event, end, text, len(stack) == depth + 1)
            if local in TAGGABLE and not in_header:  # a p in a note in a p is taggable, the outer p not
                qname = QNAME.match(text, event.index)
                prefix = qname.group(1).rpartition(":")[0] if qname else ""
                builders.append((len(stack), _SegmentBuilder(f"{prefix}:" if prefix else "")))
        elif event.kind == "EndElement":
            if builder is not None and len(stack) == depth:
                if not builder.taggable:
                    passed_over += 1
                elif builder.pieces:
                    segments.append(builder.segment())
                builders.pop()
            elif builder is not None and len(stack) == depth + 1:
                builder.end_child(end)
            in_header -= stack.pop() == HEADER
        elif builder is not None:
            _add_content(builder, event, text, end)
    return XmlSource(text, tuple(segments), passed_over)


def _add_content(builder: _SegmentBuilder, event: _Event, text: str, following: int) -> None:
    """Character data, a comment, a processing instruction or anything else inside a taggable element."""
    if builder.milestone is not None or event.kind in ("StartCdataSection", "EndCdataSection"):
        builder.taggable = False  # text inside a milestone; CDATA, where inserted tags would be text
    elif event.kind == "CharacterData":
        last = builder.pieces[-1] if builder.pieces else None
        if last is not None and not last.markup and last.source_start == event.index:  # one reference expanded in several calls
            joined = last.text + event.data
            builder.pieces[-1] = Piece(last.start, joined, last.source_start, last.source_end, False, text[last.source_start : last.source_end] == joined)
            builder.length += len(event.data)
        else:
            builder.add(event.data, event.index, following, markup=False, literal=text[event.index : following] == event.data)
    else:  # comment, processing instruction, skipped entity: markup the tagger does not see
        builder.add("", event.index, following, markup=True)
