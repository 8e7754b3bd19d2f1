"""How raw text becomes the tokens a saved tagger was trained on: words (segtok's tokens), or one token per character.

A tagger trained on a corpus read one token per character (the registry's `segmentation`: CLUENER)
records `segmentation: characters` in its model card (`flairsuite.models.card`; Flair saves and loads
the card with the model). `predict` and `serve` split raw text by the card: characters are
cut into sentences at sentence-final punctuation and line breaks, and every non-space character is
a token, at its offset in the text; anything else is cut into sentences by `GermanSentenceSplitter`
(`flairsuite.corpora.sentence_splitter`: dates, Roman numerals, initials and abbreviations stay inside a sentence,
issue 74; before, Flair's `SegtokSentenceSplitter`) and tokenised by Flair's segtok tokenizer, as before.

Flair's `Sentence` drops zero-width characters and restores C1 controls as Windows-1252 before
tokenising, so token offsets would drift after such a character: `flair_view` applies the same change
itself and keeps where every character came from, so that `predict` and `serve` map spans back to the
text they were given.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from flair.data import Sentence
from flair.splitter import SentenceSplitter
from flair.tokenization import Tokenizer

from flairsuite.corpora.sentence_splitter import GermanSentenceSplitter

SENTENCE_END = re.compile(r"[^。！？!?；;…\n]*(?:[。！？!?；;…]+[”’」』）)]*|\n|$)")


class CharacterTokenizer(Tokenizer):
    """Every non-space character is a token (Flair finds each one's offset in the text)."""

    def tokenize(self, text: str) -> list[str]:
        return [char for char in text if not char.isspace()]


class CharacterSentenceSplitter(SentenceSplitter):
    """Sentences end after 。！？!?；;… (with closing quotes and brackets) and at line breaks; tokens are characters."""

    def __init__(self) -> None:
        super().__init__()
        self._tokenizer = CharacterTokenizer()

    def _perform_split(self, text: str) -> list[Sentence]:
        sentences = []
        for match in SENTENCE_END.finditer(text):
            piece = match.group()
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                sentences.append(Sentence(piece.strip(), use_tokenizer=self._tokenizer, start_position=match.start() + lead))
        return sentences


def split_text(text: str, segmentation: str = "words", abbreviations: Iterable[str] = ()) -> list[Sentence]:
    """Sentences of `text` with tokens as the model expects them (offsets in `text`); sentences without tokens are dropped.
    They are linked in order as one document (Flair's `set_context_for_sentences`): an embedding that reads document
    context (`charlm:…@contextN`) reads each with its neighbours in the text.

    Words: `GermanSentenceSplitter` with the abbreviations it learns from `text` and those given (e.g.
    `learn_abbreviations` over a corpus); its numbers against Flair's segtok splitter: benchmarks/README.md."""
    splitter = CharacterSentenceSplitter() if segmentation == "characters" else GermanSentenceSplitter(abbreviations)
    found = [sentence for sentence in splitter.split(text) if len(sentence)]
    Sentence.set_context_for_sentences(found)
    return found


PROBLEM_CHARACTERS = re.compile("[\u200b\u200c\ufe0f\ufeff\u2028\u2029\u0080-\u0099]")  # what Sentence._handle_problem_characters changes


@dataclass(frozen=True)
class FlairView:
    """A text as Flair's Sentence sees it, and for each of its characters (and its end) the offset in the original."""

    text: str
    origin: Optional[list[int]]  # None: the same as the original

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Characters `start:end` of the view as offsets in the original text."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def flair_view(text: str) -> FlairView:
    """`text` with the characters Flair drops removed and those it restores replaced, as Flair's own function does them."""
    if not PROBLEM_CHARACTERS.search(text):
        return FlairView(text, None)
    parts, origin = [], []
    for position, char in enumerate(text):
        replaced = Sentence._handle_problem_characters(char) if PROBLEM_CHARACTERS.match(char) else char
        parts.append(replaced)
        origin.extend([position] * len(replaced))
    origin.append(len(text))
    return FlairView("".join(parts), origin)
