"""WebAnno TSV 3.3, the format INCEpTION and WebAnno import, with one span layer: DKPro's NamedEntity (features identifier, value).

As INCEpTION writes it (its `Tsv3XSerializer`): the format line, the layer line, a blank line; then per sentence a blank
line, one `#Text=` line per line of the sentence's text (control characters and backslashes escaped) and one row per
token, `sentence-token<TAB>begin-end<TAB>form<TAB>identifier<TAB>value<TAB>`. Offsets count UTF-16 code units (Java's
string offsets) in the document text. A token outside every entity has `_` in both columns; an entity's tokens have `*`
(no identifier) and its type (reserved characters `\\ [ ] | _ -> ; * TAB LF` escaped with a backslash), and a span of
several tokens carries the same number in brackets on each of them, e.g. `*[3]` and `LOC[3]`.
"""

import re
from bisect import bisect_left
from collections.abc import Sequence

from flairsuite.markup.annotated import Annotated
from flairsuite.markup.spans import Span

FORMAT_LINE = "#FORMAT=WebAnno TSV 3.3"
LAYER = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
LAYER_LINE = f"#T_SP={LAYER}|identifier|value"
NO_ANNOTATION, NO_VALUE = "_", "*"

VALUE_ESCAPES = {"\\": "\\\\", "[": "\\[", "]": "\\]", "|": "\\|", "_": "\\_", "->": "\\->", ";": "\\;", "\t": "\\t", "\n": "\\n", "*": "\\*"}
TEXT_ESCAPES = {
    **{chr(code): "\\" + chr(code) for code in range(32) if not 7 < code < 14},
    "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\b": "\\b", "\\": "\\\\",
}
VALUE_PATTERN = re.compile("|".join(re.escape(key) for key in sorted(VALUE_ESCAPES, key=len, reverse=True)))
TEXT_PATTERN = re.compile("|".join(re.escape(key) for key in TEXT_ESCAPES))


def escape_value(value: str) -> str:
    """A feature value with the format's reserved characters escaped."""
    return VALUE_PATTERN.sub(lambda found: VALUE_ESCAPES[found.group()], value)


def escape_text(text: str) -> str:
    """One line of a sentence's text for its `#Text=` line."""
    return TEXT_PATTERN.sub(lambda found: TEXT_ESCAPES[found.group()], text)


def utf16_offsets(text: str) -> list[int]:
    """For every character offset of `text` (and its end), the offset in UTF-16 code units."""
    offsets, position = [], 0
    for char in text:
        offsets.append(position)
        position += 2 if ord(char) > 0xFFFF else 1
    offsets.append(position)
    return offsets


def webanno_tsv(document: Annotated) -> str:
    """The document in WebAnno TSV 3.3 with its spans as NamedEntity annotations (see the module docstring)."""
    utf16 = utf16_offsets(document.text)
    cells: dict[int, tuple[str, str]] = {}  # token start -> (identifier, value)
    token_starts = sorted(start for sentence in document.sentences for start, _ in sentence)
    number = 0
    for span in document.spans:
        covered = token_starts[bisect_left(token_starts, span.start) : bisect_left(token_starts, span.end)]
        suffix = ""
        if len(covered) > 1:
            number += 1
            suffix = f"[{number}]"
        for start in covered:
            cells[start] = (NO_VALUE + suffix, escape_value(span.type) + suffix)
    lines = [FORMAT_LINE, LAYER_LINE, ""]
    for index, sentence in enumerate(document.sentences, 1):
        lines.append("")
        covered_text = document.text[sentence[0][0] : sentence[-1][1]]
        lines.extend("#Text=" + escape_text(line) for line in covered_text.split("\n"))
        for position, (start, end) in enumerate(sentence, 1):
            identifier, value = cells.get(start, (NO_ANNOTATION, NO_ANNOTATION))
            lines.append(f"{index}-{position}\t{utf16[start]}-{utf16[end]}\t{document.text[start:end]}\t{identifier}\t{value}\t")
    return "\n".join(lines) + "\n"


def one_document(documents: Sequence[Annotated], separator: str = "\n\n") -> Annotated:
    """Several documents as one, their texts joined by `separator` and their offsets moved on: a WebAnno TSV file holds one
    document (INCEpTION imports a file as one), so several texts go into one file this way (`suggest`'s units)."""
    texts, sentences, spans, position = [], [], [], 0
    for number, document in enumerate(documents):
        if number:
            texts.append(separator)
            position += len(separator)
        sentences.extend([(start + position, end + position) for start, end in sentence] for sentence in document.sentences)
        spans.extend(Span(span.start + position, span.end + position, span.type, span.confidence) for span in document.spans)
        texts.append(document.text)
        position += len(document.text)
    return Annotated("".join(texts), sentences, spans)
