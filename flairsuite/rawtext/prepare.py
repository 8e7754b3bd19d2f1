"""Prepare raw text once for character-LM training (cached, deterministic).

Documents are streamed from the language's raw-text sets (or `--corpus` files), every sentence of
at least 5 tokens that occurs in a registered NER or PoS dev or test split of the language is cut out of
them, and each document goes to train, valid or test (1 % each, at most 2 M characters each,
decided by a hash of its position). The character dictionary is built from the corpus; the
rarest characters (together at most `unk_fraction` of all characters, the paper's 0.0001 %)
become `<unk>`. Each split is stored as text and as a memory-mapped uint16 array of character ids.

Text for continuing a trained LM (`train-charlm --init`) is prepared with that LM's dictionary (`base_chars`, in its
id order): a character the LM lacks becomes `<unk>` (`new_chars: unk`) or, unless it is among the rarest, gets an id
after the LM's own (`new_chars: extend`). `exclude` names more labeled corpora (registered names of any language, or
own corpus folders) whose dev and test sentences are cut out too. `text_files` reads an experiment file's `text:`
setting (`adapt:`, `self_training:`) into the files `--corpus` reads.
"""

import hashlib
import json
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from flair.data import Dictionary
from tqdm import tqdm

from flairsuite.corpora.raw import iter_documents, source_path
from flairsuite.corpora.registry import FileSpec, FormatSpec, dataset, language_segmentation
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_json
from flairsuite.files.locks import folder_built_once
from flairsuite.rawtext.exclusion import SentenceIndex, excluded_sentences, heldout_sentences
from flairsuite.rawtext.settings import CONTINUATION_KEYS, PrepareConfig
from flairsuite.values import show

PREPARE_VERSION = 2  # the prepared files' format and the leave-out's matching (the cache key holds it; 2: surface-text units)
PREPARED_SPLITS = ("train", "valid", "test")
DELIMITER = "\n"  # between documents, as Flair's LanguageModel.document_delimiter
ALWAYS_KEPT = (" ", DELIMITER)  # Flair pads with " "; documents end with the delimiter
LINES = FileSpec(name="corpus", files=(), format=FormatSpec(kind="lines", join_line_ends=True))  # the user's text files
CHUNK_CHARS = 1 << 24


def char_dictionary(chars: Iterable[str]) -> Dictionary:
    """Flair's character dictionary: `<unk>` at 0, then `chars` in order (the ids of the prepared arrays)."""
    dictionary = Dictionary(add_unk=True)
    for char in chars:
        dictionary.add_item(char)
    return dictionary


@dataclass
class Source:
    """One input file of the corpus."""

    name: str
    path: Path
    spec: FileSpec
    encoding: str = "utf-8"

    def identity(self) -> list:
        joined = ["line ends joined"] if self.spec.format.join_line_ends else []  # the text read differs from the file's lines
        return [self.name, str(self.path.resolve()), file_digest(self.path), *joined]


@dataclass
class PreparedCorpus:
    """A prepared corpus folder: `<split>.txt`, `<split>.bin` (uint16 ids), `vocab.json`, `meta.json`."""

    path: Path
    meta: dict = field(default_factory=dict)

    def array(self, split: str) -> np.ndarray:
        """The character ids of `split`, memory-mapped (read-only)."""
        return np.memmap(self.path / f"{split}.bin", dtype=np.uint16, mode="r")

    def text_path(self, split: str) -> Path:
        return self.path / f"{split}.txt"

    @property
    def chars(self) -> list[str]:
        """The dictionary's characters; index i + 1 is the id of chars[i] (0 is `<unk>`)."""
        return json.loads((self.path / "vocab.json").read_text(encoding="utf-8"))["chars"]


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes: the cache key follows content, not timestamps (a fresh copy of the same data hits the cache)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def corpus_sources(raw_set: str, corpus: Iterable[str], root: Path) -> list[Source]:
    """The input files: `corpus` paths (files or folders of .txt/.txt.gz), else the registry's `raw_set`."""
    paths = [Path(p) for p in corpus]
    if not paths:
        spec = dataset(raw_set)
        return [Source(name, source_path(spec, entry, root), entry, spec.encoding) for name, entry in spec.sources.items()]
    sources = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.name.endswith((".txt", ".txt.gz")))
            if not files:
                raise FlairsuiteError(f"{path}: folder holds no .txt or .txt.gz files")
        elif path.is_file():
            files = [path]
        else:
            raise FlairsuiteError(f"{path}: no such file or folder")
        sources.extend(Source(f.name, f, LINES) for f in files)
    return sources


def text_files(value: Any, base: Path, setting: str, hint: str = "") -> tuple[Path, ...]:
    """The raw text files an experiment-file setting names (`adapt: text`, `self_training.text`): `value` is a file or
    folder, or a list of them, relative to `base`; a folder gives its .txt and .txt.gz files, as `--corpus` reads it (so a
    letter added to the folder changes a fingerprint of the files). A file named twice counts once. Errors name `setting`;
    `hint` ends the one for a malformed value."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(item, str) and item for item in items):
        raise FlairsuiteError(f"{setting} must be a file or folder, or a list of them, of raw text (found {show(value)}){hint}")
    paths = []
    for item in items:
        path = (base / item).resolve()
        if not path.exists():
            raise FlairsuiteError(f"{setting}: {item} is not a file or folder ({path})")
        try:
            paths.extend(source.path for source in corpus_sources("", [str(path)], base))
        except FlairsuiteError as err:
            raise FlairsuiteError(f"{setting}: {item}: {err}") from None
    return tuple(dict.fromkeys(paths))


def config_record(config: PrepareConfig) -> dict:
    """The settings as the cache key and meta.json hold them: `CONTINUATION_KEYS` only where set (earlier keys and
    records stay as they were)."""
    return {key: value for key, value in asdict(config).items() if key not in CONTINUATION_KEYS or value != getattr(PrepareConfig, key)}


def cache_key(config: PrepareConfig, sources: list[Source], heldout_files: list[Path]) -> str:
    """A digest of everything the prepared data depends on."""
    identity = {
        "version": PREPARE_VERSION,
        "config": config_record(config),
        "sources": [s.identity() for s in sources],
        "heldout": [[str(p.resolve()), file_digest(p)] for p in heldout_files],
    }
    if language_segmentation(config.language) != "words":  # keys of word-segmented languages stay as they were
        identity["segmentation"] = language_segmentation(config.language)
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def assign_split(index: int, seed: int, fraction: float) -> str:
    """Deterministic split of the document at position `index`."""
    bucket = zlib.crc32(f"{seed}:{index}".encode()) / 2**32
    if bucket < fraction:
        return "valid"
    if bucket < 2 * fraction:
        return "test"
    return "train"


def rare_characters(counts: Counter, unk_fraction: float) -> set[str]:
    """The rarest characters whose counts together are at most `unk_fraction` of all characters."""
    budget = unk_fraction * sum(counts.values())
    rare: set[str] = set()
    for char, count in sorted(counts.items(), key=lambda item: (item[1], item[0])):
        if budget < count:
            break
        if char not in ALWAYS_KEPT:
            rare.add(char)
            budget -= count
    return rare


def _documents(sources: list[Source]) -> Iterator[tuple[Source, str]]:
    for source in sources:
        with tqdm(unit=" chars", unit_scale=True, desc=f"prepare {source.name}", leave=False) as bar:
            for _, text in iter_documents(source.path, source.spec, source.encoding):
                bar.update(len(text))
                yield source, text


def split_documents(
    config: PrepareConfig, sources: list[Source], index: SentenceIndex, folder: Path
) -> tuple[dict, Counter]:
    """Write each document (minus held-out sentences) to `<split>.txt`; per-source counts and char counts."""
    handles = {split: (folder / f"{split}.txt").open("w", encoding="utf-8", newline="\n") for split in PREPARED_SPLITS}
    stats = {s.name: {"path": str(s.path), "documents": 0, "characters": 0, "sentences_removed": 0} for s in sources}
    sizes = dict.fromkeys(PREPARED_SPLITS, 0)
    counts: Counter = Counter()
    try:
        for position, (source, text) in enumerate(_documents(sources)):
            text, removed = index.remove(text)
            stats[source.name]["sentences_removed"] += removed
            if not text:
                continue
            split = assign_split(position, config.seed, config.heldout_fraction)
            if split != "train" and sizes[split] + len(text) > config.max_heldout_chars:
                split = "train"
            handles[split].write(text + DELIMITER)
            sizes[split] += len(text) + 1
            counts.update(text)
            counts[DELIMITER] += 1
            stats[source.name]["documents"] += 1
            stats[source.name]["characters"] += len(text)
    finally:
        for handle in handles.values():
            handle.close()
    return stats, counts


def encode_split(text_path: Path, lookup: np.ndarray, out: Path) -> int:
    """Encode a text file into uint16 character ids, vectorised chunk by chunk; the number of ids."""
    total = 0
    with text_path.open(encoding="utf-8", newline="") as source, out.open("wb") as sink:
        while chunk := source.read(CHUNK_CHARS):
            codepoints = np.frombuffer(chunk.encode("utf-32-le"), dtype="<u4")
            lookup[codepoints].tofile(sink)
            total += len(codepoints)
    return total


def build(config: PrepareConfig, sources: list[Source], index: SentenceIndex, folder: Path) -> dict:
    """Prepare the corpus into `folder`; its metadata."""
    stats, counts = split_documents(config, sources, index, folder)
    if not counts:
        raise FlairsuiteError("the corpus holds no text: " + ", ".join(str(s.path) for s in sources))
    rare = rare_characters(counts, config.unk_fraction)
    by_frequency = [c for c, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if c not in rare]
    added: list[str] = []
    if config.base_chars:
        added = [c for c in by_frequency if c not in set(config.base_chars)] if config.new_chars == "extend" else []
        chars = [*config.base_chars, *added]
        rare = {c for c in counts if c not in set(chars)}
    else:
        chars = by_frequency
    if len(chars) + 1 >= 2**16:
        raise FlairsuiteError(f"{len(chars)} distinct characters do not fit uint16 ids; raise --unk-fraction")
    lookup = np.zeros(0x110000, dtype=np.uint16)  # 0 = <unk>
    lookup[[ord(c) for c in chars]] = np.arange(1, len(chars) + 1, dtype=np.uint16)
    split_sizes = {split: encode_split(folder / f"{split}.txt", lookup, folder / f"{split}.bin") for split in PREPARED_SPLITS}
    empty = [split for split, size in split_sizes.items() if size == 0]
    if empty:
        documents = sum(s["documents"] for s in stats.values())
        raise FlairsuiteError(
            f"the corpus ({documents} documents) is too small to hold out {' and '.join(empty)} text; "
            "use more text or a larger --heldout-fraction"
        )
    write_json(folder / "vocab.json", {"chars": chars, "counts": [counts[c] for c in chars]})
    return {
        "config": config_record(config),
        "sources": stats,
        "heldout_sentences": len(index),
        "splits": split_sizes,
        "vocabulary": len(chars) + 1,
        "unk_characters": {"distinct": len(rare), "occurrences": sum(counts[c] for c in rare)},
        **({"added_characters": added} if config.base_chars else {}),
    }


def prepare(config: PrepareConfig, root: Path, cache: Path) -> PreparedCorpus:
    """The prepared corpus for `config` below `cache`, built on first use (atomically, as a whole folder)."""
    sources = corpus_sources(config.raw_set, config.corpus, root)
    sentences, heldout_files = heldout_sentences(config.language, root)
    if config.exclude:
        more, files = excluded_sentences(config.exclude, root)
        sentences = [*sentences, *more]
        heldout_files = [*heldout_files, *(path for path in files if path not in heldout_files)]
    folder = cache / f"{config.language}-{cache_key(config, sources, heldout_files)}"

    def build_here(temp: Path) -> dict:
        meta = build(config, sources, SentenceIndex(sentences, by_character=language_segmentation(config.language) == "characters"), temp)
        return {**meta, "heldout_files": [str(p) for p in heldout_files]}

    return PreparedCorpus(folder, folder_built_once(folder, build_here, lambda: tqdm.write(f"waiting for another process preparing {folder}")))
