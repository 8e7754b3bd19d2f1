"""JSON Lines of texts and their entity spans as doccano imports them for sequence labeling: one object per text and line,
`{"text": "...", "label": [[start, end, "TYPE"], ...]}`, offsets in characters (Unicode code points) of the text, end exclusive."""

import json
from collections.abc import Iterable

from flairsuite.markup.annotated import Annotated


def doccano_jsonl(documents: Iterable[Annotated]) -> str:
    """One doccano line per document."""
    lines = []
    for document in documents:
        labels = [[span.start, span.end, span.type] for span in document.spans]
        lines.append(json.dumps({"text": document.text, "label": labels}, ensure_ascii=False) + "\n")
    return "".join(lines)
