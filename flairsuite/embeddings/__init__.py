"""Embedding specs: one name per embedding for stacking, resolved to Flair embeddings of the suite's artifacts.

| spec | embedding | artifact below $FLAIRSUITE_HOME |
|---|---|---|
| `charlm:NAME-forward`, `charlm:NAME-backward`, `…@contextN` | `FlairEmbeddings` (`@contextN`: `context.py`) | `charlm/NAME-DIRECTION/best-lm.pt` |
| `fasttext:LANG` | `WordEmbeddings` | `wordvectors/LANG-fasttext/vectors.kv` (+ side files) |
| `fasttext:LANG@subwords` (`fasttext.py`) | `SubwordWordEmbeddings` (`<unk>`: subword vectors) | `wordvectors/LANG-fasttext/model/fasttext.model` (+ vectors) |
| `char` | `CharacterEmbeddings` (task-trained, Lample et al. 2016) | none: a built-in character set |
| `lexicon:NAME`, `lexicon:NAME@OPTION` (`lexicon.py`) | `LexiconEmbeddings` (task-trained: position in a lexicon match) | `lexicons/NAME.tsv` |
| `bert:NAME`, `bert:NAME@OPTION` (`bert.py`) | `TransformerWordEmbeddings` (fixed, or fine-tuned) | `bert/NAME/config.json` (+ weights, tokenizer) |

The models of `charlm`, `fasttext` and `bert` that the home folder lacks are looked up in the other model folders
(`artifact_places`: $FLAIRSUITE_MODELS, and without $FLAIRSUITE_HOME the installed clone's released models;
`flairsuite.files.paths.model_roots`); a missing one is an error naming every place looked. Lexicons are the home's only.
A run's fingerprint holds its models' digests, not their paths, so where a model was found does not count.

Each kind is one entry of `kinds.EMBEDDING_KINDS`, its functions in its module (`charlm.py`,
`fasttext.py`, `char.py`, `lexicon.py`, `bert.py`); the functions here read that table. Also here: the LSTM kernels of the
fast featurizers (`lstm.py`), and `length_batches`, `token_vectors` (`batching.py`).
"""

import hashlib
from pathlib import Path
from typing import Any, Optional

from flair.embeddings import StackedEmbeddings, TokenEmbeddings

from flairsuite.embeddings import kinds
from flairsuite.embeddings.batching import length_batches as length_batches
from flairsuite.embeddings.batching import token_vectors as token_vectors
from flairsuite.embeddings.char import CHARACTERS as CHARACTERS
from flairsuite.embeddings.char import character_dictionary as character_dictionary
from flairsuite.embeddings.kinds import EmbeddingKind as EmbeddingKind
from flairsuite.embeddings.kinds import Featurizer as Featurizer
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.files.locks import LOCK_FILE, being_trained
from flairsuite.files.paths import model_roots
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file

KINDS = tuple(kinds.EMBEDDING_KINDS)  # the kind names, in table order


def parse(spec: str) -> tuple[str, str]:
    """`"charlm:de-forward"` -> `("charlm", "de-forward")`; `"char"` -> `("char", "")`."""
    kind, _, name = spec.partition(":")
    if kind not in kinds.EMBEDDING_KINDS:
        raise unknown_name_error("embedding kind", kind, list(kinds.EMBEDDING_KINDS))
    entry = kinds.EMBEDDING_KINDS[kind]
    if entry.takes_name and not name:
        raise FlairsuiteError(f"embedding spec '{spec}' needs a name, e.g. {entry.example}")
    if not entry.takes_name and name:
        raise FlairsuiteError(f"embedding spec '{spec}': {kind} takes no name (write '{kind}')")
    problem = entry.check_name(name) if entry.check_name is not None else None
    if problem:
        raise FlairsuiteError(f"embedding spec '{spec}': {problem}")
    return kind, name


def kind_of(spec: str) -> tuple[EmbeddingKind, str]:
    """The table entry of `spec`'s kind and the spec's name."""
    kind, name = parse(spec)
    return kinds.EMBEDDING_KINDS[kind], name


def artifact_places(spec: str, home: Path) -> list[Path]:
    """Where the embedding's file may be, in lookup order: below `home`, then for a released kind below each other model
    folder (`paths.model_roots`); empty for `char`, which has none."""
    entry, name = kind_of(spec)
    if entry.artifact is None:
        return []
    return [entry.artifact(name, root) for root in (model_roots(home) if entry.released else (home,))]


def artifact_path(spec: str, home: Path) -> Optional[Path]:
    """The file the embedding loads: the first of `artifact_places` that exists, else the one below `home` (what
    trains it writes there); None for `char`, which has none."""
    places = artifact_places(spec, home)
    return next((place for place in places if place.is_file()), places[0]) if places else None


def build_command(spec: str) -> str:
    """The command that builds the artifact of a `charlm` or `fasttext` spec."""
    entry, name = kind_of(spec)
    if entry.build_command is None:
        raise FlairsuiteError(f"embedding spec '{spec}' has no artifact to build")
    return entry.build_command(name)


def existing_artifact(spec: str, home: Path) -> Optional[Path]:
    """`artifact_path`, or a one-line error naming every place looked and the command that builds it when it is missing,
    or when its training has not finished (`check_finished`)."""
    path = artifact_path(spec, home)
    if path is not None and not path.is_file():
        others = [str(place) for place in artifact_places(spec, home)[1:]]
        elsewhere = f" (nor {', '.join(others)})" if others else ""
        compact = any(place.parent.name == "model" and (place.parent.parent / "vectors.kv").is_file()  # fasttext:NAME@subwords
                      for place in artifact_places(spec, home))
        why = " (these vectors keep no model/: compact vectors have none; train full ones)" if compact else ""
        raise FlairsuiteError(f"{path} not found{elsewhere}{why}: run `{build_command(spec)}`")
    if path is not None:
        check_finished(spec, artifact_folder(spec, path))
    return path


def artifact_folder(spec: str, path: Path) -> Path:
    """The model folder of the artifact `path` of `spec`: where its summary.json and a training's lock are (the kind's
    `artifact_folder`; by default the folder the file is in)."""
    entry = kind_of(spec)[0]
    return path.parent if entry.artifact_folder is None else entry.artifact_folder(path)


CHECKPOINT_FILE = "checkpoint.pt"  # train-charlm's and train-bert's resumable state, beside the artifact


def check_finished(spec: str, folder: Path) -> None:
    """A one-line error when the model in `folder` is a training's intermediate state, not its result: another process is
    training into it now, or a training stopped (killed, or its session ended) after its last finished run, so that its
    `checkpoint.pt` is newer than its `summary.json`. The trainers write the model files at every checkpoint and the summary
    only at the end; a tagger trained on the model in between would silently stand on a half-trained embedding."""
    if being_trained(folder):
        raise FlairsuiteError(f"{spec}: {folder} is being trained by another process (it holds {folder / LOCK_FILE}): wait for it to end")
    checkpoint, summary = folder / CHECKPOINT_FILE, folder / SUMMARY_FILE
    if checkpoint.is_file() and (not summary.is_file() or summary.stat().st_mtime_ns < checkpoint.stat().st_mtime_ns):
        raise FlairsuiteError(f"{spec}: the training of {folder} stopped before its end ({CHECKPOINT_FILE} is newer than any "
                              f"{SUMMARY_FILE}): finish it with the command that trained it and --resume")


def artifact_digest(spec: str, home: Path) -> str:
    """sha256 of the embedding's artifact files (for `char`: of its character set), to key caches on."""
    path = existing_artifact(spec, home)
    digest = hashlib.sha256()
    for file in kind_of(spec)[0].digested(path):
        if isinstance(file, bytes):  # a kind without artifact: the bytes that define it
            digest.update(file)
            continue
        digest.update(file.name.encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def artifact_summary(spec: str, home: Path) -> Optional[dict[str, Any]]:
    """How the artifact of `spec` was trained, as its kind summarizes the `summary.json` beside it; None without one."""
    summarize = kind_of(spec)[0].summarize
    path = artifact_path(spec, home)
    if summarize is None or path is None or not (artifact_folder(spec, path) / SUMMARY_FILE).is_file():
        return None
    try:
        summary = read_summary_file(artifact_folder(spec, path) / SUMMARY_FILE)
    except FlairsuiteError:
        return None  # a damaged summary loses a record, never a run
    return summarize(summary)


def frozen(spec: str, fine_tune: bool = False) -> bool:
    """Whether the embedding of `spec` is fixed while a tagger trains (and so can be cached)."""
    return kind_of(spec)[0].frozen(fine_tune)


def context_chars(spec: str) -> int:
    """How many characters of the neighbouring sentences of its document the embedding of `spec` reads on each side
    (0: each sentence alone); its vectors depend on the documents, not only on the sentences."""
    entry, name = kind_of(spec)
    return 0 if entry.context is None else entry.context(name)


def set_trainable(spec: str, embedding: TokenEmbeddings, fine_tune: bool) -> None:
    """Set a resolved `embedding` of `spec` up for a tagger that fine-tunes its embeddings or not.

    Its weights get gradients unless it is `frozen`, and its kind's `set_fine_tune` (if any) does the rest.
    """
    entry = kind_of(spec)[0]
    embedding.requires_grad_(not entry.frozen(fine_tune))
    if entry.set_fine_tune is not None:
        entry.set_fine_tune(embedding, fine_tune)


def joins_breaks(spec: str) -> bool:
    """Whether the embedding of `spec` can read words cut at line ends whole (a character LM; `kinds.EmbeddingKind.join_breaks`)."""
    return kind_of(spec)[0].join_breaks is not None


def resolve(spec: str, home: Path, join_breaks: bool = False) -> TokenEmbeddings:
    """The Flair embedding named by `spec`, loaded from the artifacts below `home`; with `join_breaks`, a character LM
    reads words cut at line ends whole (`joined.py`; other kinds read the tokens as they are)."""
    path = existing_artifact(spec, home)
    entry, name = kind_of(spec)
    embedding = entry.resolve(name, path)
    return entry.join_breaks(embedding) if join_breaks and entry.join_breaks is not None else embedding


def stack(specs: list[str], home: Path, join_breaks: bool = False) -> TokenEmbeddings:
    """The embeddings of `specs` stacked in order (a single spec: that embedding itself); `join_breaks`: as `resolve`."""
    if not specs:
        raise FlairsuiteError("no embeddings given: name at least one, e.g. charlm:de-forward")
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise FlairsuiteError(f"embedding {', '.join(repeated)} listed more than once")
    embeddings = [resolve(spec, home, join_breaks) for spec in specs]
    return embeddings[0] if len(embeddings) == 1 else StackedEmbeddings(embeddings)


def featurizer(embedding: TokenEmbeddings, quantize: bool) -> Optional[Featurizer]:
    """The fast featurizer of the kind that recognises the loaded `embedding` (int8 LSTMs with `quantize`).

    None where no kind does, or its kind has no fast path: then Flair's own `embed` is the way.
    """
    for entry in kinds.EMBEDDING_KINDS.values():
        if entry.recognizes(embedding):
            return None if entry.featurizer is None else entry.featurizer(embedding, quantize)
    return None
