"""Tag validation, scheme conversion (IOB1 -> BIO) and the one repair rule for ill-formed BIO.

Repair rule (the CoNLL `conlleval` and Flair convention): an `I-X` that does not continue an
entity of type X (it follows `O`, the sentence start, or a tag of another type) starts a new
entity, i.e. it becomes `B-X`. Each repair is counted by kind so that `corpora stats` can show it.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Optional

OUTSIDE = "O"


def split_tag(tag: str) -> tuple[str, Optional[str]]:
    """`B-PER` -> (`B`, `PER`); `O` -> (`O`, None); raises ValueError for anything else."""
    if tag == OUTSIDE:
        return OUTSIDE, None
    prefix, sep, entity_type = tag.partition("-")
    if not sep or prefix not in ("B", "I") or not entity_type:
        raise ValueError(f"ill-formed tag '{tag}' (expected O, B-TYPE or I-TYPE)")
    return prefix, entity_type


def normalize_bio(
    tags: Sequence[str], scheme: str, repairs: Counter, tag_map: Optional[dict[str, str]] = None
) -> list[str]:
    """Well-formed BIO tags from validated `tags` in `scheme` (`bio` or `iob1`).

    IOB1 `I-X` starting an entity is converted silently (that is the scheme); in BIO data the
    same situation is ill-formed, gets repaired and is counted in `repairs`.
    """
    out: list[str] = []
    previous_type: Optional[str] = None
    for tag in tags:
        prefix, entity_type = split_tag(tag)
        if prefix == "I" and entity_type != previous_type:
            if scheme == "bio":
                after = "start" if not out else ("O" if previous_type is None else "another type")
                repairs[f"I-X after {after} -> B-X"] += 1
            prefix = "B"
        previous_type = entity_type
        if entity_type is not None and tag_map:
            entity_type = tag_map[entity_type]
        out.append(OUTSIDE if entity_type is None else f"{prefix}-{entity_type}")
    return out


def bio_spans(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end exclusive, type) of every entity in BIO `tags`.

    Meant for well-formed tags; an `I-X` that does not continue an X entity starts one (the
    repair rule), so that ill-formed input never extends a span of another type.
    """
    spans: list[tuple[int, int, str]] = []
    for index, tag in enumerate(tags):
        if tag.startswith("I-") and spans and spans[-1][1] == index and spans[-1][2] == tag[2:]:
            start, _, entity_type = spans[-1]
            spans[-1] = (start, index + 1, entity_type)
        elif tag.startswith(("B-", "I-")):
            spans.append((index, index + 1, tag[2:]))
    return spans
