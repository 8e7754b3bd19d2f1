"""The shared span model: entities as character offsets in a text, and markup inserted around offset ranges."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """An entity: `text[start:end]` (character offsets, end exclusive) of `type`, with the tagger's confidence."""

    start: int
    end: int
    type: str
    confidence: float


@dataclass(frozen=True)
class Wrap:
    """Markup around `text[start:end]`: `open` before it, `close` after it; `depth` 0 for the outermost level."""

    start: int
    end: int
    open: str
    close: str
    depth: int = 0


def check_spans(text: str, spans: Sequence[Span]) -> None:
    """Raise ValueError unless the spans are non-empty, inside the text, sorted and non-overlapping."""
    previous_end = 0
    for span in spans:
        if not 0 <= span.start < span.end <= len(text):
            raise ValueError(f"span {span} is empty or outside a text of {len(text)} characters")
        if span.start < previous_end:
            raise ValueError(f"span {span} overlaps the one before it or comes before it")
        previous_end = span.end


def count_types(spans: Iterable[Span]) -> dict[str, int]:
    """The number of spans of each type, types sorted."""
    counts: dict[str, int] = {}
    for span in spans:
        counts[span.type] = counts.get(span.type, 0) + 1
    return dict(sorted(counts.items()))


def inside(span: Span, ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether the span lies within one of the sorted, disjoint `(start, end)` ranges."""
    low, high = 0, len(ranges)
    while low < high:  # the last range that starts at or before the span
        middle = (low + high) // 2
        if ranges[middle][0] <= span.start:
            low = middle + 1
        else:
            high = middle
    return low > 0 and span.end <= ranges[low - 1][1]


def wrap_text(text: str, wraps: Iterable[Wrap], escape: Callable[[str], str] = str) -> str:
    """`text` with every wrap's markup inserted and the text between them passed through `escape`.

    Wraps must nest properly (the caller's job). At one offset, closing tags come first, the deepest first;
    then opening tags, the outermost first, so `</a></p><p><a>` stays well-formed.
    """
    inserts = []
    for wrap in wraps:
        inserts.append((wrap.end, 0, -wrap.depth, wrap.close))
        inserts.append((wrap.start, 1, wrap.depth, wrap.open))
    inserts.sort(key=lambda insert: insert[:3])
    parts, position = [], 0
    for offset, _, _, markup in inserts:
        parts.append(escape(text[position:offset]))
        parts.append(markup)
        position = offset
    parts.append(escape(text[position:]))
    return "".join(parts)
