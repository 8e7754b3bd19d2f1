"""How raw text becomes the tokens a saved tagger was trained on: words (segtok), or one token per character.

A tagger trained on a corpus read one token per character (the registry's `segmentation`: CLUENER)
records `segmentation: characters` in its model card (`flairsuite.models.card`; Flair saves and loads
the card with the model). `predict` and `serve` split raw text by the card: characters are
cut into sentences at sentence-final punctuation and line breaks, and every non-space character is
a token, at its offset in the text; anything else goes through Flair's segtok splitter as before.
"""

import re

from flair.data import Sentence
from flair.splitter import SegtokSentenceSplitter, SentenceSplitter
from flair.tokenization import Tokenizer

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


def split_text(text: str, segmentation: str = "words") -> list[Sentence]:
    """Sentences of `text` with tokens as the model expects them (offsets in `text`); sentences without tokens are dropped."""
    splitter = CharacterSentenceSplitter() if segmentation == "characters" else SegtokSentenceSplitter()
    return [sentence for sentence in splitter.split(text) if len(sentence)]
