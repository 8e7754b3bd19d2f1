"""Entity-Fix: Table 5 of the paper, the sentence-start case, and the claim "Entity-Fix never lowers entity F1".

The claim is checked per single (gold, predicted) sequence pair, F1 = 2 TP / (predicted + gold)
with 0/0 = 0 (seqeval's `zero_division=0`), over random pairs with two entity types and lengths
1-8 (fixed seeds). It holds when every ill-formed chunk is one false positive, where a chunk is a
`B-` tag or a stray `I-` tag plus all `I-` tags after it of any type (the paper's view: the rule
only touches tokens that already form an incorrect entity). Per pair, the fix then never lowers
the true positives nor raises the predictions, so the claim holds micro-averaged over any batch too.
It fails under seqeval's default mode, under strict IOB2, and when chunks end at a type change as
in conlleval (`B-A I-B` = the entity `B-A` plus an ill-formed `I-B`): the tests find and print a
shortest counterexample for each.
"""

import random
from collections.abc import Callable
from typing import Optional

import pytest
from flair.data import get_spans_from_bio
from seqeval.metrics import f1_score
from seqeval.scheme import IOB2

from flairsuite.corpora.tags import bio_spans
from flairsuite.models.entity_fix import entity_fix, flair_repair

TAGS = ("O", "B-A", "I-A", "B-B", "I-B")
Pair = tuple[list[str], list[str]]
Chunk = tuple[int, int, Optional[str]]  # (start, end exclusive, type; None when ill-formed)


def random_pair(rng: random.Random) -> Pair:
    """A well-formed gold sequence of length 1-8 over two types and an arbitrary prediction of the same length."""
    length = rng.randint(1, 8)
    return flair_repair(rng.choices(TAGS, k=length)), rng.choices(TAGS, k=length)


def random_pairs(seed: int, count: int) -> list[Pair]:
    """`count` random pairs."""
    rng = random.Random(seed)
    return [random_pair(rng) for _ in range(count)]


PAIRS = random_pairs(seed=5, count=3000)


def chunks(tags: list[str], split_on_type_change: bool) -> list[Chunk]:
    """Chunks of `tags`: a `B-` tag or a stray `I-` tag plus the `I-` tags after it (of its type only if split)."""
    found: list[list[str]] = []
    starts: list[int] = []
    previous = "O"
    for index, tag in enumerate(tags):
        continues = tag.startswith("I-") and previous != "O" and not (split_on_type_change and previous[2:] != tag[2:])
        if continues:
            found[-1].append(tag)
        elif tag != "O":
            found.append([tag])
            starts.append(index)
        previous = tag
    return [(start, start + len(chunk), well_formed_type(chunk)) for start, chunk in zip(starts, found)]


def well_formed_type(chunk: list[str]) -> Optional[str]:
    """The type of a chunk `B-X I-X*`, None for anything else."""
    kind = chunk[0][2:]
    return kind if chunk[0].startswith("B-") and all(tag[2:] == kind for tag in chunk) else None


def chunk_f1(gold: list[str], predicted: list[str], split_on_type_change: bool) -> float:
    """F1 where the entities are the well-formed chunks and each ill-formed chunk is one false positive."""
    gold_entities = set(chunks(gold, split_on_type_change))
    found = chunks(predicted, split_on_type_change)
    correct = sum(1 for chunk in found if chunk[2] is not None and chunk in gold_entities)
    total = len(found) + len(gold_entities)
    return 2 * correct / total if total else 0.0


SCORERS: dict[str, Callable[[list[str], list[str]], float]] = {
    "seqeval default": lambda gold, pred: f1_score([gold], [pred], zero_division=0),
    "seqeval strict IOB2": lambda gold, pred: f1_score([gold], [pred], mode="strict", scheme=IOB2, zero_division=0),
    "ill-formed chunk = FP": lambda gold, pred: chunk_f1(gold, pred, split_on_type_change=False),
    "conlleval chunks, ill-formed = FP": lambda gold, pred: chunk_f1(gold, pred, split_on_type_change=True),
}
# A shortest pair on which Entity-Fix lowers F1, for each scorer under which the claim fails.
KNOWN_COUNTEREXAMPLES: dict[str, Pair] = {
    "seqeval default": (["O", "B-A"], ["O", "I-A"]),
    "seqeval strict IOB2": (["B-A", "O"], ["B-A", "I-B"]),
    "conlleval chunks, ill-formed = FP": (["B-A", "O"], ["B-A", "I-B"]),
}


def lowers(scorer: Callable[[list[str], list[str]], float], pair: Pair) -> bool:
    """Whether fixing the prediction of `pair` lowers its F1 under `scorer`."""
    gold, predicted = pair
    return scorer(gold, entity_fix(predicted)) < scorer(gold, predicted) - 1e-12


def test_table_5_prediction_becomes_its_fixed_row():
    # Tokens: Peter lebt in Frank _furt am Main
    prediction = ["I-Per", "O", "O", "B-Loc", "I-Org", "I-Org", "I-Loc"]
    assert entity_fix(prediction) == ["B-Per", "O", "O", "B-Loc", "I-Loc", "I-Loc", "I-Loc"]


@pytest.mark.parametrize(
    "tags, fixed",
    [
        (["I-A"], ["B-A"]),
        (["I-A", "I-A", "O"], ["B-A", "I-A", "O"]),
        (["I-A", "I-B"], ["B-A", "I-A"]),  # the fixed B-A is what the I-B after it continues
    ],
)
def test_i_at_sentence_start_becomes_b(tags, fixed):
    assert entity_fix(tags) == fixed


@pytest.mark.parametrize(
    "tags, fixed",
    [
        (["O", "I-A", "I-A", "B-B"], ["O", "O", "O", "B-B"]),  # paper convention: after O it becomes O
        (["B-A", "I-B", "I-A"], ["B-A", "I-A", "I-A"]),
        (["B-A", "I-A", "I-B"], ["B-A", "I-A", "I-A"]),
        (["B-A", "B-B", "I-B", "O"], ["B-A", "B-B", "I-B", "O"]),  # well-formed: unchanged
    ],
)
def test_forbidden_i_takes_the_previous_fixed_tag(tags, fixed):
    assert entity_fix(tags) == fixed


def test_the_two_conventions_differ_after_o():
    assert entity_fix(["O", "I-A"]) == ["O", "O"]
    assert flair_repair(["O", "I-A"]) == ["O", "B-A"]


@pytest.mark.parametrize("fix", [entity_fix, flair_repair])
def test_output_is_well_formed_and_a_fixed_point(fix):
    for _, predicted in PAIRS:
        fixed = fix(predicted)
        assert flair_repair(fixed) == fixed
        assert fix(fixed) == fixed


def test_flair_repair_is_what_flair_span_decoding_reads():
    for _, predicted in PAIRS:
        flair_spans = [(indices[0], indices[-1] + 1, kind) for indices, _, kind in get_spans_from_bio(list(predicted))]
        assert flair_spans == bio_spans(flair_repair(predicted))


def test_fix_never_lowers_f1_when_every_ill_formed_chunk_is_a_false_positive():
    scorer = SCORERS["ill-formed chunk = FP"]
    assert not [pair for pair in PAIRS if lowers(scorer, pair)]
    assert any(scorer(gold, entity_fix(predicted)) > scorer(gold, predicted) for gold, predicted in PAIRS)


@pytest.mark.parametrize("name", sorted(KNOWN_COUNTEREXAMPLES))
def test_fix_can_lower_f1_under_other_scorers(name, record_property):
    scorer = SCORERS[name]
    found = sorted((pair for pair in PAIRS if lowers(scorer, pair)), key=lambda pair: len(pair[0]))
    assert found, f"no counterexample under {name}"
    gold, predicted = found[0]
    message = (
        f"{name}: {len(found)} of {len(PAIRS)} pairs lowered, e.g. gold {gold} pred {predicted} "
        f"fixed {entity_fix(predicted)}: F1 {scorer(gold, predicted):.3f} -> {scorer(gold, entity_fix(predicted)):.3f}"
    )
    print(message)
    record_property("counterexample", message)
    assert lowers(scorer, KNOWN_COUNTEREXAMPLES[name])
