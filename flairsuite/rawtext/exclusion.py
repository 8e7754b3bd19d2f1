"""Keep evaluation text out of LM and word-vector training: find and cut held-out sentences inside raw documents.

A held-out sentence is a dev or test sentence of at least `MIN_TOKENS` tokens of any registered
labeled dataset of the language (NER or PoS: `LABELED_TASKS`) that is present locally. Matching is exact on whitespace-normalised
token sequences and runs over every token position of a document, not just whole lines. For a
language written without spaces (the raw set's `segmentation: characters`, Chinese) the tokens are
the characters: a held-out sentence of at least `MIN_CHARACTERS` characters is cut wherever its
characters occur in a row (spaces ignored), and the rest of the text is kept as it was.
"""

import logging
from collections.abc import Iterable
from pathlib import Path

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset, names
from flairsuite.corpora.tasks import LABELED_TASKS

log = logging.getLogger("flairsuite")

MIN_TOKENS = 5
MIN_CHARACTERS = 10  # the character form: shorter sequences recur by chance in a large text
HELDOUT_SPLITS = ("dev", "test")


def heldout_sentences(language: str, root: Path) -> tuple[list[tuple[str, ...]], list[Path]]:
    """Token sequences (>= MIN_TOKENS) of every local NER or PoS dev/test split of `language`, and their files."""
    sentences: list[tuple[str, ...]] = []
    files: list[Path] = []
    for name in names():
        spec = dataset(name)
        if spec.task not in LABELED_TASKS or spec.language != language:
            continue
        for split in HELDOUT_SPLITS:
            path = spec.locate(spec.splits[split], root) if split in spec.splits else None
            if path is None:
                continue
            files.append(path)
            sentences.extend(tuple(s.tokens) for s in read_split(spec, path).sentences if len(s.tokens) >= MIN_TOKENS)
    log.info("%d held-out sentences from %d labeled dev/test files", len(sentences), len(files))
    return sentences, files


class SentenceIndex:
    """Finds held-out token sequences inside documents, keyed by their first `prefix` tokens (MIN_TOKENS; characters: MIN_CHARACTERS)."""

    def __init__(self, sentences: Iterable[tuple[str, ...]], by_character: bool = False) -> None:
        self.by_character = by_character
        self.prefix = MIN_CHARACTERS if by_character else MIN_TOKENS
        if by_character:
            sentences = (tuple(c for c in "".join(sentence) if not c.isspace()) for sentence in sentences)
        self.by_prefix: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for sentence in set(sentences):
            if len(sentence) >= self.prefix:
                self.by_prefix.setdefault(sentence[: self.prefix], []).append(sentence)
        for candidates in self.by_prefix.values():
            candidates.sort(key=len, reverse=True)
        self.first_tokens = {prefix[0] for prefix in self.by_prefix}

    def __len__(self) -> int:
        return sum(len(c) for c in self.by_prefix.values())

    def _match(self, tokens: list[str], start: int) -> int:
        """Length of the longest held-out sentence starting at `tokens[start]`, else 0."""
        for candidate in self.by_prefix.get(tuple(tokens[start : start + self.prefix]), ()):
            if tuple(tokens[start : start + len(candidate)]) == candidate:
                return len(candidate)
        return 0

    def _cuts(self, tokens: list[str]) -> list[tuple[int, int]]:
        """(start, stop) token ranges of the held-out sentences found in `tokens`, left to right, longest first."""
        cuts, position = [], 0
        while position < len(tokens):
            length = self._match(tokens, position) if tokens[position] in self.first_tokens else 0
            if length:
                cuts.append((position, position + length))
                position += length
            else:
                position += 1
        return cuts

    def remove(self, text: str) -> tuple[str, int]:
        """`text` without any held-out sentence, and how many were cut (words: whitespace normalised where one was cut)."""
        if not self.by_prefix:
            return text, 0
        if self.by_character:
            at = [i for i, char in enumerate(text) if not char.isspace()]
            cuts = self._cuts([text[i] for i in at])
            kept, last = [], 0
            for start, stop in cuts:
                kept.append(text[last : at[start]])
                last = at[stop - 1] + 1
            return ("".join(kept) + text[last:], len(cuts)) if cuts else (text, 0)
        tokens = text.split()
        cuts = self._cuts(tokens)
        if not cuts:
            return text, 0
        kept, last = [], 0
        for start, stop in cuts:
            kept += tokens[last:start]
            last = stop
        return " ".join(kept + tokens[last:]), len(cuts)
