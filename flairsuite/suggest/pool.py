"""TEXTS scored into a bounded pool of candidates, and the top N chosen from it with near-duplicates kept apart.

Of the candidates only a bounded pool is kept (`Pool`): per set of words the most uncertain candidate, of these the
`POOL_FACTOR` * N most uncertain (at least `MIN_POOL`), and N of the others (exact repeats of a kept candidate's words,
which the near-duplicate rule only uses to fill up); each holds the sentences it would write (its window), as their
text, tokens, tags and scores. So a letter formula repeated ten thousand times holds one place; the choice differs from
that over all candidates only where more than the pool's sets of words are needed to find N that are not
near-duplicates of each other. A document is held whole while it is scored. A progress bar in bytes of TEXTS goes to
stderr. The choice (`choose`) passes over a near-duplicate of one chosen before (used only to fill up N) and a
candidate inside the window of one chosen before.
"""

import heapq
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import torch

from flairsuite.errors import InputError
from flairsuite.inference.tagger import BATCH_SIZE
from flairsuite.inference.textfile import progress
from flairsuite.models.card import model_segmentation
from flairsuite.models.selection import NEAR_DUPLICATE, jaccard, word_set
from flairsuite.suggest.candidates import MIN_TOKENS, NEIGHBOURS, Candidate, Windows, document_candidate
from flairsuite.suggest.scoring import Scored, Scorer, scored
from flairsuite.suggest.texts import texts_files, unit_batches

POOL_FACTOR = 20  # candidates kept for the near-duplicate rule: POOL_FACTOR * N, at least MIN_POOL
MIN_POOL = 1000


class Pool:
    """The candidates `pick` may need, bounded: per set of words (`word_set`) the most uncertain candidate (ties: the
    earlier), at most `size` of these sets (the most uncertain), and the `fill` best of the others. A candidate whose
    word set an earlier-ranked one has is a near-duplicate of it (Jaccard 1) and is only ever picked to fill up the top
    N, so keeping N of them loses nothing; only the sets beyond `size` are left out. `seen` counts all candidates."""

    def __init__(self, size: int, fill: int) -> None:
        self.size, self.fill = size, fill
        self.seen = 0
        self.best: dict[frozenset[str], Candidate] = {}
        self.heap: list[tuple[tuple[float, int], frozenset[str], Candidate]] = []  # entries of `best`, the least uncertain at the root
        self.others: list[tuple[tuple[float, int], Candidate]] = []  # the `fill` best near-duplicates, the least uncertain at the root

    @staticmethod
    def rank(candidate: Candidate) -> tuple[float, int]:
        """Higher for a candidate ranked earlier: the more uncertain, then the earlier in TEXTS."""
        return candidate.value, -candidate.index

    def add(self, candidate: Candidate) -> None:
        self.seen += 1
        words = word_set([token for tokens in candidate.tokens for token in tokens])
        held = self.best.get(words)
        if held is not None and self.rank(held) >= self.rank(candidate):
            return self.keep_other(candidate)
        if held is not None:
            self.keep_other(held)
        elif len(self.best) >= self.size:
            while self.best.get(self.heap[0][1]) is not self.heap[0][2]:  # entries of candidates replaced since
                heapq.heappop(self.heap)
            if self.heap[0][0] >= self.rank(candidate):
                return None
            del self.best[heapq.heappop(self.heap)[1]]
        self.best[words] = candidate
        heapq.heappush(self.heap, (self.rank(candidate), words, candidate))
        if len(self.heap) > 2 * self.size:
            self.heap = [(self.rank(kept), kept_words, kept) for kept_words, kept in self.best.items()]
            heapq.heapify(self.heap)
        return None

    def keep_other(self, candidate: Candidate) -> None:
        """Keep a near-duplicate if it is among the `fill` best of them."""
        entry = (self.rank(candidate), candidate)
        if len(self.others) < self.fill:
            heapq.heappush(self.others, entry)
        elif entry[0] > self.others[0][0]:
            heapq.heapreplace(self.others, entry)

    def candidates(self) -> list[Candidate]:
        """The kept candidates in the order they were read."""
        return sorted([*self.best.values(), *(entry[1] for entry in self.others)], key=lambda candidate: candidate.index)


def scored_pool(model: torch.nn.Module, texts: Path, n: int, unit: str, measure: str, batch_size: Optional[int], join: bool = True,
                neighbours: int = NEIGHBOURS, min_tokens: int = MIN_TOKENS) -> Pool:
    """TEXTS read and scored batch by batch, the most uncertain candidates kept (module docstring; `join`: words broken at line
    ends joined); no candidates: a one-line error."""
    files = texts_files(texts, unit)
    scorer = Scorer(model, batch_size or BATCH_SIZE)
    pool = Pool(max(POOL_FACTOR * n, MIN_POOL), n)
    windows: Optional[Windows] = None
    with progress(sum(path.stat().st_size for path in files), "suggest") as bar:
        for units, covered in unit_batches(texts, files, unit, model_segmentation(model), join):
            flat = scorer([s for u in units for s in u.sentences]) if units else []
            position = 0
            for found in units:
                sentences = scored(found, flat[position : position + len(found.sentences)])
                position += len(found.sentences)
                if unit == "document":
                    pool.add(document_candidate(pool.seen, found, sentences, measure, min_tokens))
                    continue
                if windows is None or windows.path != str(found.path):
                    add_windows(pool, windows, [], measure)
                    windows = Windows(str(found.path), min_tokens, neighbours if unit == "window" else 0)
                add_windows(pool, windows, sentences, measure)
            bar.update(covered)
        add_windows(pool, windows, [], measure)
    if not pool.seen:
        raise InputError(texts, None, "no sentences to rank")
    return pool


def add_windows(pool: "Pool", windows: Optional[Windows], sentences: list[Scored], measure: str) -> None:
    """The candidates `sentences` complete into the pool; no sentences: the file's end (the rest goes in)."""
    if windows is None:
        return
    for group, context in windows.add(sentences) if sentences else windows.finish():
        pool.add(Candidate.of(pool.seen, f"{group[0].path}:{group[0].original.line}", group, measure, context))


def choose(candidates: Sequence[Candidate], order: Sequence[int], n: int) -> tuple[list[int], int, int]:
    """The first `n` of `order` (indices into `candidates`) by the near-duplicate rule of `flairsuite.models.selection.pick`
    (a candidate whose word set has a Jaccard similarity of at least NEAR_DUPLICATE with one chosen before is skipped, and
    used only to fill up), passing over a candidate that lies inside what one chosen before writes (its window); with the
    numbers of near-duplicates and of candidates inside a chosen window passed over."""
    chosen: list[int] = []
    sets: list[frozenset[str]] = []
    written: dict[Optional[str], list[tuple[int, int]]] = {}
    skipped, inside = [], 0

    def within(candidate: Candidate) -> bool:
        first, last = candidate.selected
        return candidate.path is not None and any(a <= first and last <= b for a, b in written.get(candidate.path, []))

    def take(index: int, words: frozenset[str]) -> None:
        chosen.append(index)
        sets.append(words)
        if candidates[index].path is not None:
            written.setdefault(candidates[index].path, []).append(candidates[index].written)

    for index in order:
        if len(chosen) == n:
            break
        candidate = candidates[index]
        words = word_set([token for tokens in candidate.tokens for token in tokens])
        if within(candidate):
            inside += 1
        elif any(jaccard(words, other) >= NEAR_DUPLICATE for other in sets):
            skipped.append((index, words))
        else:
            take(index, words)
    filled = 0
    for index, words in skipped:
        if len(chosen) < n and not within(candidates[index]):
            take(index, words)
            filled += 1
    return chosen, len(skipped) - filled, inside
