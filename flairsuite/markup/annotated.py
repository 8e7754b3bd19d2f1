"""A tokenised text with its entity spans: what the annotation-tool formats (`webanno`, `doccano`, `labelstudio`, `conll`) write.

`predict` builds one from a tagged file (the file's text, Flair's tokens at their offsets in it) and `evaluate`
one from a corpus split (`from_tokens`: tokens joined by spaces, sentences by line breaks). Spans lie on
token boundaries (they come from per-token tags), inside one sentence, sorted and disjoint. No token format can hold a
token with whitespace inside (a word joined across a line end, "Ber-\nlin"): `pieces` cuts it into the pieces of its lines.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flairsuite.markup.spans import Span, check_spans

TokenSpan = tuple[int, int, str, float]  # first token, token after the last, type, confidence
NON_SPACE = re.compile(r"\S+")


def pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """`text[start:end]` cut at its whitespace: a word joined across a line end ("Ber-\nlin") is its lines' pieces."""
    found = [(start + match.start(), start + match.end()) for match in NON_SPACE.finditer(text[start:end])]
    return found or [(start, end)]


@dataclass(frozen=True)
class Annotated:
    """`text`, its sentences as `(start, end)` character offsets of their tokens, and its entity spans (character offsets)."""

    text: str
    sentences: list[list[tuple[int, int]]]
    spans: list[Span]

    def __post_init__(self) -> None:
        check_spans(self.text, self.spans)
        starts = {start for sentence in self.sentences for start, _ in sentence}
        ends = {end for sentence in self.sentences for _, end in sentence}
        for span in self.spans:
            if span.start not in starts or span.end not in ends:
                raise ValueError(f"span {span} does not lie on token boundaries")

    def forms(self) -> list[list[str]]:
        """Every sentence's tokens as they stand in the text."""
        return [[self.text[start:end] for start, end in sentence] for sentence in self.sentences]

    def tags(self) -> list[list[str]]:
        """Every sentence's BIO (IOB2) tags of the spans; tokens outside them "O"."""
        by_start = {span.start: span for span in self.spans}
        tagged, open_span = [], None
        for sentence in self.sentences:
            tags = []
            for start, end in sentence:
                if start in by_start:
                    open_span = by_start[start]
                    tags.append(f"B-{open_span.type}")
                elif open_span is not None and start < open_span.end:
                    tags.append(f"I-{open_span.type}")
                else:
                    open_span = None
                    tags.append("O")
                if open_span is not None and end >= open_span.end:
                    open_span = None
            tagged.append(tags)
        return tagged


def from_tokens(sentences: Sequence[Sequence[str]], spans: Sequence[Sequence[TokenSpan]]) -> Annotated:
    """The text of tokenised sentences (tokens joined by one space, sentences by a line break), with each sentence's
    token spans (`TokenSpan`s) as character spans of that text."""
    parts, offsets, found, position = [], [], [], 0
    for tokens, sentence_spans in zip(sentences, spans):
        sentence = []
        for index, token in enumerate(tokens):
            if index:
                parts.append(" ")
                position += 1
            sentence.append((position, position + len(token)))
            parts.append(token)
            position += len(token)
        for first, after, kind, confidence in sentence_spans:
            found.append(Span(sentence[first][0], sentence[after - 1][1], kind, confidence))
        offsets.append(sentence)
        parts.append("\n")
        position += 1
    return Annotated("".join(parts), offsets, found)
