"""The stacked embedding tensor of a batch of sentences, computed straight from a tagger's embeddings.

Flair embeds token by token: every token stores one vector per embedding, and the tagger concatenates
them, in the sorted order of the embeddings' names, into a padded tensor. Here every embedding of the
stack gives one (tokens, dim) tensor for the whole batch, and the stack is their concatenation in that
same order. Each embedding gets the fast featurizer of the embedding kind that recognises it
(`flairsuite.embeddings.featurizer`, from the kinds' table: a character LM's hidden states computed
with `flairsuite.embeddings.lstm`, int8 when quantised; word vectors by Flair's own lookup); any other
embedding is computed by Flair's own `embed`, read back and cleared from the tokens (`FlairFeatures`).
"""

import torch
from flair.data import Sentence
from flair.embeddings import StackedEmbeddings, TokenEmbeddings

from flairsuite.embeddings import Featurizer, token_vectors
from flairsuite.embeddings import featurizer as kind_featurizer


def leaves(embeddings: TokenEmbeddings) -> list[TokenEmbeddings]:
    """The embeddings of a (possibly nested) stack, or the embedding itself."""
    if isinstance(embeddings, StackedEmbeddings):
        return [leaf for embedding in embeddings.embeddings for leaf in leaves(embedding)]
    return [embeddings]


class FlairFeatures:
    """Any other embedding: Flair's own per-token embedding, read back and cleared."""

    def __init__(self, embedding: TokenEmbeddings) -> None:
        self.embedding = embedding

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        return token_vectors(self.embedding, sentences)


def featurizer(embedding: TokenEmbeddings, quantize: bool) -> Featurizer:
    """The fastest featurizer that reproduces `embedding`: its kind's fast path, else Flair's own."""
    fast = kind_featurizer(embedding, quantize)
    return fast if fast is not None else FlairFeatures(embedding)


def stack_featurizers(embeddings: TokenEmbeddings, quantize: bool) -> list[Featurizer]:
    """One featurizer per embedding of the stack, in the order the tagger concatenates them (by name)."""
    return [featurizer(embedding, quantize) for embedding in sorted(leaves(embeddings), key=lambda e: e.name)]
