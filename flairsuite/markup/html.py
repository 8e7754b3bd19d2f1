"""Entity spans as one self-contained HTML page: inline CSS, no external resources, one colour per type, a legend with counts.

Each entity is `<mark class="ent ent-PER" data-type="PER" data-confidence="0.9712" title="PER 0.97">…</mark>`
(confidence rounded to 4 places, 2 in the title);
the text keeps its whitespace (`white-space: pre-wrap`) and is HTML-escaped. `render_html` writes the page
(`flairsuite predict --format html`, and `flairsuite serve`); `marked_text`, `legend` and `type_css` are its parts.
"""

import html
import re
from collections.abc import Iterable, Sequence

from flairsuite.markup.spans import Span, Wrap, check_spans, count_types, wrap_text

PALETTE = (  # light backgrounds, distinct enough side by side; repeated after the last one
    "#ffd6a5", "#a0c4ff", "#caffbf", "#ffadad", "#bdb2ff", "#fdffb6",
    "#9bf6ff", "#ffc6ff", "#d8e2dc", "#f4a261", "#90be6d", "#e9c46a",
)  # fmt: skip
CSS = """\
body { font-family: Georgia, "Times New Roman", serif; line-height: 1.6; margin: 2em auto; max-width: 50em; padding: 0 1em; color: #222; }
h1 { font-size: 1.3em; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; font-family: sans-serif; font-size: 0.9em; }
.legend .count { color: #555; }
.doc { white-space: pre-wrap; overflow-wrap: break-word; border-top: 1px solid #ddd; padding: 0.8em 0; }
mark.ent, .swatch { border-radius: 0.2em; padding: 0 0.1em; }
mark.ent { cursor: help; }
mark.ent:hover { outline: 1px solid #333; }
.swatch { font-family: sans-serif; }
"""
CLASS_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def type_class(entity_type: str) -> str:
    """The CSS class of a type: `ent-` and the type, characters a class name cannot hold as `_`."""
    return "ent-" + CLASS_UNSAFE.sub("_", entity_type)


def css_string(value: str) -> str:
    """`value` as a double-quoted CSS string."""
    escaped = "".join(char if char.isalnum() or char in " _-." else f"\\{ord(char):x} " for char in value)
    return f'"{escaped}"'


def type_css(types: Iterable[str]) -> str:
    """One background colour per type (in the order given), selected by `data-type` so that any type name works."""
    return "".join(f"[data-type={css_string(kind)}] {{ background: {PALETTE[i % len(PALETTE)]}; }}\n" for i, kind in enumerate(types))


def escape_text(text: str) -> str:
    """Text as HTML character data: `&<>"'` escaped, carriage returns as `&#13;` (a parser would drop them)."""
    return html.escape(text).replace("\r", "&#13;")


def mark_open(span: Span) -> str:
    """The `<mark>` start tag of an entity: type and confidence as data attributes and as the hover title."""
    kind = html.escape(span.type)
    return (
        f'<mark class="ent {type_class(span.type)}" data-type="{kind}" data-confidence="{round(span.confidence, 4):g}" '
        f'title="{kind} {span.confidence:.2f}">'
    )


def marked_text(text: str, spans: Sequence[Span]) -> str:
    """The escaped text with each span in its `<mark>`; spans are character offsets in `text`, sorted and disjoint."""
    check_spans(text, spans)
    return wrap_text(text, [Wrap(span.start, span.end, mark_open(span), "</mark>") for span in spans], escape_text)


def legend(counts: dict[str, int]) -> str:
    """A list of every type in its colour with its number of entities."""
    items = "".join(
        f'<li><span class="swatch {type_class(kind)}" data-type="{html.escape(kind)}">{html.escape(kind)}</span> <span class="count">{count}</span></li>'
        for kind, count in counts.items()
    )
    return f'<ul class="legend">{items}</ul>'


def render_html(documents: Sequence[tuple[str, Sequence[Span]]], title: str) -> str:
    """One self-contained HTML page: `title`, the legend of all types with counts, then each `(text, spans)` document in its own block."""
    counts = count_types(span for _, spans in documents for span in spans)
    blocks = "\n".join(f'<div class="doc">{marked_text(text, spans)}</div>' for text, spans in documents)
    return (
        "<!DOCTYPE html>\n"
        '<html>\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{CSS}{type_css(counts)}</style>\n</head>\n<body>\n"
        f"<header>\n<h1>{html.escape(title)}</h1>\n{legend(counts)}\n</header>\n<main>\n{blocks}\n</main>\n</body>\n</html>\n"
    )
