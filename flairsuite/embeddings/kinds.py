"""The embedding kinds: `EmbeddingKind` and the registry `EMBEDDING_KINDS`, one entry per kind.

An entry says everything the suite needs to know about a kind (its functions live in the kind's
module: `charlm.py`, `fasttext.py`, `char.py`, `lexicon.py`, `bert.py`): the spec grammar, the artifact a spec names below
the home folder and the command that builds it, what a cache key digests, whether the embedding
is fixed while a tagger trains (and so cacheable), how it becomes a Flair embedding, and its fast
inference path. The functions of the package (`flairsuite.embeddings`) read this table and nothing
else: adding a kind takes one module and one entry here.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Optional, Union

import torch
from flair.data import Sentence
from flair.embeddings import TokenEmbeddings

from flairsuite.embeddings import bert, char, charlm, fasttext, lexicon

Featurizer = Callable[[list[Sentence]], torch.Tensor]  # sentences -> (their tokens, dim), in order


@dataclass(frozen=True)
class EmbeddingKind:
    """One kind of embedding spec (`KIND` or `KIND:NAME`) and how the suite handles it.

    - `takes_name`, `example`, `check_name`: the spec grammar. `example` is a valid spec shown in
      errors; `check_name(name)` says what to write instead of a bad name (None: the name is good).
    - `artifact(name, home)`: the file the embedding loads, below `home` (None: a kind without one);
      `build_command(name)`: the command that builds it. `artifact_folder(path)`: the model folder of an artifact
      path, where its training's summary.json and lock are (None: the folder the file is in). `released`: its models
      are also looked up below the other model folders (`flairsuite.files.paths.model_roots`: $FLAIRSUITE_MODELS, the
      installed clone) when `home` lacks them; False: below `home` only.
    - `digested(path)`: what a cache key digests, in order, given the artifact path: files (hashed
      as name, NUL, content) or, for a kind without artifact, bytes that define the embedding.
    - `frozen(fine_tune)`: whether the embedding is fixed while a tagger trains (so cacheable),
      for a tagger that fine-tunes its embeddings or not.
    - `resolve(name, path)`: the Flair embedding, given the spec's name and its artifact path, as
      it is while fixed; `set_fine_tune(embedding, fine_tune)`: what else than `requires_grad` makes
      it train with a fine-tuning tagger (None: nothing).
    - `summarize(summary)`: what a tagger run records of how the artifact was trained, from the
      `summary.json` beside it (None: nothing).
    - `recognizes(embedding)`: whether a loaded Flair embedding is this kind's, in the form its fast
      path handles; `featurizer(embedding, quantize)`: that fast path (None: Flair's own `embed`).
    - `context(name)`: how many characters of the neighbouring sentences of a document the embedding reads on each
      side (None: a kind that reads each sentence alone).
    - `join_breaks(embedding)`: the resolved embedding reading words cut at line ends whole (a corpus's `line_break`
      marks, `flairsuite.corpora.break_marks`; None: a kind that reads the tokens as they are).
    """

    takes_name: bool
    example: str
    digested: Callable[[Optional[Path]], list[Union[Path, bytes]]]
    frozen: Callable[[bool], bool]
    resolve: Callable[[str, Optional[Path]], TokenEmbeddings]
    recognizes: Callable[[TokenEmbeddings], bool]
    check_name: Optional[Callable[[str], Optional[str]]] = None
    artifact: Optional[Callable[[str, Path], Path]] = None
    build_command: Optional[Callable[[str], str]] = None
    artifact_folder: Optional[Callable[[Path], Path]] = None
    featurizer: Optional[Callable[[TokenEmbeddings, bool], Featurizer]] = None
    set_fine_tune: Optional[Callable[[TokenEmbeddings, bool], None]] = None
    summarize: Optional[Callable[[dict[str, Any]], dict[str, Any]]] = None
    context: Optional[Callable[[str], int]] = None
    join_breaks: Optional[Callable[[TokenEmbeddings], TokenEmbeddings]] = None
    released: bool = False


EMBEDDING_KINDS: Mapping[str, EmbeddingKind] = MappingProxyType(
    {
        "charlm": EmbeddingKind(
            takes_name=True,
            example="charlm:de-forward",
            check_name=charlm.check_name,
            artifact=charlm.artifact,
            released=True,
            build_command=charlm.build_command,
            digested=charlm.digested,
            frozen=charlm.frozen,
            resolve=charlm.resolve,
            summarize=charlm.summarize,
            recognizes=charlm.recognizes,
            featurizer=charlm.CharLMFeatures,
            context=charlm.context,
            join_breaks=charlm.join_breaks,
        ),
        "fasttext": EmbeddingKind(
            takes_name=True,
            example="fasttext:de",
            check_name=fasttext.check_name,
            artifact=fasttext.artifact,
            artifact_folder=fasttext.artifact_folder,
            released=True,
            build_command=fasttext.build_command,
            digested=fasttext.digested,
            frozen=fasttext.frozen,
            resolve=fasttext.resolve,
            summarize=fasttext.summarize,
            recognizes=fasttext.recognizes,
            featurizer=fasttext.featurizer,
        ),
        "char": EmbeddingKind(
            takes_name=False,
            example="char",
            digested=char.digested,
            frozen=char.frozen,
            resolve=char.resolve,
            recognizes=char.recognizes,
        ),
        "lexicon": EmbeddingKind(
            takes_name=True,
            example="lexicon:de",
            check_name=lexicon.check_name,
            artifact=lexicon.artifact,
            build_command=lexicon.build_command,
            digested=lexicon.digested,
            frozen=lexicon.frozen,
            resolve=lexicon.resolve,
            recognizes=lexicon.recognizes,
        ),
        "bert": EmbeddingKind(
            takes_name=True,
            example="bert:de-cpu",
            check_name=bert.check_name,
            artifact=bert.artifact,
            released=True,
            build_command=bert.build_command,
            digested=bert.digested,
            frozen=bert.frozen,
            resolve=bert.resolve,
            summarize=bert.summarize,
            set_fine_tune=bert.set_fine_tune,
            recognizes=bert.recognizes,
        ),
    }
)
