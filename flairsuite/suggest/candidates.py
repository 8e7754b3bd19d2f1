"""The candidates `suggest` ranks, and the sentences each writes (`--unit`).

- *Candidates*: the sentences of each file in order, a sentence of fewer than `--min-tokens` tokens (default 5: "Fz.",
  "Feld 4.10.19.") merged with the sentences after it until the group has that many, a short rest at the file's end
  joining the group before it (`Windows`); a candidate's measure is that of its tokens together (`Scores.combined`).
- `--unit sentence`: the candidate itself is written. `--unit window` (the default): the candidate with the
  `--neighbours` (default 2) sentences before and after it in its file; a candidate inside the window of one chosen
  before is passed over (it is written as context already), and the windows of one file that overlap or touch are
  written as one unit. `--unit document`: the candidates are the documents, each file of a folder or each paragraph (text
  between blank lines) of a single plain-text file, ranked by the measure over all their tokens; the document is written
  whole, its most uncertain group of sentences being the selected one (`document_candidate`).

`Windows` makes the candidates of a file as its sentences are scored, holding only the sentences a window still needs.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from flairsuite.models.uncertainty import Scores
from flairsuite.suggest.scoring import Scored
from flairsuite.suggest.units import Unit

NEIGHBOURS = 2  # sentences on each side of a candidate that `--unit window` writes
MIN_TOKENS = 5  # a candidate's tokens at least: shorter sentences are merged with the following ones
PREVIEW_CHARS = 80  # characters of a candidate's text in the ranking

@dataclass(frozen=True)
class Candidate:
    """A candidate as the pool keeps it: its place in TEXTS, source (`file:line`), the tokens and scores of its sentences,
    measure and preview; `context`, the sentences written for it (itself, its window, or its whole document), and
    `selected`, the places of its own first and last sentence in its file."""

    index: int
    source: str
    tokens: list[list[str]]
    scores: list[Scores]
    value: float
    preview: str
    context: tuple[Scored, ...] = ()
    selected: tuple[int, int] = (0, 0)

    @staticmethod
    def of(index: int, source: str, group: Sequence[Scored], measure: str, context: Sequence[Scored] = (),
           selected: Optional[Sequence[Scored]] = None) -> "Candidate":
        """The candidate of the sentences `group` (ranked by their measure together), written with `context`; `selected`:
        the sentences it marks (default: `group`)."""
        scores = [found.scores for found in group]
        preview = ""
        for found in group:
            preview += (" " if preview else "") + found.flat
            if len(preview) >= PREVIEW_CHARS:
                break
        marked = selected if selected is not None else group
        return Candidate(index, source, [list(found.words) for found in group], scores, Scores.combined(scores).measure(measure),
                         preview[:PREVIEW_CHARS], tuple(context) or tuple(group), (marked[0].index, marked[-1].index))

    @property
    def path(self) -> Optional[str]:
        return self.context[0].path if self.context else None

    @property
    def written(self) -> tuple[int, int]:
        """The places of the first and last sentence it writes in its file."""
        return (self.context[0].index, self.context[-1].index) if self.context else self.selected


class Windows:
    """The candidates of one file's sentences as they are scored (`add`, then `finish`): sentences of fewer than
    `min_tokens` tokens merged with the following ones (a short rest at the file's end with the group before it), each
    group with the `neighbours` sentences before and after it, held until those are read."""

    def __init__(self, path: str, min_tokens: int, neighbours: int) -> None:
        self.path, self.min_tokens, self.neighbours = path, min_tokens, neighbours
        self.held: list[Scored] = []  # the recent sentences: the groups not handed on yet and their neighbours
        self.group: list[Scored] = []  # the group being filled
        self.last: Optional[list[Scored]] = None  # the last full group, which a short rest at the file's end joins
        self.ready: list[list[Scored]] = []  # full groups waiting for the sentences after them

    def add(self, found: Sequence[Scored]) -> list[tuple[list[Scored], list[Scored]]]:
        """The (group, window) pairs complete once `found`, the next sentences of the file, are read."""
        done = []
        for sentence in found:
            self.held.append(sentence)
            self.group.append(sentence)
            if sum(len(s.words) for s in self.group) >= self.min_tokens:
                if self.last is not None:
                    self.ready.append(self.last)
                self.last, self.group = self.group, []
            done.extend(self.release(final=False))
        return done

    def finish(self) -> list[tuple[list[Scored], list[Scored]]]:
        """The pairs left at the file's end."""
        rest = (self.last or []) + self.group
        self.last, self.group = None, []
        if rest:
            self.ready.append(rest)
        return self.release(final=True)

    def release(self, final: bool) -> list[tuple[list[Scored], list[Scored]]]:
        newest = self.held[-1].index if self.held else -1
        done = []
        while self.ready and (final or self.ready[0][-1].index + self.neighbours <= newest):
            group = self.ready.pop(0)
            first, last = group[0].index - self.neighbours, group[-1].index + self.neighbours
            done.append((group, [s for s in self.held if first <= s.index <= last]))
        waiting = self.ready[0] if self.ready else (self.last or self.group)
        keep = (waiting[0].index if waiting else newest + 1) - self.neighbours
        self.held = [s for s in self.held if s.index >= keep]
        return done


def document_candidate(index: int, unit: Unit, found: list[Scored], measure: str, min_tokens: int) -> Candidate:
    """A document as a candidate: ranked by its measure over all its tokens, written whole, its most uncertain group of
    sentences (merged as `Windows` merges them) the selected one."""
    windows = Windows(unit.source, min_tokens, 0)
    groups = [group for group, _ in [*windows.add(found), *windows.finish()]]
    best = max(groups, key=lambda group: Scores.combined([s.scores for s in group]).measure(measure))
    return Candidate.of(index, unit.source, found, measure, found, best)
