"""Tag validation, scheme conversion (IOB1, BIOES -> BIO) and the one repair rule for ill-formed BIO.

Repair rule (the CoNLL `conlleval` and Flair convention): an `I-X` that does not continue an
entity of type X (it follows `O`, the sentence start, or a tag of another type) starts a new
entity, i.e. it becomes `B-X`. Each repair is counted by kind so that `corpora stats` can show it.

BIOES is read as Flair reads it: `S-X` as `B-X`, `E-X` as `I-X`, then the BIO rule above.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

OUTSIDE = "O"
BIO_PREFIXES = ("B", "I")
# scheme -> prefixes it allows; IO files are read as BIO by the reader (`io_as_bio`), so their tags are BIO here
PREFIXES = {"bio": BIO_PREFIXES, "iob1": BIO_PREFIXES, "bioes": ("B", "I", "E", "S"), "io": BIO_PREFIXES}
AS_BIO = {"S": "B", "E": "I"}  # BIOES prefixes read as BIO ones


def split_tag(tag: str, prefixes: Sequence[str] = BIO_PREFIXES) -> tuple[str, Optional[str]]:
    """`B-PER` -> (`B`, `PER`); `O` -> (`O`, None); raises ValueError for a prefix not in `prefixes` or anything else."""
    if tag == OUTSIDE:
        return OUTSIDE, None
    prefix, sep, entity_type = tag.partition("-")
    if not sep or prefix not in prefixes or not entity_type:
        expected = ", ".join(["O", *(f"{p}-TYPE" for p in prefixes[:-1])]) + f" or {prefixes[-1]}-TYPE"
        raise ValueError(f"ill-formed tag '{tag}' (expected {expected})")
    return prefix, entity_type


@dataclass
class SchemeEvidence:
    """Counts over the raw tags of a whole corpus, from which `scheme` picks its tagging scheme.

    The rule (`scheme: auto`): any `E-` or `S-` tag means BIOES. Otherwise the entity starts
    decide: an `I-X` that does not continue an X entity (after `O`, at sentence start, or after
    another type) starts one in IOB1 and is an error in BIO; if such starts outnumber the `B-`
    tags the corpus is IOB1, else BIO (also when it has no entity at all).
    """

    b_tags: int = 0
    i_starts: int = 0
    bioes_tags: int = 0
    types: set[str] = field(default_factory=set)

    def add(self, tags: Sequence[str]) -> None:
        """Count one sentence's tags; ValueError (from `split_tag`) at a tag that fits no scheme."""
        previous: Optional[str] = None
        for tag in tags:
            prefix, entity_type = split_tag(tag, PREFIXES["bioes"])
            self.b_tags += prefix == "B"
            self.i_starts += prefix == "I" and entity_type != previous
            self.bioes_tags += prefix in AS_BIO
            if entity_type is not None:
                self.types.add(entity_type)
            previous = entity_type

    def scheme(self) -> tuple[str, str]:
        """(scheme, the reason in words) by the rule above."""
        if self.bioes_tags:
            return "bioes", f"{self.bioes_tags} E-/S- tags"
        counts = f"{self.i_starts} entities start with I-, {self.b_tags} with B-"
        return ("iob1" if self.i_starts > self.b_tags else "bio"), counts


def normalize_bio(
    tags: Sequence[str], scheme: str, repairs: Counter, tag_map: Optional[dict[str, str]] = None
) -> list[str]:
    """Well-formed BIO tags from validated `tags` in `scheme` (`bio`, `iob1` or `bioes`).

    IOB1 `I-X` starting an entity is converted silently (that is the scheme); in BIO (and BIOES,
    read as BIO) data the same situation is ill-formed, gets repaired and is counted in `repairs`.
    """
    out: list[str] = []
    previous_type: Optional[str] = None
    for tag in tags:
        prefix, entity_type = split_tag(tag, PREFIXES[scheme])
        prefix = AS_BIO.get(prefix, prefix)
        if prefix == "I" and entity_type != previous_type:
            if scheme != "iob1":
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


def io_type(tag: str) -> Optional[str]:
    """The entity type of an IO tag: `PER` or `I-PER` -> `PER`, `O` -> None; ValueError for a B-, E- or S- prefix."""
    if tag == OUTSIDE:
        return None
    if tag[:2] in ("B-", "E-", "S-"):
        raise ValueError(f"tag '{tag}' has a {tag[:2]} prefix, but scheme io has none (tags are O, TYPE or I-TYPE): use scheme auto")
    return tag[2:] if tag.startswith("I-") else tag


def io_as_bio(tags: Sequence[str]) -> list[str]:
    """IO tags as BIO: an entity starts at each change of type (so two adjacent entities of one type are one)."""
    out, previous = [], None
    for tag in tags:
        entity_type = io_type(tag)
        out.append(OUTSIDE if entity_type is None else f"{'I' if entity_type == previous else 'B'}-{entity_type}")
        previous = entity_type
    return out


def continues(previous: str, tag: str, scheme: str) -> bool:
    """Whether the raw `tag` continues the entity of the raw tag before it (IO: the same type; else an I- or E- tag of the
    type of a B- or I- tag); an ill-formed tag continues nothing (it is reported where it is checked)."""
    try:
        if scheme == "io":
            return io_type(tag) is not None and io_type(tag) == io_type(previous)
        prefix, entity_type = split_tag(tag, PREFIXES["bioes"])
        before, previous_type = split_tag(previous, PREFIXES["bioes"])
    except ValueError:
        return False
    return prefix in ("I", "E") and before in ("B", "I") and entity_type == previous_type
