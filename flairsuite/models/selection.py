"""Which sentences to annotate next: the most uncertain first, near-duplicates kept apart.

The rule (`pick`): candidates are taken in order of decreasing uncertainty (ties: the earlier one
first); a candidate is skipped when its word set has a Jaccard similarity of at least `NEAR_DUPLICATE`
(0.8) with that of a candidate already picked. A word set (`word_set`) is the set of the sentence's tokens
lowercased, without tokens made only of punctuation (a sentence of punctuation only keeps those tokens).
So the letter formula "Lieber Herwarth Walden !" is picked once, not fifty times. Should fewer than `n`
candidates remain, the skipped ones fill the rest in their order.
"""

import unicodedata
from collections.abc import Sequence

NEAR_DUPLICATE = 0.8  # Jaccard similarity of word sets at which a candidate counts as a near-duplicate


def _punctuation(token: str) -> bool:
    return all(unicodedata.category(char)[0] in "PS" for char in token)


def word_set(tokens: Sequence[str]) -> frozenset[str]:
    """The lowercased tokens of a sentence without the punctuation-only ones (all of them if nothing else is left)."""
    words = frozenset(token.lower() for token in tokens if not _punctuation(token))
    return words or frozenset(token.lower() for token in tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def ranked(values: Sequence[float]) -> list[int]:
    """Indices of `values` from the highest to the lowest, ties in index order."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


def pick(order: Sequence[int], tokens: Sequence[Sequence[str]], n: int, threshold: float = NEAR_DUPLICATE) -> list[int]:
    """The first `n` of `order` (indices into `tokens`) with near-duplicates of an earlier pick skipped (module docstring)."""
    chosen: list[int] = []
    sets: list[frozenset[str]] = []
    skipped: list[int] = []
    for index in order:
        if len(chosen) == n:
            break
        words = word_set(tokens[index])
        if any(jaccard(words, other) >= threshold for other in sets):
            skipped.append(index)
            continue
        chosen.append(index)
        sets.append(words)
    return chosen + skipped[: n - len(chosen)]
