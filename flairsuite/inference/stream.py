"""A text of any length as sentences, window by window, with the sentences `split_text` gives for the whole text.

`text_parts` reads blocks of text (`flairsuite.inference.textfile.chunks`) into a window. Once the window holds
`window` characters it is split (`reading_view`: Flair's view of it, with words broken at line ends joined unless
`join` is off, `flairsuite.corpora.line_ends`; then the model's splitter: the German splitter with the abbreviations
learned from the whole text in a first pass (`text_abbreviations`), or one token per character),
and all sentences but the last `KEEP` are handed on as one `Part`; the window goes on from the end of the boundary
(the whitespace after a sentence, or the character splitter's sentence end) that closed the last sentence handed on.
A sentence split from a window can only differ from the whole text's near the window's end, where the text is cut (the
splitter decides a boundary by the words on both sides of it), so the last sentences wait for the next window, and the split goes on
exactly where the whole text's split starts its next sentence: the parts hold the same sentences at the same offsets.

A window in which `2 * window` characters hold fewer than `KEEP + 1` sentences (a text without sentence ends) is cut
at its last whitespace before `window` characters that is not inside a line-end break (or at `window`) and that piece
split alone; so no sentence is much
longer than `2 * window` characters, and a window holds at most `KEEP + 1` of them plus a block, whatever the text.
The window is split again once it has grown by half a window, so every character is split a bounded number of times. Blank lines need no cut of their
own: the splitter ends a sentence there, and so do the parts.

`linked` links the sentences of consecutive parts as one document, as `split_text` links a whole text's (Flair's
`previous_sentence`/`next_sentence`, which `charlm:…@contextN` reads); a part is handed on once the next one is
linked to it, and its links to the part before are cut after it is done, so that finished parts can be freed.
Document context therefore reaches as far as the neighbouring part (at least `window` characters less the last sentences).
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Optional

from flair.data import Sentence
from flair.splitter import SentenceSplitter

from flairsuite.corpora.line_ends import inside_break, reading_view
from flairsuite.corpora.segmentation import SENTENCE_END, CharacterSentenceSplitter, FlairView
from flairsuite.corpora.sentence_splitter import BOUNDARY, AbbreviationLearner, GermanSentenceSplitter

WINDOW_CHARS = 100_000  # characters split at a time
KEEP = 3  # sentences at a window's end left for the next window
WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Part:
    """The sentences of the file's characters `start` .. `start + len(text)`: `text` as in the file; `view`, the window the
    part was cut from as the tagger reads it (`reading_view`; it may reach past `text`), in which the sentences' offsets lie."""

    start: int
    text: str
    view: FlairView
    sentences: list[Sentence]

    def local(self, start: int, end: int) -> tuple[int, int]:
        """Characters `start:end` of the view as offsets in `text`."""
        return self.view.original(start, end)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Characters `start:end` of the view as offsets in the file."""
        first, last = self.view.original(start, end)
        return self.start + first, self.start + last


@dataclass(frozen=True)
class Segmenter:
    """A model's sentence splitter, the pattern of the text that ends its sentences, and whether line-end breaks are joined."""

    splitter: SentenceSplitter
    boundary: Any  # a compiled `re` or `regex` pattern
    join: bool = True

    @staticmethod
    def of(segmentation: str, join: bool = True, abbreviations: Iterable[str] = ()) -> "Segmenter":
        """The German splitter for words, with the abbreviations learned from the whole text beforehand
        (`text_abbreviations`: a window alone would learn other ones), the character splitter for characters."""
        if segmentation == "characters":
            return Segmenter(CharacterSentenceSplitter(), SENTENCE_END, join)
        return Segmenter(GermanSentenceSplitter(abbreviations, learn=False), BOUNDARY, join)

    def view(self, text: str) -> FlairView:
        """The text as the tagger reads it (`reading_view`)."""
        return reading_view(text, self.join)

    def split(self, text: str) -> list[Sentence]:
        """The sentences of `text` that hold tokens."""
        return [sentence for sentence in self.splitter.split(text) if len(sentence)]

    def restart(self, text: str, sentence: Sentence) -> int:
        """Where the split of `text` starts the sentence after `sentence`: the end of the boundary that closes it."""
        end = sentence.start_position + sentence.tokens[-1].end_position
        for found in self.boundary.finditer(text, sentence.start_position):
            if found.end() >= end:
                return found.end()
        return end


def whole(text: str, start: int, segmenter: Segmenter) -> Part:
    """`text`, starting at character `start` of the file, split as a whole."""
    view = segmenter.view(text)
    return Part(start, text, view, segmenter.split(view.text))


def cut(text: str, start: int, segmenter: Segmenter, window: int) -> Optional[Part]:
    """The part of a full window `text` (at character `start`) that no later text can change (module docstring), or
    None where the window holds too few sentences to tell and is not yet `2 * window` characters long."""
    view = segmenter.view(text)
    sentences = segmenter.split(view.text)
    if len(sentences) > KEEP:
        kept = sentences[:-KEEP]
        end = view.original(segmenter.restart(view.text, kept[-1]), len(view.text))[0]
        return Part(start, text[:end], view, kept)
    if len(text) < 2 * window:
        return None
    spaces = (found.start() for found in WHITESPACE.finditer(text, window // 2, window))
    space = max((position for position in spaces if not (segmenter.join and inside_break(text, position))), default=window - 1)
    return whole(text[: space + 1], start, segmenter)


def text_abbreviations(chunks: Iterable[str], join: bool = True) -> frozenset[str]:
    """The abbreviations the German splitter learns from the whole text given as `chunks` (read as `reading_view` reads
    it), for `text_parts`: the first of two passes over a file, in bounded memory."""
    learner = AbbreviationLearner()
    for chunk in chunks:
        learner.feed(reading_view(chunk, join).text)
    learner.close()
    return learner.abbreviations()


def text_parts(
    chunks: Iterable[str], segmentation: str = "words", window: int = WINDOW_CHARS, join: bool = True, abbreviations: Iterable[str] = ()
) -> Iterator[Part]:
    """The parts of the text given as `chunks`, in order; together they cover it, and hold the sentences `split_text`
    finds in its `reading_view` (those without tokens dropped; `join`: words broken at line ends joined; `abbreviations`:
    those `text_abbreviations` learned from the same text, which `split_text` learns from a whole text), their offsets
    in the views (`Part.original`: in the text)."""
    segmenter = Segmenter.of(segmentation, join, abbreviations)
    pending, start, due = "", 0, window
    for chunk in chunks:
        pending += chunk
        if len(pending) < due:
            continue
        part = cut(pending, start, segmenter, window)
        if part is not None:
            yield part
            pending, start = pending[len(part.text) :], start + len(part.text)
        due = max(window, min(len(pending) + window // 2, 2 * window))  # half a window more, up to the forced cut
    if pending:
        yield whole(pending, start, segmenter)


def link(before: Optional[Sentence], after: Optional[Sentence]) -> None:
    """Make `after` the sentence after `before` (either may be None: nothing to link)."""
    if before is not None and after is not None:
        before._next_sentence, after._previous_sentence = after, before


def unlink(before: Optional[Sentence], after: Optional[Sentence]) -> None:
    """Cut the link between two sentences."""
    if before is not None and after is not None:
        before._next_sentence, after._previous_sentence = None, None


def linked(parts: Iterable[Part]) -> Iterator[Part]:
    """The parts in order, their sentences linked as one document (module docstring); parts without sentences pass as they are."""
    previous: Optional[Part] = None  # the part handed on before `held`
    held: Optional[Part] = None  # the last part with sentences, handed on once the next one is linked to it
    after: list[Part] = []  # the parts without sentences read after `held`
    for part in parts:
        if not part.sentences:
            if held is None:
                yield part
            else:
                after.append(part)
            continue
        Sentence.set_context_for_sentences(part.sentences)
        if held is not None:
            link(held.sentences[-1], part.sentences[0])
            yield held
            yield from after
            if previous is not None:
                unlink(previous.sentences[-1], held.sentences[0])
            previous = held
        held, after = part, []
    if held is not None:
        yield held
    yield from after
