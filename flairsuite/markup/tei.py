"""TEI P5 markup of entity spans: a new document for a plain text, or entity elements inserted in place in a TEI/XML document.

Either way the text is kept exactly: stripping the inserted elements (and reading the XML) gives the input back,
carriage returns included (written `&#13;`). Each entity element carries the tagger's confidence as `cert`.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from flairsuite.errors import InputError
from flairsuite.markup.spans import Span, Wrap, check_spans, inside, wrap_text
from flairsuite.markup.typemap import DEFAULT_TYPE_MAP, TypeMap
from flairsuite.markup.xmlsource import TEI_NAMESPACE, XmlSource

BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")  # a paragraph break: a line end and one or more blank lines
MARKED = frozenset({"persName", "placeName", "orgName", "geogName", "roleName", "date", "time", "rs", "name"})  # entity elements of TEI
NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # characters XML 1.0 cannot hold


@dataclass(frozen=True)
class Markup:
    """A marked-up document and how many entities went in, were left out because they would cross markup, or were marked already."""

    text: str
    inserted: int
    skipped: int
    already_marked: int = 0


def xml_text(text: str) -> str:
    """`text` as XML character data: `&`, `<`, `>` escaped, carriage returns as `&#13;` (a parser would turn them into line feeds)."""
    return escape(text, {"\r": "&#13;"})


def check_xml_characters(text: str, path: Path) -> None:
    """A character XML 1.0 cannot hold (a control character such as a form feed) is a one-line error with its line."""
    found = NOT_XML.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        raise InputError(path, line, f"character U+{ord(found.group()):04X} cannot be written in XML: remove or replace it for --format tei")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The `(start, end)` of every paragraph: blocks between blank lines, without their surrounding whitespace."""
    found, start = [], 0
    for block_end, next_start in [(m.start(), m.end()) for m in BLANK_LINES.finditer(text)] + [(len(text), len(text))]:
        block = text[start:block_end]
        if block.strip():
            left = start + len(block) - len(block.lstrip())
            found.append((left, left + len(block.strip())))
        start = next_start
    return found


def entity_wraps(spans: Sequence[Span], type_map: TypeMap, prefix: str = "", depth: int = 0) -> list[Wrap]:
    """The entity element around each span, by the type map."""
    wraps = []
    for span in spans:
        element = type_map.element(span.type)
        wraps.append(Wrap(span.start, span.end, element.open(span.type, span.confidence, prefix), element.close(prefix), depth))
    return wraps


def tei_header(title: str, source_name: str) -> str:
    """A minimal TEI P5 header: the title, a publication statement, the source file."""
    return (
        "  <teiHeader>\n    <fileDesc>\n"
        f"      <titleStmt>\n        <title>{xml_text(title)}</title>\n      </titleStmt>\n"
        "      <publicationStmt>\n        <p>Named entities tagged automatically by flairsuite predict; cert is the tagger's confidence.</p>\n"
        "      </publicationStmt>\n"
        f"      <sourceDesc>\n        <p>The plain text file {xml_text(source_name)}.</p>\n      </sourceDesc>\n"
        "    </fileDesc>\n  </teiHeader>\n"
    )


def tei_document(text: str, spans: Sequence[Span], path: Path, type_map: TypeMap = DEFAULT_TYPE_MAP) -> Markup:
    """The plain text of file `path` as a TEI P5 document: title from the file name, one `<p>` per paragraph, entities by the type map.

    The body (`xml:space="preserve"`) holds the whole text, whitespace between paragraphs included. An entity that
    would cross a paragraph break is left out and counted; a character XML cannot hold is a one-line error.
    """
    check_spans(text, spans)
    check_xml_characters(text, path)
    blocks = paragraphs(text)
    kept = [span for span in spans if inside(span, blocks)]
    wraps = [Wrap(start, end, "<p>", "</p>") for start, end in blocks] + entity_wraps(kept, type_map, depth=1)
    body = wrap_text(text, wraps, xml_text)
    document = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<TEI xmlns="{TEI_NAMESPACE}">\n'
        f"{tei_header(path.stem, path.name)}"
        f'  <text>\n    <body xml:space="preserve">{body}</body>\n  </text>\n'
        "</TEI>\n"
    )
    return Markup(document, len(kept), len(spans) - len(kept))


def marked_names(type_map: TypeMap) -> frozenset[str]:
    """The elements that mark an entity already: TEI's names and dates, and every element of `type_map`."""
    return MARKED | {element.name for element in (*type_map.elements.values(), type_map.fallback)}


def tag_in_place(source: XmlSource, spans: Sequence[Sequence[Span]], type_map: TypeMap = DEFAULT_TYPE_MAP) -> Markup:
    """The document with entity elements inserted: `spans[i]` are offsets in `source.segments[i].text`.

    Every other character of the document stays as it was. An entity goes in where it nests with the markup around it: it
    may hold whole elements (`<lb break="no"/>`, `<hi>`, `<pb/>`, a `note`). One that overlaps an entity element already
    there (`marked_names`) is left out and counted as already marked; one that would cross an element's boundary (start
    inside `<hi>` and end outside it) or split a reference such as `&amp;` is left out and counted as skipped.
    Inserted elements take the namespace prefix of their block.
    """
    if len(spans) != len(source.segments):
        raise ValueError(f"{len(spans)} span lists for {len(source.segments)} segments")
    names = marked_names(type_map)
    wraps, skipped, already = [], 0, 0
    for segment, found in zip(source.segments, spans):
        check_spans(segment.text, found)
        marked = [(element.start, element.end) for element in segment.elements if element.name in names]
        for span in found:
            if any(start < span.end and span.start < end for start, end in marked):
                already += 1
            elif (where := segment.source_range(span.start, span.end)) is None:
                skipped += 1
            else:
                wraps.extend(entity_wraps([Span(*where, span.type, span.confidence)], type_map, segment.prefix))
    return Markup(wrap_text(source.text, wraps), len(wraps), skipped, already)
