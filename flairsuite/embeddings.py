"""Embedding specs: one name per embedding for stacking, resolved to Flair embeddings of the suite's artifacts.

| spec | embedding | artifact below $FLAIRSUITE_HOME |
|---|---|---|
| `charlm:NAME-forward`, `charlm:NAME-backward` | `FlairEmbeddings` | `charlm/NAME-DIRECTION/best-lm.pt` |
| `fasttext:LANG` | `WordEmbeddings` | `wordvectors/LANG-fasttext/vectors.kv` (+ side files) |
| `char` | `CharacterEmbeddings` (task-trained, Lample et al. 2016) | none: a built-in character set |
"""

import hashlib
import string
from pathlib import Path
from typing import Optional

from flair.data import Dictionary
from flair.embeddings import CharacterEmbeddings, FlairEmbeddings, StackedEmbeddings, TokenEmbeddings, WordEmbeddings

from flairsuite.charlm.recipes import languages
from flairsuite.errors import unknown_name_error
from flairsuite.errors import FlairsuiteError
from flairsuite.wordvectors.store import VECTORS_FILE, vectors_files, vectors_folder
from flairsuite.paths import charlm_dir, wordvectors_dir

KINDS = ("charlm", "fasttext", "char")
NAMED = ("charlm", "fasttext")
DIRECTIONS = ("forward", "backward")
CHARLM_MODEL = "best-lm.pt"  # the file CharLMTrainer writes in each model folder
# `char` characters: Flair's default set ("common-chars") needs a download, so the suite builds its own,
# covering Latin-script languages; any other character maps to <unk>.
CHARACTERS = "".join(
    dict.fromkeys(
        string.printable.strip()
        + "".join(map(chr, range(0xA1, 0x180)))  # Latin-1 Supplement and Latin Extended-A
        + "–—‘’‚“”„†•…‰‹›€"
    )
)


def parse(spec: str) -> tuple[str, str]:
    """`"charlm:de-forward"` -> `("charlm", "de-forward")`; `"char"` -> `("char", "")`."""
    kind, _, name = spec.partition(":")
    if kind not in KINDS:
        raise unknown_name_error("embedding kind", kind, list(KINDS))
    if kind in NAMED and not name:
        example = "charlm:de-forward" if kind == "charlm" else "fasttext:de"
        raise FlairsuiteError(f"embedding spec '{spec}' needs a name, e.g. {example}")
    if kind not in NAMED and name:
        raise FlairsuiteError(f"embedding spec '{spec}': {kind} takes no name (write '{kind}')")
    if kind == "charlm" and not name.endswith(tuple(f"-{d}" for d in DIRECTIONS)):
        raise FlairsuiteError(f"embedding spec '{spec}': write charlm:NAME-forward or charlm:NAME-backward")
    return kind, name


def artifact_path(spec: str, home: Path) -> Optional[Path]:
    """The file the embedding loads (whether present or not); None for `char`, which has none."""
    kind, name = parse(spec)
    if kind == "charlm":
        return charlm_dir(home) / name / CHARLM_MODEL
    if kind == "fasttext":
        return vectors_folder(wordvectors_dir(home), name) / VECTORS_FILE
    return None


def build_command(spec: str) -> str:
    """The command that builds the artifact of a `charlm` or `fasttext` spec."""
    kind, name = parse(spec)
    if kind == "fasttext":
        return f"flairsuite train-fasttext --lang {name}"
    prefix, _, direction = name.rpartition("-")
    lang = f"--lang {prefix}" if prefix in languages() else f"--lang LANG --name {prefix}"
    return f"flairsuite train-charlm {lang} --direction {direction}"


def existing_artifact(spec: str, home: Path) -> Optional[Path]:
    """`artifact_path`, or a one-line error naming the command that builds it when it is missing."""
    path = artifact_path(spec, home)
    if path is not None and not path.is_file():
        raise FlairsuiteError(f"{path} not found: run `{build_command(spec)}`")
    return path


def artifact_digest(spec: str, home: Path) -> str:
    """sha256 of the embedding's artifact files (for `char`: of its character set), to key caches on."""
    path = existing_artifact(spec, home)
    digest = hashlib.sha256()
    if path is None:
        digest.update(CHARACTERS.encode("utf-8"))
        return digest.hexdigest()
    for file in vectors_files(path.parent) if parse(spec)[0] == "fasttext" else [path]:
        digest.update(file.name.encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def character_dictionary() -> Dictionary:
    """The built-in character set of `char`, with <unk> (id 0) for every other character."""
    dictionary = Dictionary(add_unk=True)
    for char in CHARACTERS:
        dictionary.add_item(char)
    return dictionary


def resolve(spec: str, home: Path) -> TokenEmbeddings:
    """The Flair embedding named by `spec`, loaded from the artifacts below `home`."""
    path = existing_artifact(spec, home)
    kind = parse(spec)[0]
    if kind == "charlm":
        return FlairEmbeddings(str(path))
    if kind == "fasttext":
        return WordEmbeddings(str(path))
    return CharacterEmbeddings(character_dictionary())


def stack(specs: list[str], home: Path) -> TokenEmbeddings:
    """The embeddings of `specs` stacked in order (a single spec: that embedding itself)."""
    if not specs:
        raise FlairsuiteError("no embeddings given: name at least one, e.g. charlm:de-forward")
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise FlairsuiteError(f"embedding {', '.join(repeated)} listed more than once")
    embeddings = [resolve(spec, home) for spec in specs]
    return embeddings[0] if len(embeddings) == 1 else StackedEmbeddings(embeddings)
