"""Character-offset entity spans onto the tokens of a text: the rules the readers of annotation exports share (webanno, jsonl).

The rules, each counted by its key in the reader's repairs (shown by `corpora stats`):

- A span edge on whitespace moves to the nearest non-space character inside the span (`span edge on whitespace
  trimmed`); a span of whitespace only is dropped (`span of whitespace only dropped`).
- Overlapping spans (stacked annotations, nested entities) cannot be flat BIO. The rule is CLUENER's
  (`readers.read_spans_json`): spans in order of start, the longer first at the same start; a span overlapping one
  already kept is dropped. Counted: `overlapping span dropped`, and `overlapping span kept` once for each kept span
  that another overlapped.
- A span edge inside a token splits that token there (`token split at a span edge`): the parts are tokens, with no
  whitespace between them.
- A span that runs from one sentence into the next joins those sentences (`sentences joined: a span crosses their end`).
- A span over characters no token holds (none of the file's tokens) is dropped (`span over no token dropped`).
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from flairsuite.corpora.readers import TaggedSentence

OVERLAP_DROPPED = "overlapping span dropped"
OVERLAP_KEPT = "overlapping span kept"
TRIMMED = "span edge on whitespace trimmed"
BLANK_SPAN = "span of whitespace only dropped"
TOKEN_SPLIT = "token split at a span edge"
JOINED = "sentences joined: a span crosses their end"
NO_TOKEN = "span over no token dropped"


@dataclass(frozen=True)
class CharSpan:
    """An entity of `type` over characters `start:end` (end exclusive) of a text; `line`: where the file holds it."""

    start: int
    end: int
    type: str
    line: Optional[int] = None


@dataclass(frozen=True)
class CharToken:
    """A token over characters `start:end` of a text, and the file line it came from."""

    start: int
    end: int
    line: Optional[int] = None


def trimmed(text: str, spans: Sequence[CharSpan], repairs: Counter) -> list[CharSpan]:
    """`spans` with edges on whitespace moved inside; spans of whitespace only dropped (both counted)."""
    kept = []
    for span in spans:
        start, end = span.start, span.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start == end:
            repairs[BLANK_SPAN] += 1
            continue
        if (start, end) != (span.start, span.end):
            repairs[TRIMMED] += 1
        kept.append(CharSpan(start, end, span.type, span.line))
    return kept


def flat(spans: Sequence[CharSpan], repairs: Counter) -> list[CharSpan]:
    """The spans flat BIO can hold, by the overlap rule of the module docstring (counted), in text order."""
    kept: list[CharSpan] = []
    overlapped: set[int] = set()
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        hit = next((i for i, other in enumerate(kept) if span.start < other.end and other.start < span.end), None)
        if hit is None:
            kept.append(span)
            continue
        repairs[OVERLAP_DROPPED] += 1
        overlapped.add(hit)
    if overlapped:
        repairs[OVERLAP_KEPT] += len(overlapped)
    return kept


def _split_at_edges(tokens: list[CharToken], edges: set[int], repairs: Counter) -> list[CharToken]:
    out = []
    for token in tokens:
        cuts = sorted(edge for edge in edges if token.start < edge < token.end)
        bounds = [token.start, *cuts, token.end]
        if cuts:
            repairs[TOKEN_SPLIT] += len(cuts)
        out.extend(CharToken(a, b, token.line) for a, b in zip(bounds, bounds[1:]))
    return out


def _joined(sentences: list[list[CharToken]], spans: Sequence[CharSpan], repairs: Counter) -> list[list[CharToken]]:
    """Sentences with those a span crosses the end of merged (counted once per end crossed)."""
    ends = [sentence[-1].end for sentence in sentences]
    starts = [sentence[0].start for sentence in sentences]
    crossed = set()
    for span in spans:
        for index in range(len(sentences) - 1):
            if span.start < ends[index] and span.end > starts[index + 1]:
                crossed.add(index)
    if crossed:
        repairs[JOINED] += len(crossed)
    merged: list[list[CharToken]] = []
    for index, sentence in enumerate(sentences):
        if index - 1 in crossed:
            merged[-1].extend(sentence)
        else:
            merged.append(list(sentence))
    return merged


def tagged_sentences(text: str, sentences: Sequence[Sequence[CharToken]], spans: Sequence[CharSpan], repairs: Counter) -> list[TaggedSentence]:
    """BIO-tagged sentences of `text` from its tokens (grouped in sentences, in text order) and entity spans, by the rules above."""
    sentences = [list(sentence) for sentence in sentences if sentence]
    if not sentences:
        return []
    spans = flat(trimmed(text, spans, repairs), repairs)
    edges = {edge for span in spans for edge in (span.start, span.end)}
    sentences = [_split_at_edges(sentence, edges, repairs) for sentence in sentences]
    sentences = _joined(sentences, spans, repairs)
    result, tagged_spans = [], set()
    following = [sentence[0].start for sentence in sentences[1:]] + [len(text) + 1]
    ordered, cursor = sorted(spans, key=lambda s: s.start), 0
    for sentence, next_start in zip(sentences, following):
        out = TaggedSentence()
        for index, token in enumerate(sentence):
            while cursor < len(ordered) and ordered[cursor].end <= token.start:
                cursor += 1
            span = ordered[cursor] if cursor < len(ordered) and ordered[cursor].start <= token.start else None
            tag = "O"
            if span is not None:
                tag = f"{'I' if cursor in tagged_spans else 'B'}-{span.type}"
                tagged_spans.add(cursor)
            after = sentence[index + 1].start if index + 1 < len(sentence) else next_start
            out.add(text[token.start : token.end], tag, token.line, after > token.end)
        result.append(out)
    if len(ordered) > len(tagged_spans):
        repairs[NO_TOKEN] += len(ordered) - len(tagged_spans)
    return result
