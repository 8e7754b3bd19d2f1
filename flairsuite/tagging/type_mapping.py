"""A labelled split's entity types renamed to another corpus's: the source corpora of a transfer run
(`flairsuite.experiments.transfer`) speak the target's types before a tagger with the target's dictionary trains on them.

Entities are read as spans (`bio_spans`) and written back as BIO: an entity of a mapped type keeps its tokens under
the target type (`B-` at its start, so two neighbours that map to one type stay two entities); an entity of any other
type becomes `O` (dropped). Tokens and spacing are not touched, so the split's cached embeddings are the unmapped ones'.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from flairsuite.corpora.tags import OUTSIDE, bio_spans
from flairsuite.tagging.data import LabeledSplit


@dataclass(frozen=True)
class MappedSplit:
    """A split with its types mapped, and how many of its entities of each source type were kept and dropped."""

    split: LabeledSplit
    kept: Counter
    dropped: Counter


def mapped_tags(tags: list[str], mapping: Mapping[str, str], kept: Counter, dropped: Counter) -> list[str]:
    """The BIO `tags` of one sentence with each entity's type mapped (or `O` where its type is not mapped); counts each
    entity by source type into `kept` or `dropped`."""
    mapped = [OUTSIDE] * len(tags)
    for start, end, entity_type in bio_spans(tags):
        target = mapping.get(entity_type)
        if target is None:
            dropped[entity_type] += 1
            continue
        kept[entity_type] += 1
        mapped[start] = f"B-{target}"
        mapped[start + 1 : end] = [f"I-{target}"] * (end - start - 1)
    return mapped


def map_types(split: LabeledSplit, mapping: Mapping[str, str]) -> MappedSplit:
    """`split` with the entity types of `mapping` (source type -> target type) renamed and every other entity dropped."""
    kept: Counter = Counter()
    dropped: Counter = Counter()
    strings: dict[str, str] = {}  # one object per distinct tag, as `LabeledSplit.of` stores them
    tags = [[strings.setdefault(tag, tag) for tag in mapped_tags(sentence, mapping, kept, dropped)] for sentence in split.tags]
    return MappedSplit(LabeledSplit(split.texts, split.spaces, tags, split.starts, split.breaks), kept, dropped)
