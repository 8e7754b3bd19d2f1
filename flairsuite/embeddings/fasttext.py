"""The `fasttext` kind: word vectors trained by `train-fasttext`, as Flair's `WordEmbeddings`.

Spec `fasttext:NAME` (NAME: the language, or the `--name` given to `train-fasttext`); artifact
`wordvectors/NAME-fasttext/vectors.kv` (gensim `KeyedVectors`, with
its side files) below the home folder. Fixed while a tagger trains. Fast inference path:
`WordFeatures`, Flair's own vocabulary lookup for a whole batch at once.
"""

from pathlib import Path
from typing import Any, Optional

import torch
from flair.data import Sentence
from flair.embeddings import TokenEmbeddings, WordEmbeddings

from flairsuite.files.paths import wordvectors_dir
from flairsuite.rawtext.language import raw_languages
from flairsuite.wordvectors.store import VECTORS_FILE, vectors_files, vectors_folder


def artifact(name: str, home: Path) -> Path:
    """The vectors file of vectors `name` below `home`."""
    return vectors_folder(wordvectors_dir(home), name) / VECTORS_FILE


def build_command(name: str) -> str:
    """The `train-fasttext` call that trains vectors `name` (a language, or any name with --lang)."""
    return f"flairsuite train-fasttext --lang {name}" if name in raw_languages() else f"flairsuite train-fasttext --lang LANG --name {name}"


def digested(path: Optional[Path]) -> list[Path]:
    """The files a cache key digests: the vectors file and its gensim side files, sorted."""
    return vectors_files(path.parent)


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """What a run records of the vectors (`summary.json` of train-fasttext or compact-fasttext): their dimension."""
    return {"dim": summary.get("dim", summary.get("config", {}).get("dim"))}


def frozen(fine_tune: bool) -> bool:
    """Always fixed while a tagger trains."""
    return True


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """Flair's embedding of the vectors file."""
    return WordEmbeddings(str(path))


def recognizes(embedding: TokenEmbeddings) -> bool:
    """A WordEmbeddings over token texts (no other field)."""
    return isinstance(embedding, WordEmbeddings) and embedding.field is None


class WordFeatures:
    """`WordEmbeddings` vectors through Flair's own lookup (word, lower-cased, digits normalised, else <unk>)."""

    def __init__(self, embedding: WordEmbeddings) -> None:
        self.embedding = embedding

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        index = [self.embedding.get_cached_token_index(token.text) for sentence in sentences for token in sentence]
        weight = self.embedding.embedding.weight
        vectors = self.embedding.embedding(torch.tensor(index, dtype=torch.long, device=weight.device))
        norm = getattr(self.embedding, "layer_norm", None)
        return norm(vectors) if norm is not None else vectors


def featurizer(embedding: WordEmbeddings, quantize: bool) -> WordFeatures:
    """`WordFeatures` (a lookup: there is nothing to quantise)."""
    return WordFeatures(embedding)
