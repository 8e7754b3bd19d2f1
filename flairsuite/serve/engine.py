"""The model, loaded once, and how a text becomes entity spans at character offsets of that very text.

Splitting, tagging and Entity-Fix are `flairsuite.inference.raw_tags`'s, reading spans `flairsuite.predict.tagged_text`'s; the text goes through
`reading_view` first (`flairsuite.corpora.line_ends`: Flair's view of it, words broken at a line end joined),
so spans are mapped back to the posted text ("Berlin" tagged in "Ber-\nlin" is a span over "Ber-\nlin").
A document that comes already split (`Tokens`: a CAS's sentences and tokens, `flairsuite.serve.cas`)
is tagged on exactly those tokens, except that the tokens of a word broken at a line end ("Ber-", "lin" or "Ber",
"-", "lin") are tagged as the one joined word; its spans run from the first token's start to the last one's end.
Then the reader rules of `flairsuite.inference.reader_spans` trim and drop spans, as `predict` does. Both are on by
default: `join_lines` and `reader_spans` of `TextTagger` (serve's `--keep-line-ends`, `--keep-raw-spans`) turn them off.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import flair.nn
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.line_ends import broken_words, joined_view, reading_view
from flairsuite.inference.raw_tags import FLAIR_BATCH_SIZE, fixed, flair_tags, split
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.saved_tagger import load_tagger, predicts_spans
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.markup.spans import Span
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import Tagged
from flairsuite.predict.loading import check_spans
from flairsuite.predict.tagged_text import char_spans


@dataclass(frozen=True)
class Tagging:
    """A text's entities at character offsets of the text, and the numbers of sentences and tokens Flair split it into."""

    spans: list[Span]
    sentences: int
    tokens: int


@dataclass(frozen=True)
class Tokens:
    """A text already split: per sentence its tokens as (start, end) character offsets in `text`."""

    text: str
    sentences: list[list[tuple[int, int]]]

    def __len__(self) -> int:
        """Its length in characters, as a text's (the batcher's budget counts characters)."""
        return len(self.text)

    def flair_sentences(self, join: bool = False) -> tuple[list[Sentence], list[list[tuple[int, int]]]]:
        """Flair sentences of the tokens, and each one's token offsets; blank tokens and sentences without tokens are left out
        (`join`: the tokens of a word broken at a line end are one, `merged`). A token's `whitespace_after` is the gap to the
        next one, so a character LM reads the sentence as it is in the text; the sentences are linked in order, as one document."""
        sentences, offsets = [], []
        for tokens in self.sentences:
            kept = [(start, end) for start, end in tokens if self.text[start:end].strip()]
            kept = merged(self.text, kept) if join else kept
            if kept:
                sentence = Sentence([joined_view(self.text[start:end]).text if join else self.text[start:end] for start, end in kept])
                for token, (_, end), (start, _) in zip(sentence.tokens, kept, kept[1:]):
                    token.whitespace_after = start - end  # the gap in the text, as Flair's own tokenisation of a text sets it
                sentence.tokens[-1].whitespace_after = 0
                sentences.append(sentence)
                offsets.append(kept)
        Sentence.set_context_for_sentences(sentences)  # one document: its neighbours are its document context
        return sentences, offsets

    def characters(self) -> "Tokens":
        """The same sentences with one token per non-space character of their tokens (a character-segmented tagger's tokens)."""
        split = [[(i, i + 1) for start, end in tokens for i in range(start, end) if not self.text[i].isspace()] for tokens in self.sentences]
        return Tokens(self.text, split)


def merged(text: str, tokens: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A sentence's tokens, (start, end) in `text`, with those that hold a word broken at a line end (from the letter
    before the hyphen to the one after the break, `broken_words`) made one token."""
    if len(tokens) < 2:
        return tokens
    regions = [(hyphen - 1, after + 1) for hyphen, after in broken_words(text, tokens[0][0], tokens[-1][1])]
    found = [tokens[0]]
    for start, end in tokens[1:]:
        last = found[-1]
        if any(last[0] < high and last[1] > low and start < high and end > low for low, high in regions):
            found[-1] = (last[0], end)
        else:
            found.append((start, end))
    return found


Document = Union[str, Tokens]  # a text to split as `predict` splits it, or one split already


class TextTagger:
    """A saved suite tagger, loaded once: `tag(documents)` tags many texts or `Tokens` in one call (one batch for all their sentences)."""

    def __init__(
        self, model_path: Path, fast: bool = True, batch_size: Optional[int] = None, entity_fix: bool = False, join_lines: bool = True,
        reader_spans: bool = True,
    ) -> None:
        self.model: flair.nn.Classifier = load_tagger(model_path)
        check_spans(self.model, model_path, entity_fix, markup=False)
        self.name = model_path.name
        self.fast = FastTagger(self.model, batch_size=batch_size or BATCH_SIZE) if fast else None
        self.batch_size = batch_size or FLAIR_BATCH_SIZE
        self.entity_fix = entity_fix
        self.spans = predicts_spans(self.model)
        self.segmentation = model_segmentation(self.model)  # words, or characters for a Chinese tagger
        self.join_lines = join_lines
        self.rules = ReaderRules(reader_spans and self.spans)  # its counts add up over the server's life

    def raw_tags(self, sentences: list[Sentence]) -> Tagged:
        """The model's raw tags and confidences (fast path or plain Flair), after Entity-Fix when asked."""
        if not sentences:
            return []
        tagged = self.fast.tag(sentences) if self.fast is not None else flair_tags(self.model, sentences, self.batch_size)
        return fixed(tagged) if self.entity_fix else tagged

    def tag(self, documents: Sequence[Document]) -> list[Tagging]:
        """Every document's spans (sorted, at character offsets of its text) with its sentence and token counts."""
        prepared = [self.split(document) for document in documents]
        tagged = self.raw_tags([sentence for found, _ in prepared for sentence in found])
        results, position = [], 0
        for found, spans_of in prepared:
            rows = tagged[position : position + len(found)]
            position += len(found)
            results.append(Tagging(spans_of(rows) if self.spans else [], len(found), sum(len(sentence) for sentence in found)))
        return results

    def split(self, document: Document) -> tuple[list[Sentence], Callable[[Tagged], list[Span]]]:
        """The document's Flair sentences, and how their tags become spans at character offsets of its text."""
        if isinstance(document, Tokens):
            characters = self.segmentation == "characters"
            found, offsets = (document.characters() if characters else document).flair_sentences(self.join_lines and not characters)
            words = [[token.text for token in sentence] for sentence in found]
            return found, lambda rows: token_spans(offsets, self.rules.apply_tokens(rows, offsets, words, document.text))
        view = reading_view(document, self.join_lines)
        found = split(view.text, self.segmentation)

        def spans_of(rows: Tagged) -> list[Span]:
            rows = self.rules.apply(found, rows, document, view.original)
            return [Span(*view.original(s.start, s.end), s.type, s.confidence) for s in char_spans(view.text, found, rows)]

        return found, spans_of


def token_spans(offsets: list[list[tuple[int, int]]], tagged: Tagged) -> list[Span]:
    """The spans of the tags (as `predict` reads them, `get_spans_from_bio`) from their first token's start to their last one's end."""
    found = []
    for tokens, tags in zip(offsets, tagged):
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            found.append(Span(tokens[indices[0]][0], tokens[indices[-1]][1], kind, confidence))
    return found
