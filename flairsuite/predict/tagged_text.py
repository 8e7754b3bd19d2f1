"""A tagged text's entity spans and tokens at character offsets of the text the tagger read.

Spans and their confidences are the ones Flair's `predict` attaches: `get_spans_from_bio` over the tags, confidence the
mean of the span's token confidences (a CSE entity's tokens all carry its span confidence, so the mean is that). Their
offsets are Flair's sentence and token start positions in the text the sentences were split from (`char_spans`), mapped
back to the file's characters where that text is a view of them (`Offsets`: a word joined across a line end, "Berlin"
read for "Ber-\\nlin", covers the file's "Ber-\\nlin"). The annotation-tool formats write the tokens too
(`annotated_text`); a whole list of short texts (the blocks of a TEI/XML file) is tagged in one batch by `tag_texts`.
"""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Optional, Protocol

import flair.nn
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.line_ends import reading_view
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.raw_tags import fixed, split, tag
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.markup.annotated import Annotated, pieces
from flairsuite.markup.spans import Span
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import Tagged


class Offsets(Protocol):
    """Where the characters of the text a sentence was split from lie in the file (`FlairView`, `Part`)."""

    def original(self, start: int, end: int) -> tuple[int, int]: ...


def char_spans(text: str, sentences: Sequence[Sentence], tagged: Tagged) -> list[Span]:
    """The spans of the tags (as `sentence_json` reads them) at their character offsets in `text`, the text the sentences were split from."""
    found = []
    for sentence, tags in zip(sentences, tagged):
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            first, last = sentence.tokens[indices[0]], sentence.tokens[indices[-1]]
            start, end = sentence.start_position + first.start_position, sentence.start_position + last.end_position
            if not (text.startswith(first.text, start) and text.endswith(last.text, 0, end)):
                raise FlairsuiteError(f"token offsets do not match the text at character {start}: {first.text!r} .. {last.text!r} (please report this)")
            found.append(Span(start, end, kind, confidence))
    return found


def annotated_text(text: str, view: Offsets, sentences: Sequence[Sentence], tagged: Tagged) -> Annotated:
    """The text with its tokens (Flair's, at their offsets in `text`; a word joined across a line end as the pieces of its
    lines, `pieces`, which no token format can hold whole) and the spans of the tags, as `sentence_json` reads them."""
    offsets, spans = [], []
    for sentence, tags in zip(sentences, tagged):
        base = sentence.start_position
        tokens = [view.original(base + token.start_position, base + token.end_position) for token in sentence]
        offsets.append([piece for token in tokens for piece in pieces(text, *token)])
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            spans.append(Span(tokens[indices[0]][0], tokens[indices[-1]][1], kind, confidence))
    return Annotated(text, offsets, spans)


def tag_texts(
    model: flair.nn.Classifier, texts: Sequence[str], input_path: Path, fast: bool, batch_size: Optional[int], entity_fix: bool,
    join_lines: bool = False, rules: Optional[ReaderRules] = None, run: Optional[Callable[[list[Sentence]], Tagged]] = None,
) -> tuple[list[list[Span]], int, int]:
    """Every text's spans at character offsets in it (one batch for all texts), and the numbers of sentences and tokens;
    no tokens at all: an input error. `join_lines`: words broken at line ends joined (`reading_view`); `rules`: the
    reader rules applied to the tags (and counted there); `run`: the tagging function, when built already (`tagger`)."""
    views = [reading_view(text, join_lines) for text in texts]  # Flair drops zero-width characters: spans are mapped back to `texts`
    per_text = [split(view.text, model_segmentation(model)) for view in views]
    sentences = [sentence for found in per_text for sentence in found]
    if not sentences:
        raise InputError(input_path, None, "no tokens to tag")
    tagged = run(sentences) if run is not None else tag(model, sentences, fast, batch_size)
    tagged = fixed(tagged) if entity_fix else tagged
    spans, position = [], 0
    for text, view, found in zip(texts, views, per_text):
        rows = tagged[position : position + len(found)]
        found_spans = char_spans(view.text, found, rules.apply(found, rows, text, view.original) if rules is not None else rows)
        spans.append([Span(*view.original(s.start, s.end), s.type, s.confidence) for s in found_spans])
        position += len(found)
    return spans, len(sentences), sum(len(s) for s in sentences)
