"""The Entity-Fix rule of Zöllner et al. 2021 (small-BERT German NER, §4.3, Table 5) on raw BIO (IOB2) tags.

An `I-X` is *forbidden* (ill-formed) unless the previous tag is `B-X` or `I-X`. Entity-Fix walks
left to right over the already-fixed tags and replaces a forbidden `I-X` with the previous token's
fixed tag, a `B-Y` becoming `I-Y`; an `I-X` at the sentence start becomes `B-X`:

    Prediction  I-Per O O B-Loc I-Org I-Org I-Loc
    Fixed       B-Per O O B-Loc I-Loc I-Loc I-Loc

The output is always well-formed. The rule has to run on a tagger's raw tags, before any span
decoding: Flair's decoding repairs ill-formed tags itself, which would make the rule a no-op.

Two conventions for an ill-formed `I-X`, and where each one is used:

- **paper** (`entity_fix`, the paper's reference code): it joins the entity before it, and after
  `O` it becomes `O` itself, so a run of stray `I-` tags after `O` disappears.
- **Flair** (`flair_repair`): `flair.data.get_spans_from_bio`, which `SequenceTagger.predict` uses
  to turn tags into spans, starts a new `X` entity there, as if the tag were `B-X` (the CoNLL
  `conlleval` convention, also `flairsuite.corpora.tags.normalize_bio`). Flair's own
  `evaluate` scores and predicted `Span` labels follow it.

The suite's tables score the raw tags with seqeval in strict IOB2 mode (`seqeval.metrics` with
`mode="strict", scheme=IOB2`), with no repair: without Entity-Fix an ill-formed chunk is never a
true positive (seqeval drops it: it is neither matched nor counted as a prediction, and a `B-X`
followed by `I-Y` is scored as the entity `B-X` alone); with Entity-Fix the tags are first fixed by
the paper's rule. The paper's claim that Entity-Fix never lowers entity F1 holds when every
ill-formed chunk (a `B-` tag or a stray `I-` tag plus all `I-` tags after it, whatever their type)
is one false positive; it fails under seqeval's default and strict modes (see
`tests/test_entity_fix.py`).
"""

from collections import Counter
from collections.abc import Sequence

from flairsuite.corpora.tags import OUTSIDE, normalize_bio, split_tag


def entity_fix(tags: Sequence[str]) -> list[str]:
    """`tags` with every forbidden `I-X` replaced by the paper's Entity-Fix rule (the paper convention)."""
    fixed: list[str] = []
    for tag in tags:
        prefix, entity_type = split_tag(tag)
        if prefix != "I":
            fixed.append(tag)
        elif not fixed:
            fixed.append(f"B-{entity_type}")
        elif split_tag(fixed[-1])[1] == entity_type:
            fixed.append(tag)
        else:
            fixed.append(_continuation(fixed[-1]))
    return fixed


def _continuation(previous: str) -> str:
    """The tag that continues `previous`: `O` stays `O`, `B-Y` and `I-Y` give `I-Y`."""
    prefix, entity_type = split_tag(previous)
    return OUTSIDE if prefix == OUTSIDE else f"I-{entity_type}"


def flair_repair(tags: Sequence[str]) -> list[str]:
    """`tags` with every forbidden `I-X` turned into `B-X` (the Flair convention).

    Flair's `get_spans_from_bio` decodes `tags` and the returned well-formed tags to the same spans.
    """
    return normalize_bio(tags, "bio", Counter())
