"""Word vectors whose unknown words get FastText subword vectors (`fasttext:NAME@subwords`): `SubwordWordEmbeddings`.

Flair's `WordEmbeddings` gives a token it cannot look up (word, lower-cased, digits as `#` or `0`) the `<unk>` row,
zeros. `train-fasttext` adds subword-built vectors only for the tokens of the registered labeled corpora, so the words
of an own corpus (OCR'd forms, old spellings) that its vocabulary lacks all get that one vector. This embedding is the
same `WordEmbeddings` (vocabulary and matrix of `vectors.kv`), except that such a token gets the vector the kept full
model (`model/fasttext.model`) builds from its character n-grams (`wordvectors.subwords.SubwordModel.vector`: gensim's
`wv[word]`). The model is opened when the first unknown word comes (`SubwordModel.load`: its small main file; the
n-gram buckets stay on disk, and only the rows of the words met are read); it is never pickled.

A saved tagger holds the vocabulary and matrix as a plain `WordEmbeddings` does, and the model's path, not the model
(2.6 GB at dim 300): the model must be at that path when the tagger is loaded (an error naming it otherwise), and a
process that loads the tagger needs `import flairsuite.embeddings` (or `flairsuite predict`) so that Flair knows the class.
"""

from pathlib import Path
from typing import Any, Optional

import flair
import numpy as np
import torch
from flair.data import Sentence
from flair.embeddings import WordEmbeddings
from flair.embeddings.base import register_embeddings

from flairsuite.errors import FlairsuiteError
from flairsuite.wordvectors.subwords import SubwordModel


def missing_model_error(model: Path) -> FlairsuiteError:
    """The one-line error of a tagger whose FastText model is not where it was when the tagger was trained."""
    return FlairsuiteError(
        f"{model} not found: this tagger's word vectors (fasttext:NAME@subwords) build the vectors of unknown words from that "
        "FastText model, which must stay there (it is not saved inside the tagger)"
    )


@register_embeddings
class SubwordWordEmbeddings(WordEmbeddings):
    """`WordEmbeddings` whose `<unk>` tokens get the subword vector of the FastText model at `model` (module docstring)."""

    def __init__(self, embeddings: Optional[str], model: str, **kwargs: Any) -> None:
        if not Path(model).is_file():
            raise missing_model_error(Path(model))
        self.model = model
        self._subwords: Optional[SubwordModel] = None
        super().__init__(embeddings, **kwargs)

    def subwords(self) -> SubwordModel:
        """The FastText model, opened when first needed (also after loading a saved tagger)."""
        if self._subwords is None:
            if not Path(self.model).is_file():
                raise missing_model_error(Path(self.model))
            model = SubwordModel.load(Path(self.model))
            if model.vector_size != self.embedding_length:
                raise FlairsuiteError(f"{self.model}: vectors of dim {model.vector_size}, the word vectors' are of dim {self.embedding_length}")
            self._subwords = model
        return self._subwords

    def lookup(self, words: list[str]) -> torch.Tensor:
        """The vectors of `words`, (len(words), dim) on the matrix's device, before any layer norm: Flair's lookup, and for
        each word it maps to `<unk>` the model's subword vector instead."""
        index = [self.get_cached_token_index(word) for word in words]
        weight = self.embedding.weight
        vectors = self.embedding(torch.tensor(index, dtype=torch.long, device=weight.device))
        unknown = [row for row, found in enumerate(index) if found == len(self.vocab)]
        if unknown:
            model = self.subwords()
            built = torch.from_numpy(np.stack([model.vector(words[row]) for row in unknown]))
            vectors[unknown] = built.to(device=weight.device, dtype=vectors.dtype)
        return vectors

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        tokens = [token for sentence in sentences for token in sentence.tokens]
        vectors = self.lookup([token.text for token in tokens])
        if self.layer_norm is not None:
            vectors = self.layer_norm(vectors)
        if self.force_cpu:
            vectors = vectors.to(flair.device)
        for vector, token in zip(vectors, tokens):
            token.set_embedding(self.name, vector)
        return sentences

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_subwords"] = None  # open files: opened again when needed
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_subwords", None)
        super().__setstate__(state)

    def to_params(self) -> dict[str, Any]:
        return {**super().to_params(), "model": self.model}
