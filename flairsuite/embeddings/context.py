"""Document context for a character LM (`charlm:NAME-DIRECTION@contextN`): each sentence read inside its document.

FLERT (Schweter and Akbik 2020) lets a transformer read a sentence with the sentences around it and cuts the
sentence's vectors out of that run. Here a character LM does the same: it reads up to N characters of the
neighbouring sentences of the same document (their texts joined by a space, as the tokens of one sentence are) and
the sentence, and each token's vector is the LM's state at the token's place in that run. A forward LM's states at a
sentence depend on what comes before it only, a backward LM's on what comes after it only, so each reads the side its
states depend on (the other side would not change them): the sentence's vectors are those of one LM run over the
neighbour text before, the sentence and the neighbour text after.

Neighbours are Flair's own links between sentences, as `TransformerEmbeddings(use_context=...)` reads them:
`Sentence.previous_sentence()` / `next_sentence()`, set by a Flair corpus, by `Sentence.set_context_for_sentences`
(`predict` and `serve` link the sentences of each input text), or by `LabeledSplit.flair_sentences` (the
suite's corpora: a document is what a `-DOCSTART-` line begins, one file of a split of several, or else the whole
file in its order). A walk stops at the end of the links and at a sentence marked `is_document_boundary` (Flair's
`-DOCSTART-` sentences): context never crosses a document boundary. A sentence without links reads no context.
"""

import re
from collections.abc import Iterator
from typing import Any, Optional

import torch
from flair.data import Sentence
from flair.embeddings import FlairEmbeddings
from flair.embeddings.base import register_embeddings

from flairsuite.embeddings.broken_words import Words, read_words, words_text

CONTEXT_OPTION = re.compile(r"context([1-9][0-9]*)")
OPTIONS_HELP = "the option is @contextN (N characters of the neighbouring sentences on each side), e.g. charlm:de-forward@context500"


def context_chars(options: list[str]) -> int:
    """N of `@contextN` among `options` (0 without it); a ValueError for any other option or a repeated one."""
    found = []
    for option in options:
        match = CONTEXT_OPTION.fullmatch(option)
        if match is None:
            raise ValueError(f"unknown option '@{option}': {OPTIONS_HELP}")
        found.append(int(match.group(1)))
    if len(found) > 1:
        raise ValueError(f"give @contextN once: {OPTIONS_HELP}")
    return found[0] if found else 0


def joined_words(embedding: FlairEmbeddings, sentence: Sentence) -> Optional[Words]:
    """The words of `sentence` with its cut words whole (`broken_words`) where `embedding` reads line-end breaks joined
    (`join_breaks`: `flairsuite.embeddings.joined`) and the sentence has any; None: it is read token by token."""
    return read_words(sentence) if getattr(embedding, "join_breaks", False) else None


def sentence_text(embedding: FlairEmbeddings, sentence: Sentence) -> str:
    """The string Flair's `FlairEmbeddings` feeds its LM for `sentence` (before markers and reversal); an embedding that
    joins line-end breaks reads each cut word whole."""
    words = joined_words(embedding, sentence)
    if words is not None:
        text = words_text(words, embedding.tokenized_lm)
    else:
        text = sentence.to_tokenized_string() if embedding.tokenized_lm else sentence.to_plain_string()
    return text.lower() if embedding.is_lower else text


def separator(embedding: FlairEmbeddings) -> str:
    """Between two sentences of a document: a space, as between tokens (none for an LM of text without spaces)."""
    return " " if embedding.tokenized_lm else ""


def neighbours(sentence: Sentence, forward: bool) -> Iterator[Sentence]:
    """The sentences after (`forward`) or before `sentence` in its document, nearest first."""
    current: Optional[Sentence] = sentence
    while True:
        current = current.next_sentence() if forward else current.previous_sentence()
        if current is None or current.is_document_boundary:
            return
        yield current


def side(embedding: FlairEmbeddings, sentence: Sentence, chars: int, after: bool) -> str:
    """Up to `chars` characters of the document next to `sentence` (after it, or before it), with the separator between
    them and the sentence counted in; "" without neighbours."""
    gap = separator(embedding)
    pieces: list[str] = []
    length = 0
    for neighbour in neighbours(sentence, after):
        pieces.append(sentence_text(embedding, neighbour))
        length += len(pieces[-1]) + len(gap)
        if length >= chars:
            break
    if not pieces:
        return ""
    if after:
        return (gap + gap.join(pieces))[:chars]
    return (gap.join(reversed(pieces)) + gap)[-chars:]


def context_text(embedding: FlairEmbeddings, sentence: Sentence, chars: int) -> tuple[str, str]:
    """(before, after): the context the LM reads around `sentence`, only the side its states depend on."""
    if embedding.is_forward_lm:
        return side(embedding, sentence, chars, after=False), ""
    return "", side(embedding, sentence, chars, after=True)


def token_offsets(embedding: FlairEmbeddings, sentence: Sentence, forward: int, backward: int) -> list[int]:
    """Per token, the index of its vector in the LM's states (Flair's loop), the sentence starting at index `forward`
    of the forward LM's string and ending before index `backward` of the backward LM's (each counted with its marker).
    Where the embedding reads a cut word whole (`joined_words`), each of its tokens gets the word's index."""
    words = joined_words(embedding, sentence)
    if words is None:
        return word_offsets(embedding, [(token.text, token.whitespace_after) for token in sentence.tokens], forward, backward)
    found = word_offsets(embedding, list(zip(words.texts, words.spaces)), forward, backward)
    return [found[owner] for owner in words.owners]


def word_offsets(embedding: FlairEmbeddings, words: list[tuple[str, int]], forward: int, backward: int) -> list[int]:
    """Flair's loop of `token_offsets` over (text, whitespace after) pairs: the words the LM reads."""
    shift = 0 if embedding.with_whitespace else 1
    found = []
    for text, space in words:
        forward += len(text)
        found.append((forward if embedding.is_forward_lm else backward) - shift)
        if embedding.tokenized_lm or space > 0:
            forward += 1
            backward -= 1
        backward -= len(text)
    return found


def start_marker(embedding: FlairEmbeddings) -> str:
    """What Flair puts before every string it feeds the LM."""
    return embedding.lm.document_delimiter if "document_delimiter" in embedding.lm.__dict__ else "\n"


def read_in_context(embedding: FlairEmbeddings, sentences: list[Sentence], chars: int) -> list[tuple[str, list[int]]]:
    """Per sentence, the string the LM reads (context, sentence, context; before the markers and reversal) and the
    indices of its tokens' vectors in the LM's states over that string with the markers."""
    start = len(start_marker(embedding))
    found = []
    for sentence in sentences:
        text = sentence_text(embedding, sentence)
        before, after = context_text(embedding, sentence, chars) if chars else ("", "")
        offsets = token_offsets(embedding, sentence, start + len(before), start + len(after) + len(text))
        found.append((before + text + after, offsets))
    return found


@register_embeddings
class ContextFlairEmbeddings(FlairEmbeddings):
    """`FlairEmbeddings` whose LM reads each sentence with up to `context_chars` characters of its document around it.

    Saved with `context_chars` (and `with_whitespace`, which Flair's own `to_params` drops) inside the tagger: a process
    that loads it needs `import flairsuite.embeddings` (or `flairsuite predict`) so that Flair knows the class."""

    def __init__(self, model: Any, context_chars: int, **kwargs: Any) -> None:
        self.context_chars = context_chars  # read by the dummy embedding in Flair's __init__
        super().__init__(model, **kwargs)

    def to_params(self) -> dict[str, Any]:
        return {**super().to_params(), "with_whitespace": self.with_whitespace, "context_chars": self.context_chars}

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        read = read_in_context(self, sentences, self.context_chars)
        with torch.enable_grad() if self.fine_tune else torch.no_grad():
            states = self.lm.get_representation([text for text, _ in read], start_marker(self), " ", self.chars_per_chunk)
            if not self.fine_tune:
                states = states.detach()
            for column, (sentence, (_, offsets)) in enumerate(zip(sentences, read)):
                for token, offset in zip(sentence.tokens, offsets):
                    token.set_embedding(self.name, states[offset, column, :])
        return sentences
