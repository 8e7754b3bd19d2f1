"""Subword vectors of a kept FastText model, read from its saved files a few rows at a time (`SubwordModel`).

`train-fasttext` keeps the full gensim model beside the vectors (`model/fasttext.model`, `store.MODEL_FOLDER`): its
vocabulary, its settings (`min_n`, `max_n`, `bucket`) and the n-gram buckets (`vectors_ngrams`, buckets x dim floats:
2.4 GB at dim 300 and 2 M buckets) from which FastText builds a vector for any word, the mean of its character
n-grams' rows. Two ways of opening it read far more than the rows a corpus needs (measured on `wordvectors/de-fasttext`
and AjMC's train split, whose 5,844 unknown words touch 73,868 rows, 89 MB):

- gensim's `FastText.load(path, mmap="r")` maps the arrays, but then recomposes the vector of every vocabulary word
  from its n-grams (`FastTextKeyedVectors.adjust_vectors`), which reads nearly every bucket: 35 s, 2.6 GB resident;
- a memory map of the buckets alone: the kernel maps the cached pages around each one touched (fault-around, 64 KB
  whatever `madvise` says), so the process ends with 2.1 GB of the file resident.

`SubwordModel.load` unpickles the model's small main file (settings and vocabulary: 0.03 s) and reads each row it needs
from the `.npy` file gensim saved beside it (`os.pread`), so the process holds only those rows, a vector's worth at a time.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np
from gensim import utils
from gensim.models.fasttext import FastTextKeyedVectors, ft_ngram_hashes

from flairsuite.errors import FlairsuiteError


class NpyRows:
    """The rows of a 2-D C-order `.npy` file, each read from the file when asked for (`rows[i]`: a fresh 1-D array)."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran_order, dtype = read_header(handle)
            self.offset = handle.tell()
        if len(shape) != 2 or fortran_order or dtype.hasobject:
            raise FlairsuiteError(f"{path}: not a 2-D array of numbers in C order, as gensim saves n-gram buckets")
        self.path, self.shape, self.dtype = path, shape, dtype
        self.row_bytes = shape[1] * dtype.itemsize
        self.fd = os.open(path, os.O_RDONLY)

    def __getitem__(self, row: int) -> np.ndarray:
        data = os.pread(self.fd, self.row_bytes, self.offset + int(row) * self.row_bytes)
        return np.frombuffer(data, dtype=self.dtype)

    def __del__(self) -> None:
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


Rows = Union[np.ndarray, NpyRows]


@dataclass
class SubwordModel:
    """What FastText needs to build a word's vector: the n-gram settings, the model's vocabulary and the rows of its
    own word vectors (`vocab`) and n-gram buckets (`ngrams`), read from the files (`NpyRows`) or, for a model small
    enough that gensim pickled them inside its main file (under 10 MB), held."""

    min_n: int
    max_n: int
    bucket: int
    vector_size: int
    key_to_index: dict[str, int]
    vocab: Rows
    ngrams: Rows

    @classmethod
    def load(cls, model: Path) -> "SubwordModel":
        """The model saved as `model` (gensim `FastText.save`): its pickled main file, and its arrays read by row."""
        wv = getattr(utils.unpickle(str(model)), "wv", None)
        if not isinstance(wv, FastTextKeyedVectors):
            raise FlairsuiteError(f"{model} is not a gensim FastText model (train-fasttext saves one in model/)")
        aside = getattr(wv, "__numpys", [])  # the arrays gensim saved beside the main file, as <model>.wv.<name>.npy
        vocab, ngrams = (NpyRows(Path(f"{model}.wv.{name}.npy")) if name in aside else getattr(wv, name) for name in ("vectors_vocab", "vectors_ngrams"))
        return cls(wv.min_n, wv.max_n, wv.bucket, wv.vector_size, wv.key_to_index, vocab, ngrams)

    def buckets(self, word: str) -> list[int]:
        """The rows of `ngrams` that hold the character n-grams of `word` (gensim's hashing); none without buckets."""
        return ft_ngram_hashes(word, self.min_n, self.max_n, self.bucket) if self.bucket else []

    def vector(self, word: str) -> np.ndarray:
        """The vector gensim's `wv[word]` gives on the fully loaded model (float32): for a word outside the model's
        vocabulary the mean of its n-grams' rows (zeros for a word without any), for one inside it the mean of its own row
        and its n-grams' rows (`adjust_vectors`). Summed in gensim's order, so the floats agree to the last bit."""
        buckets = self.buckets(word)
        index = self.key_to_index.get(word)
        vector = np.zeros(self.vector_size, dtype=np.float32) if index is None else np.array(self.vocab[index], dtype=np.float32)
        for bucket in buckets:
            vector += self.ngrams[bucket]
        count = len(buckets) + (index is not None)
        return vector / np.float32(count) if count else vector
