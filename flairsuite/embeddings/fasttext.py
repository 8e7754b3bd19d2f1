"""The `fasttext` kind: word vectors trained by `train-fasttext`, as Flair's `WordEmbeddings`.

Spec `fasttext:NAME` (NAME: the language, or the `--name` given to `train-fasttext`); artifact
`wordvectors/NAME-fasttext/vectors.kv` (gensim `KeyedVectors`, with
its side files) below the home folder. Fixed while a tagger trains. Fast inference path:
`WordFeatures`, Flair's own vocabulary lookup for a whole batch at once.

Option `@subwords` (`fasttext:de@subwords`, `subword_vectors.py`): the same vectors, except that a token the lookup
maps to `<unk>` gets the vector the kept full FastText model builds from its character n-grams. Its artifact is that
model, `wordvectors/NAME-fasttext/model/fasttext.model` (what `train-fasttext` keeps unless `--no-model`; compact
vectors have none), so a missing model is the usual one-line error of a missing artifact when the spec is resolved, and
its digest covers the vectors files and the model's files (a cache key and fingerprint of their own). Its folder, with
the summary.json and the lock of a training, is the vectors folder (`artifact_folder`).
"""

from pathlib import Path
from typing import Any, Optional

import torch
from flair.data import Sentence
from flair.embeddings import TokenEmbeddings, WordEmbeddings

from flairsuite.embeddings.spec_name import flag_problem, split_name
from flairsuite.embeddings.subword_vectors import SubwordWordEmbeddings
from flairsuite.embeddings.vector_table import word_embeddings
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import wordvectors_dir
from flairsuite.rawtext.language import raw_languages
from flairsuite.wordvectors.store import MODEL_FILE, MODEL_FOLDER, VECTORS_FILE, model_file, vectors_files, vectors_folder

OPTIONS = ("subwords",)


def check_name(name: str) -> Optional[str]:
    """What to write instead of a name without vectors or with a bad or repeated option; None for a good name."""
    return flag_problem(name, "fasttext", OPTIONS)


def artifact(name: str, home: Path) -> Path:
    """The vectors file of vectors `name` below `home`; with `@subwords` their full model's main file."""
    vectors, options = split_name(name)
    folder = vectors_folder(wordvectors_dir(home), vectors)
    return model_file(folder) if "subwords" in options else folder / VECTORS_FILE


def is_model(path: Path) -> bool:
    """Whether `path` is the artifact of `@subwords`: a full model's main file inside a vectors folder."""
    return path.name == MODEL_FILE and path.parent.name == MODEL_FOLDER


def artifact_folder(path: Path) -> Path:
    """The vectors folder of an artifact (the vectors file's folder, or the one holding the model's folder)."""
    return path.parent.parent if is_model(path) else path.parent


def build_command(name: str) -> str:
    """The `train-fasttext` call that trains vectors `name` (a language, or any name with --lang); it keeps the full
    model that `@subwords` reads unless told `--no-model`."""
    vectors = split_name(name)[0]
    return f"flairsuite train-fasttext --lang {vectors}" if vectors in raw_languages() else f"flairsuite train-fasttext --lang LANG --name {vectors}"


def digested(path: Optional[Path]) -> list[Path]:
    """The files a cache key digests: the vectors file and its gensim side files, sorted; for `@subwords` (the model's
    main file as artifact) then the model's files, sorted."""
    if not is_model(path):
        return vectors_files(path.parent)
    return vectors_files(artifact_folder(path)) + sorted(p for p in path.parent.glob(f"{MODEL_FILE}*") if p.is_file())


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """What a run records of the vectors (`summary.json` of train-fasttext or compact-fasttext): their dimension."""
    return {"dim": summary.get("dim", summary.get("config", {}).get("dim"))}


def frozen(fine_tune: bool) -> bool:
    """Always fixed while a tagger trains."""
    return True


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """Flair's embedding of the vectors file (built with one copy of the table in memory: `vector_table.py`); for
    `@subwords` (`path`: the model) a `SubwordWordEmbeddings` of the vectors file beside the model's folder, named apart
    from the plain embedding."""
    if not is_model(path):
        return word_embeddings(path)
    vectors = artifact_folder(path) / VECTORS_FILE
    if not vectors.is_file():
        raise FlairsuiteError(f"{vectors} not found beside {path.parent}: run `{build_command(name)}`")
    return word_embeddings(vectors, SubwordWordEmbeddings, model=str(path.resolve()), name=f"{vectors}@subwords")


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


class SubwordFeatures(WordFeatures):
    """`SubwordWordEmbeddings` vectors: its own lookup (Flair's, then the model's subword vector for `<unk>`) for a batch."""

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        vectors = self.embedding.lookup([token.text for sentence in sentences for token in sentence])
        norm = getattr(self.embedding, "layer_norm", None)
        return norm(vectors) if norm is not None else vectors


def featurizer(embedding: WordEmbeddings, quantize: bool) -> WordFeatures:
    """`WordFeatures`, or `SubwordFeatures` for `@subwords` (a lookup: there is nothing to quantise)."""
    return SubwordFeatures(embedding) if isinstance(embedding, SubwordWordEmbeddings) else WordFeatures(embedding)
