"""Recall of a tagger on the gold entities its training split holds (the same tokens and type) and on those it does not,
and its false positives split the same way.

A tagger that learned the training entities by heart, and little of the contexts that mark a name, finds the seen
entities and misses the new ones. Two taggers that score alike on dev can part on a test set for that reason: the
split's recall on new entities says whether they do. Matching is strict, as the tables' scorer (seqeval, strict IOB2):
an entity is found when the predicted tags hold its well-formed chunk with the exact bounds and type; a false positive
is a predicted well-formed chunk that is no gold one, counted as `known` when a training entity has its tokens and
type (a memorised name in the wrong place) and `new` otherwise.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from flairsuite.results.lengths import strict_entities

Entity = tuple[tuple[str, ...], str]  # tokens, type


@dataclass(frozen=True)
class SeenCounts:
    """Gold entities seen in train and new, how many of each were found, and the false positives by the same rule."""

    seen_gold: int
    seen_found: int
    new_gold: int
    new_found: int
    false_known: int
    false_new: int

    def line(self) -> str:
        """The counts as one report line (recalls in percent with their gold counts)."""
        def recall(found: int, gold: int) -> str:
            return f"{100 * found / gold:.1f} % of {gold:,}" if gold else "none in the split"

        return (f"recall on entities seen in train (same tokens and type): {recall(self.seen_found, self.seen_gold)}; "
                f"on new ones: {recall(self.new_found, self.new_gold)}; false positives: {self.false_known:,} with a training "
                f"entity's tokens and type, {self.false_new:,} other")


def entities(tokens: Sequence[Sequence[str]], tags: list[list[str]]) -> set[Entity]:
    """The (tokens, type) of every well-formed chunk of `tags` (one tag list per sentence of `tokens`)."""
    return {(tuple(tokens[sentence][start:end]), kind) for sentence, start, end, kind in strict_entities(tags)}


def seen_counts(tokens: Sequence[Sequence[str]], gold: list[list[str]], predicted: list[list[str]], known: Iterable[Entity]) -> SeenCounts:
    """`SeenCounts` of `predicted` against `gold` (tags per sentence of `tokens`), `known`: the training split's `entities`."""
    known = set(known)
    expected, found = strict_entities(gold), strict_entities(predicted)

    def is_known(entity: tuple[int, int, int, str]) -> bool:
        sentence, start, end, kind = entity
        return (tuple(tokens[sentence][start:end]), kind) in known

    seen = {entity for entity in expected if is_known(entity)}
    wrong = found - expected
    known_wrong = sum(is_known(entity) for entity in wrong)
    return SeenCounts(len(seen), len(seen & found), len(expected - seen), len((expected - seen) & found), known_wrong, len(wrong) - known_wrong)
