"""Flair's `WordEmbeddings` of a gensim vectors file, built without the copies Flair's constructor makes on the way.

Flair's constructor loads the `KeyedVectors`, stacks their float32 matrix with a zero `<unk>` row into a float64
array (`np.zeros(dim, dtype="float")`) and converts that to float32 again: at dim 300 and 158 k words (`fasttext:de`)
a 190 MB table costs 570 MB on top for a moment, and a tagging run's peak memory held that (benchmarks/grid_speed.py).
Here the vectors are read once from their `.npy` side file, straight into the float32 table (the `<unk>` row zeros;
small vectors kept inside the `.kv` file are copied from it), so only the table is allocated and no page of the file
stays mapped. The embedding is the one Flair builds (the same class, vocabulary, table, name and parameters, so
it saves and loads as Flair's); float32 to float64 and back is exact, so the table is equal too.
"""

from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from flair.embeddings import WordEmbeddings

Embedding = TypeVar("Embedding", bound=WordEmbeddings)


def vectors_table(vectors: np.ndarray) -> torch.Tensor:
    """A float32 tensor of `vectors` (words, dim) with one row of zeros after them: a float32 C-ordered memory map read
    from its file with plain reads, anything else copied."""
    count, dim = vectors.shape
    table = torch.empty(count + 1, dim, dtype=torch.float32)
    target = table.numpy()
    target[count] = 0.0
    if isinstance(vectors, np.memmap) and vectors.dtype == np.float32 and vectors.flags.c_contiguous and vectors.filename:
        with open(vectors.filename, "rb") as file:
            file.seek(vectors.offset)
            if file.readinto(memoryview(target[:count]).cast("B")) == target[:count].nbytes:
                return table
    target[:count] = vectors
    return table


def word_embeddings(path: Path, kind: type[Embedding] = WordEmbeddings, **kwargs: Any) -> Embedding:  # type: ignore[assignment]
    """`kind(str(path), **kwargs)` as Flair builds it from the gensim `KeyedVectors` file `path`, with one table in memory."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors.load(str(path), mmap="r")
    table = vectors_table(keyed.vectors)
    vocab = keyed.key_to_index
    del keyed  # the memory map is closed here
    embedding = kind(None, vocab={}, embedding_length=table.size(1), name=kwargs.pop("name", str(path)), **kwargs)
    embedding.vocab = vocab
    embedding.embeddings = str(path)  # as Flair sets it: the file, also where the name differs (`@subwords`)
    embedding.embedding = torch.nn.Embedding.from_pretrained(table, freeze=not embedding.fine_tune)
    return embedding
