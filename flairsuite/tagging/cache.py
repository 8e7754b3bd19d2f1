"""Embed once: the frozen embeddings of a split, computed by Flair once and kept on disk as a memory map.

Character LMs and word vectors do not change while a tagger trains, so the vectors of every token
of a split are computed once per embedding spec, with the very Flair embedding the saved model
holds, and stored as float16 `.npy` arrays under `cache/embeddings/` (below $FLAIRSUITE_HOME).
An array's name is a digest of the embedding's artifact files and of the split's tokens, so every
tagger, seed, stack and later experiment that needs the same vectors maps the same file, and a
retrained LM or a changed corpus gets new ones; for an embedding that reads document context (`@contextN`) it also
digests N and where the split's documents start, and for a character LM on a split with line-end break marks (a
corpus read with `line_break`), which it reads joined, where the marks are. Rows are tokens in corpus order; a split of
sentences with lengths n1, n2, ... occupies rows [0, n1), [n1, n1 + n2), ...

Embeddings that train with the tagger (`char`, and `bert:` in a fine-tuned run) are not cacheable:
`frozen(spec, fine_tune)` says which are (the kind's entry in `flairsuite.embeddings.kinds` decides).
"""

import gc
import hashlib
import json
from pathlib import Path
from typing import Optional

import numpy as np
import torch
from flair.embeddings import TokenEmbeddings
from tqdm import tqdm

from flairsuite import embeddings
from flairsuite.embeddings import artifact_digest, context_chars, joins_breaks, length_batches, parse, resolve, token_vectors
from flairsuite.files.atomic import atomic_file, write_json
from flairsuite.files.locks import waited_for
from flairsuite.files.paths import embeddings_cache_dir
from flairsuite.tagging.data import LabeledSplit

CACHE_DTYPE = np.float16  # LM states lie in [-1, 1] and word vectors are small: half precision keeps ~3 digits
EMBED_BATCH_CHARS = 20_000  # characters per batch handed to Flair's embed()


def frozen(spec: str, fine_tune: bool = False) -> bool:
    """Whether the embedding of `spec` is fixed while a tagger trains (and so can be cached)."""
    return embeddings.frozen(spec, fine_tune)


def tokens_digest(split: LabeledSplit) -> str:
    """sha256 of the tokens and the whitespace after them (1 or 0, as Flair's `Token.whitespace_after`), sentence by sentence."""
    digest = hashlib.sha256()
    for texts, spaces in zip(split.texts, split.spaces):
        tokens = [[text, space] for text, space in zip(texts, spaces)]
        digest.update(json.dumps(tokens, ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


def documents_digest(split: LabeledSplit) -> str:
    """sha256 of where the split's documents start (the sentence indices, ascending)."""
    return hashlib.sha256(json.dumps(sorted(split.starts)).encode()).hexdigest()


def breaks_digest(split: LabeledSplit) -> str:
    """sha256 of where the split's line-end break marks are (sentence index and its marks, ascending)."""
    return hashlib.sha256(json.dumps(sorted((index, list(marks)) for index, marks in split.breaks.items())).encode()).hexdigest()


def reads_joined(spec: str, split: LabeledSplit) -> bool:
    """Whether `spec`'s vectors of `split` are read with its words cut at line ends whole: a character LM on a split with marks."""
    return bool(split.breaks) and joins_breaks(spec)


def cache_path(spec: str, split: LabeledSplit, home: Path, cache: Optional[Path] = None) -> Path:
    """Where the vectors of `split` under `spec` are (or will be) stored, below `cache` (default: the home's cache folder)."""
    source = f"{artifact_digest(spec, home)}:{tokens_digest(split)}"
    if chars := context_chars(spec):  # the vectors depend on each sentence's neighbours too
        source += f":context{chars}:{documents_digest(split)}"
    if reads_joined(spec, split):  # and on the words cut at line ends, read whole
        source += f":joined:{breaks_digest(split)}"
    key = hashlib.sha256(source.encode()).hexdigest()
    kind, name = parse(spec)
    return (cache or embeddings_cache_dir(home)) / f"{kind}-{name}" / f"{key[:24]}.npy"


def compute(embedding: TokenEmbeddings, split: LabeledSplit, target: Path, desc: str) -> None:
    """Embed `split` with `embedding` and write the token vectors to `target` atomically (Flair sentences built a batch at a time)."""
    offsets = np.concatenate([[0], np.cumsum([len(texts) for texts in split.texts])])
    context = getattr(embedding, "context_chars", 0)  # a ContextFlairEmbeddings reads that many more characters a sentence
    with atomic_file(target) as temp:
        array = np.lib.format.open_memmap(temp, mode="w+", dtype=CACHE_DTYPE, shape=(int(offsets[-1]), embedding.embedding_length))
        chars = {i: sum(map(len, texts)) + len(texts) + context for i, texts in enumerate(split.texts)}  # the tokenized string and a newline
        with torch.no_grad(), tqdm(total=int(offsets[-1]), desc=desc, unit="tok", leave=False) as bar:
            for batch in length_batches(chars, EMBED_BATCH_CHARS):  # longest first
                chosen = split.flair_sentences(batch, context)
                vectors = token_vectors(embedding, chosen).cpu().numpy().astype(CACHE_DTYPE)
                row = 0
                for index, sentence in zip(batch, chosen):
                    array[offsets[index] : offsets[index + 1]] = vectors[row : row + len(sentence)]
                    row += len(sentence)
                bar.update(row)
        array.flush()
        del array
    write_json(target.with_suffix(".json"), {"sentences": len(split), "tokens": int(offsets[-1]), "dim": embedding.embedding_length})


def cached_vectors(spec: str, split: LabeledSplit, home: Path, desc: str, cache: Optional[Path] = None) -> tuple[np.ndarray, bool]:
    """The read-only memory map of the vectors of `split` under `spec`, and whether it was computed now (`cache`: `cache_path`)."""
    target = cache_path(spec, split, home, cache)
    computed = False
    if not target.is_file():
        lock = target.with_name(target.name + ".lock")  # grid workers needing it at once: one computes, the rest wait and read it
        with waited_for(lock, lambda: tqdm.write(f"{desc}: waiting for another process computing {target}")):
            if not target.is_file():
                compute(resolve(spec, home, reads_joined(spec, split)), split, target, desc)
                # a Flair embedding sits in reference cycles: collected now, not at the collector's next full pass, so that a
                # grid's runs do not hold one copy per computed split (fasttext:de: a 190 MB table each)
                gc.collect()
                computed = True
    return np.load(target, mmap_mode="r"), computed
