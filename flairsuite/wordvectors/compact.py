"""Compact word vectors: the part of a vectors file that the tokens of some labeled corpora need.

A token keeps the one entry Flair's `WordEmbeddings` would find for it (word, lowercased, digits as
`#`, digits as `0`, the first form present), so on those corpora the compact file gives every token
exactly the vector the full file gives; any other token gets Flair's `<unk>` vector. The quickstart
ships such a file for Sturm (`wordvectors/de-quickstart-fasttext/`, a few MB) instead of the full
vectors (hundreds of MB, git-ignored).
"""

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gensim.models.keyedvectors import KeyedVectors

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_folder
from flairsuite.files.summary_file import write_summary
from flairsuite.wordvectors.coverage import lookup_forms
from flairsuite.wordvectors.store import VECTORS_FILE, vectors_files, vectors_folder


def corpus_words(names: Iterable[str], root: Path) -> set[str]:
    """Every token of every split present under `root` of the labeled datasets `names`."""
    words: set[str] = set()
    for name in names:
        spec = dataset(name)
        found = [spec.locate(entry, root) for entry in spec.splits.values()]
        if not any(found):
            raise FlairsuiteError(f"{name}: no split found under {root}; run `flairsuite corpora fetch {name}`")
        for path in filter(None, found):
            words.update(token for sentence in read_split(spec, path).sentences for token in sentence.tokens)
    return words


def compact(source: KeyedVectors, words: Iterable[str]) -> KeyedVectors:
    """The entries of `source` that `words` are looked up as (in `source`'s order)."""
    keys = source.key_to_index
    kept = {next(form for form in lookup_forms(word) if form in keys) for word in words if any(form in keys for form in lookup_forms(word))}
    order = sorted(kept, key=keys.__getitem__)
    vectors = KeyedVectors(source.vector_size)
    if order:
        vectors.add_vectors(order, source[order])
    vectors.lifecycle_events = None  # the same inputs write the same bytes
    return vectors


def files_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in vectors_files(folder):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def compact_command(source_name: str, names: tuple[str, ...], name: str, out: Path, root: Path, force: bool) -> dict[str, Any]:
    """Write `<out>/<name>-fasttext/` with the vectors of fasttext:`source_name` that datasets `names` need; its summary."""
    source_folder = vectors_folder(out, source_name)
    if not (source_folder / VECTORS_FILE).is_file():
        raise FlairsuiteError(f"{source_folder / VECTORS_FILE}: no vectors; train them with `flairsuite train-fasttext --lang ... --name {source_name}`")
    if not names:
        raise FlairsuiteError("name at least one labeled dataset with --dataset (e.g. --dataset sturm)")
    words = corpus_words(names, root)
    source = KeyedVectors.load(str(source_folder / VECTORS_FILE))
    vectors = compact(source, words)
    with atomic_folder(vectors_folder(out, name), force) as temp:
        vectors.save(str(temp / VECTORS_FILE))
        summary = {
            "source": f"fasttext:{source_name}",
            "source_sha256": files_digest(source_folder),
            "datasets": list(names),
            "corpus_words": len(words),
            "entries": len(vectors),
            "uncovered_words": sum(1 for word in words if not any(form in source.key_to_index for form in lookup_forms(word))),
            "dim": vectors.vector_size,
            "bytes": sum(p.stat().st_size for p in vectors_files(temp)),
        }
        write_summary(temp, summary)
    return summary
