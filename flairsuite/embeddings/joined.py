"""Character LMs that read words cut at line ends whole: `JoinedFlairEmbeddings`.

A corpus read with `line_break` (`flairsuite.corpora.break_marks`: HIPE's hyphen tokens flagged `EndOfLine`) keeps `Ber`
`¬` `lin` as three tokens with their labels. A tagger trained on it reads the sentence through LMs that see "Berlin": the
LM's string holds each cut word whole (`broken_words`), and every token of the word gets the word's vector (forward:
the state after its last character and the space after it, backward: before its first), as Flair gives a token its own.
A sentence without marks reads exactly as with Flair's `FlairEmbeddings`, `@contextN` included (the neighbouring
sentences are read with their cut words whole too).

`JoinedFlairEmbeddings` is `ContextFlairEmbeddings` (`context.py`, N = 0 without `@contextN`) with `join_breaks`; a tagger
saves it with its LM, and a process that loads the tagger needs `import flairsuite.embeddings` (or `flairsuite predict`,
`evaluate`) so that Flair knows the class. `joined_reading` turns a loaded `FlairEmbeddings` into one (the same LM, name
and reading); `with_joined_breaks` does so for every character LM of a (stacked) embedding, in place.
"""

from typing import Any

from flair.embeddings import FlairEmbeddings, StackedEmbeddings, TokenEmbeddings
from flair.embeddings.base import register_embeddings

from flairsuite.embeddings.context import ContextFlairEmbeddings


@register_embeddings
class JoinedFlairEmbeddings(ContextFlairEmbeddings):
    """`FlairEmbeddings` whose LM reads each word cut at a line end whole (module docstring), with up to `context_chars`
    characters of the document around the sentence (0: none)."""

    join_breaks = True

    def __init__(self, model: Any, context_chars: int = 0, **kwargs: Any) -> None:
        super().__init__(model, context_chars, **kwargs)


def joined_reading(embedding: FlairEmbeddings) -> JoinedFlairEmbeddings:
    """`embedding` reading line-end breaks joined: the same LM object, name and settings (`@contextN` kept)."""
    if getattr(embedding, "join_breaks", False):
        return embedding  # type: ignore[return-value]
    return JoinedFlairEmbeddings(
        embedding.lm, context_chars=getattr(embedding, "context_chars", 0), name=embedding.name, fine_tune=embedding.fine_tune,
        chars_per_chunk=embedding.chars_per_chunk, with_whitespace=embedding.with_whitespace, tokenized_lm=embedding.tokenized_lm,
        is_lower=embedding.is_lower,
    )


def with_joined_breaks(embeddings: TokenEmbeddings) -> TokenEmbeddings:
    """`embeddings` with every `FlairEmbeddings` (also inside a stack, which is changed in place) reading line-end breaks
    joined; any other embedding stays as it is."""
    if isinstance(embeddings, StackedEmbeddings):
        for index, embedding in enumerate(embeddings.embeddings):
            joined = with_joined_breaks(embedding)
            embeddings.embeddings[index] = joined
            embeddings.add_module(f"list_embedding_{index}", joined)
        return embeddings
    return joined_reading(embeddings) if isinstance(embeddings, FlairEmbeddings) else embeddings
