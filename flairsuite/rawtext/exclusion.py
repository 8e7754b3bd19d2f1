"""Keep NER evaluation text out of LM training: find and cut held-out sentences inside raw documents.

A held-out sentence is a dev or test sentence of at least `MIN_TOKENS` tokens of any registered
NER dataset of the language that is present locally. Matching is exact on whitespace-normalised
token sequences and runs over every token position of a document, not just whole lines.
"""

import logging
from collections.abc import Iterable
from pathlib import Path

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset, names

log = logging.getLogger("flairsuite")

MIN_TOKENS = 5
HELDOUT_SPLITS = ("dev", "test")


def heldout_sentences(language: str, root: Path) -> tuple[list[tuple[str, ...]], list[Path]]:
    """Token sequences (>= MIN_TOKENS) of every local NER dev/test split of `language`, and their files."""
    sentences: list[tuple[str, ...]] = []
    files: list[Path] = []
    for name in names():
        spec = dataset(name)
        if spec.task != "ner" or spec.language != language:
            continue
        for split in HELDOUT_SPLITS:
            path = spec.locate(spec.splits[split], root) if split in spec.splits else None
            if path is None:
                continue
            files.append(path)
            sentences.extend(tuple(s.tokens) for s in read_split(spec, path).sentences if len(s.tokens) >= MIN_TOKENS)
    log.info("%d held-out sentences from %d NER dev/test files", len(sentences), len(files))
    return sentences, files


class SentenceIndex:
    """Finds held-out token sequences inside documents, keyed by their first MIN_TOKENS tokens."""

    def __init__(self, sentences: Iterable[tuple[str, ...]]) -> None:
        self.by_prefix: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for sentence in set(sentences):
            self.by_prefix.setdefault(sentence[:MIN_TOKENS], []).append(sentence)
        for candidates in self.by_prefix.values():
            candidates.sort(key=len, reverse=True)
        self.first_tokens = {prefix[0] for prefix in self.by_prefix}

    def __len__(self) -> int:
        return sum(len(c) for c in self.by_prefix.values())

    def _match(self, tokens: list[str], start: int) -> int:
        """Length of the longest held-out sentence starting at `tokens[start]`, else 0."""
        for candidate in self.by_prefix.get(tuple(tokens[start : start + MIN_TOKENS]), ()):
            if tuple(tokens[start : start + len(candidate)]) == candidate:
                return len(candidate)
        return 0

    def remove(self, text: str) -> tuple[str, int]:
        """`text` without any held-out sentence (whitespace normalised where one was cut), and how many were cut."""
        if not self.by_prefix:
            return text, 0
        tokens = text.split()
        kept: list[str] = []
        removed = position = 0
        while position < len(tokens):
            length = self._match(tokens, position) if tokens[position] in self.first_tokens else 0
            if length:
                removed += 1
                position += length
            else:
                kept.append(tokens[position])
                position += 1
        return (" ".join(kept), removed) if removed else (text, 0)
