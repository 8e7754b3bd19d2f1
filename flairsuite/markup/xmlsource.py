"""The taggable text of a TEI/XML document and where each of its characters is in the document.

expat parses the document (well-formedness, and the offset of every event). Which elements are blocks, and how their text
is read through inline markup, are `flairsuite.markup.tei_blocks`'s rules. The content of each block becomes atoms
(`flairsuite.markup.tei_reading`), and from them a `Segment`: the text the tagger sees (references such as `&amp;`
resolved, a CDATA section as its text, comments and processing instructions as nothing) and the places in the document
where an entity of that text can go. A block whose text is only whitespace gives no segment.
"""

import re
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flairsuite.errors import InputError
from flairsuite.markup.tei_blocks import DEFAULT_BLOCKS, HEADER, MILESTONES, NOT_READ, PREFERRED, chosen_child
from flairsuite.markup.tei_reading import MILESTONE, OPAQUE, TAG, TEXT, Atom, Segment, reading

TEI_NAMESPACE = "http://www.tei-c.org/ns/1.0"
QNAME = re.compile(r"<([^\s/>]+)")
HANDLERS = ("StartElement", "EndElement", "CharacterData", "Comment", "ProcessingInstruction", "StartCdataSection", "EndCdataSection", "SkippedEntity")
SKIP, BLOCK, MILESTONE_ROLE, INLINE, OUTSIDE = "skip", "block", "milestone", "inline", "outside"


@dataclass(frozen=True)
class XmlSource:
    """A parsed document: its text and its blocks' segments, in document order."""

    text: str
    segments: tuple[Segment, ...]


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


def _following(events: list[_Event], length: int) -> list[int]:
    """For each event, the offset of the next event that starts later (the end of what this event read), or `length`."""
    following, later = [length] * len(events), length
    for number in range(len(events) - 1, -1, -1):
        following[number] = later
        if number and events[number - 1].index < events[number].index:
            later = events[number].index
    return following


def _unread_children(events: list[_Event]) -> set[int]:
    """The numbers of the start events of the `choice` and `app` children that are not read (`tei_blocks.chosen_child`)."""
    stack: list[tuple[Optional[str], list[tuple[int, str]]]] = []
    unread: set[int] = set()
    for number, event in enumerate(events):
        if event.kind == "StartElement":
            local = _local(event.name)
            if stack and stack[-1][0] in PREFERRED:
                stack[-1][1].append((number, local or ""))
            stack.append((local, []))
        elif event.kind == "EndElement":
            local, children = stack.pop()
            if local in PREFERRED:
                chosen = chosen_child(local, [name for _, name in children])
                unread.update(child for index, (child, _) in enumerate(children) if index != chosen)
    return unread


@dataclass
class _Open:
    """An open element: local name (None: another namespace), id, depth, role, where its start tag begins and ends."""

    local: Optional[str]
    id: int
    depth: int
    role: str
    start: int
    tag_end: int
    empty: bool  # written as an empty-element tag (`<lb/>`): expat's end event for it reads nothing


@dataclass
class _Unit:
    """An open block: its atoms so far, the namespace prefix of its tag, where it starts."""

    start: int
    prefix: str
    atoms: list[Atom] = field(default_factory=list)


class _Walker:
    """Turns the events of a document into segments: one unit per open block, the innermost one receiving the content."""

    def __init__(self, text: str, blocks: frozenset[str], unread: set[int]) -> None:
        self.text, self.blocks, self.unread = text, blocks, unread
        self.stack: list[_Open] = []
        self.units: list[_Unit] = []
        self.skipping = 0  # open elements that are left out (teiHeader, del, ...), nested ones included
        self.cdata: Optional[tuple[int, list[str]]] = None
        self.found: list[tuple[int, Segment]] = []

    @property
    def parent(self) -> tuple[int, int]:
        """The (id, depth) of the innermost open element."""
        return (self.stack[-1].id, self.stack[-1].depth) if self.stack else (0, 0)

    def role(self, number: int, local: Optional[str]) -> str:
        """What an element starting now is: left out, a block, outside any block, a milestone or an inline element read through."""
        if self.skipping or local == HEADER or number in self.unread or (local is None and self.units):
            return SKIP
        if local in self.blocks:
            return BLOCK
        if local in NOT_READ:
            return SKIP
        if not self.units or local is None:
            return OUTSIDE
        return MILESTONE_ROLE if local in MILESTONES else INLINE

    def start(self, number: int, event: _Event, end: int) -> None:
        local = _local(event.name)
        role = self.role(number, local)
        element = _Open(local, number + 1, len(self.stack) + 1, role, event.index, end, self.text[event.index : end].endswith("/>"))
        parent = self.parent
        after = parent if element.empty else (element.id, element.depth)
        if role == SKIP:
            self.skipping += 1
        elif role == BLOCK:
            qname = QNAME.match(self.text, event.index)
            prefix = qname.group(1).rpartition(":")[0] if qname else ""
            self.units.append(_Unit(event.index, f"{prefix}:" if prefix else ""))
        elif role == MILESTONE_ROLE:
            joins = (event.attributes or {}).get("break") == "no"
            self.units[-1].atoms.append(Atom(MILESTONE, event.index, end, parent, after, joins=joins))
        elif role == INLINE:
            self.units[-1].atoms.append(Atom(TAG, event.index, end, parent, after, name=local or "", element=element.id))
        self.stack.append(element)

    def end(self, event: _Event, end: int) -> None:
        element = self.stack.pop()
        finish = element.tag_end if element.empty else end
        if element.role == SKIP:
            self.skipping -= 1
            if not self.skipping:
                self.opaque(element.start, finish)
        elif element.role == BLOCK:
            unit = self.units.pop()
            segment = reading(unit.atoms, unit.prefix)
            if segment.text.strip():
                self.found.append((unit.start, segment))
            self.opaque(element.start, finish)
        elif element.role in (MILESTONE_ROLE, INLINE) and not element.empty:
            name = element.local or "" if element.role == INLINE else ""
            inline = element.id if element.role == INLINE else None
            self.units[-1].atoms.append(Atom(TAG, event.index, end, (element.id, element.depth), self.parent, name=name, element=inline))

    def opaque(self, start: int, end: int) -> None:
        """A stretch of the innermost open block that reads as nothing (a left-out element, a nested block, a comment)."""
        if self.units:
            self.units[-1].atoms.append(Atom(OPAQUE, start, end, self.parent, self.parent))

    def content(self, event: _Event, end: int) -> None:
        """Character data, a CDATA section, a comment, a processing instruction or a skipped entity inside a block."""
        if self.skipping or not self.units:
            return
        if event.kind == "StartCdataSection":
            self.cdata = (event.index, [])
        elif event.kind == "EndCdataSection" and self.cdata is not None:  # a CDATA section maps to the document only as a whole
            start, data = self.cdata
            self.cdata = None
            self.units[-1].atoms.append(Atom(TEXT, start, end, self.parent, self.parent, data="".join(data)))
        elif event.kind == "CharacterData" and self.cdata is not None:
            self.cdata[1].append(event.data)
        elif event.kind == "CharacterData" and self.stack[-1].local not in PREFERRED:  # the whitespace between a choice's children is not read
            self.text_atom(event, end)
        else:
            self.opaque(event.index, end)

    def text_atom(self, event: _Event, end: int) -> None:
        """Character data; a reference expanded in several calls (same start) is one atom."""
        atoms = self.units[-1].atoms
        last = atoms[-1] if atoms else None
        if last is not None and last.kind == TEXT and last.start == event.index:
            last.data += event.data
            last.literal = self.text[last.start : last.end] == last.data
        else:
            atoms.append(Atom(TEXT, event.index, end, self.parent, self.parent, data=event.data, literal=self.text[event.index : end] == event.data))


def parse_xml(text: str, path: Path, blocks: Optional[frozenset[str]] = None) -> XmlSource:
    """The segments of the blocks (`tei_blocks`; `blocks` None: DEFAULT_BLOCKS) of the XML document `text` (without a BOM), in document order;
    malformed XML is a one-line error naming `path` and the line."""
    data = text.encode("utf-8")
    events = _events(data, path)
    following = _following(events, _to_characters(events, data, path))
    walker = _Walker(text, blocks or DEFAULT_BLOCKS, _unread_children(events))
    for number, (event, end) in enumerate(zip(events, following)):
        if event.kind == "StartElement":
            walker.start(number, event, end)
        elif event.kind == "EndElement":
            walker.end(event, end)
        else:
            walker.content(event, end)
    return XmlSource(text, tuple(segment for _, segment in sorted(walker.found, key=lambda found: found[0])))
