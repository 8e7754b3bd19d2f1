"""Embedding sentences in batches: length bucketing, and a batch's token vectors from a Flair embedding."""

from collections.abc import Mapping
from typing import Optional

import torch
from flair.data import Sentence
from flair.embeddings import TokenEmbeddings


def length_batches(lengths: Mapping[int, int], budget: int, max_size: Optional[int] = None, shortest_first: bool = False) -> list[list[int]]:
    """The keys of `lengths` (e.g. sentence index -> characters) in batches of similar length.

    Keys are taken in order of length, longest first (or shortest first; equal lengths in key order),
    and a batch is cut before the key that would make its padded size (keys x longest length)
    exceed `budget` or its size exceed `max_size`. A batch keeps that order.
    """
    batches: list[list[int]] = []
    for key in sorted(lengths, key=lengths.__getitem__, reverse=not shortest_first):
        batch = batches[-1] if batches else []
        longest = max(lengths[batch[0]], lengths[key]) if batch else lengths[key]  # the batch is sorted: an end is longest
        if batch and (max_size is None or len(batch) < max_size) and (len(batch) + 1) * longest <= budget:
            batch.append(key)
        else:
            batches.append([key])
    return batches


def token_vectors(embedding: TokenEmbeddings, sentences: list[Sentence], clear: bool = True) -> torch.Tensor:
    """(tokens of `sentences`, dim): `embedding`'s vector of every token, sentence after sentence.

    Flair's `embed` stores the vectors on the tokens; they are read back and, with `clear`, removed
    again (without: left to the caller, e.g. Flair's `store_embeddings`).
    """
    embedding.embed(sentences)
    names = embedding.get_names()
    vectors = torch.stack([token.get_embedding(names) for sentence in sentences for token in sentence])
    if clear:
        for sentence in sentences:
            sentence.clear_embeddings(names)
    return vectors
