"""The writers of `predict`'s formats, part by part, and those of the plain and the markup formats.

A plain text is tagged in parts (`plain_text`); each format's writer (`Output`) gives the text of each tagged part as it
comes, in file order, and what follows the last at the end, so that the output of a part is written before the next is
read. `column` (token TAB tag, a blank line between sentences) and `json` (a line per sentence: text, tokens, tags and
spans, offsets in the file) are written part by part; `tei` and `html` of a plain text hold the text and its spans
until the end, where the document is made (`flairsuite.markup.tei`, `flairsuite.markup.html`). The annotation-tool
formats are `annotation_outputs`.
"""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from flair.data import Sentence, get_spans_from_bio

from flairsuite.inference.stream import Part
from flairsuite.markup.html import render_html
from flairsuite.markup.spans import Span
from flairsuite.markup.tei import Markup, tei_document
from flairsuite.markup.typemap import TypeMap
from flairsuite.models.crf import Tagged
from flairsuite.predict.tagged_text import Offsets, char_spans


def column_block(sentence: Sentence, tags: list[tuple[str, float]]) -> str:
    """A sentence's lines of token TAB tag."""
    return "\n".join(f"{token.text}\t{tag}" for token, (tag, _) in zip(sentence, tags))


def sentence_json(sentence: Sentence, tags: list[tuple[str, float]], spans: bool, view: Offsets) -> dict[str, Any]:
    """One sentence: its text, tokens, tags and spans (token indices end-exclusive, character offsets in the file;
    `view`: the text the sentence was split from, as Flair sees it, whose offsets map back to the file's)."""
    offset = sentence.start_position
    found = []
    for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]) if spans else []:
        first, last = sentence.tokens[indices[0]], sentence.tokens[indices[-1]]
        start, end = view.original(offset + first.start_position, offset + last.end_position)
        found.append({"start": indices[0], "end": indices[-1] + 1, "start_char": start, "end_char": end, "type": kind, "confidence": round(confidence, 4)})
    return {
        "text": sentence.to_original_text(),
        "start_char": view.original(offset, offset + 1)[0],
        "tokens": [token.text for token in sentence],
        "tags": [t for t, _ in tags],
        "spans": found,
    }


class Output:
    """A format written part by part: `part` gives the text of a tagged part (file order), `end` what follows the last."""

    def part(self, part: Part, tagged: Tagged) -> str:
        raise NotImplementedError

    def end(self) -> Iterable[str]:
        return []

    started = False  # whether a sentence was written


class ColumnOutput(Output):
    """`column`: token TAB tag, a blank line between sentences."""

    def part(self, part: Part, tagged: Tagged) -> str:
        blocks = [column_block(sentence, tags) for sentence, tags in zip(part.sentences, tagged)]
        if not blocks:
            return ""
        text = ("\n\n" if self.started else "") + "\n\n".join(blocks)
        self.started = True
        return text

    def end(self) -> Iterable[str]:
        return ["\n"] if self.started else []


class JsonOutput(Output):
    """`json`: a line per sentence, offsets in the file."""

    def __init__(self, spans: bool) -> None:
        self.spans = spans

    def part(self, part: Part, tagged: Tagged) -> str:
        return "".join(json.dumps(sentence_json(s, tags, self.spans, part), ensure_ascii=False) + "\n" for s, tags in zip(part.sentences, tagged))


class MarkupOutput(Output):
    """`tei` and `html` of a plain text: the text and its spans (file offsets) gathered, the document written at the end."""

    def __init__(self, fmt: str, input_path: Path, type_map: TypeMap) -> None:
        self.fmt, self.input_path, self.type_map = fmt, input_path, type_map
        self.texts: list[str] = []
        self.spans: list[Span] = []
        self.marked: Optional[Markup] = None

    def part(self, part: Part, tagged: Tagged) -> str:
        self.texts.append(part.text)
        self.spans.extend(Span(*part.original(s.start, s.end), s.type, s.confidence) for s in char_spans(part.view.text, part.sentences, tagged))
        return ""

    def end(self) -> Iterable[str]:
        text = "".join(self.texts)
        self.texts = []
        if self.fmt == "html":
            self.marked = Markup(render_html([(text, self.spans)], self.input_path.name), len(self.spans), 0)
        else:
            self.marked = tei_document(text, self.spans, self.input_path, self.type_map)
        return [self.marked.text]
