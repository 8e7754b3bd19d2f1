"""Tag validation, IOB1 -> BIO conversion, the one BIO repair rule, and span extraction."""

from collections import Counter

import pytest

from flairsuite.corpora.tags import bio_spans, normalize_bio, split_tag

START = "I-X after start -> B-X"
AFTER_O = "I-X after O -> B-X"
AFTER_OTHER = "I-X after another type -> B-X"


@pytest.mark.parametrize(
    "tag, expected",
    [
        ("O", ("O", None)),
        ("B-PER", ("B", "PER")),
        ("I-LOC", ("I", "LOC")),
        ("B-creative-work", ("B", "creative-work")),  # WNUT-17 types contain a hyphen
        ("I-PERderiv", ("I", "PERderiv")),
    ],
)
def test_split_tag_well_formed(tag, expected):
    assert split_tag(tag) == expected


@pytest.mark.parametrize("tag", ["", "B", "B-", "-PER", "X-PER", "b-PER", "S-PER", "E-PER", "BPER", "o", "0", "I_PER"])
def test_split_tag_rejects_ill_formed(tag):
    with pytest.raises(ValueError, match="ill-formed tag"):
        split_tag(tag)


def test_well_formed_bio_is_unchanged_and_not_counted():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O"]
    repairs = Counter()
    assert normalize_bio(tags, "bio", repairs) == tags
    assert repairs == Counter()


@pytest.mark.parametrize(
    "tags, expected, kind",
    [
        (["I-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"], START),
        (["O", "I-PER", "I-PER"], ["O", "B-PER", "I-PER"], AFTER_O),
        (["B-LOC", "I-PER"], ["B-LOC", "B-PER"], AFTER_OTHER),
        (["B-LOC", "I-LOC", "I-PER", "I-PER"], ["B-LOC", "I-LOC", "B-PER", "I-PER"], AFTER_OTHER),
    ],
)
def test_bio_repair_rule_each_kind(tags, expected, kind):
    repairs = Counter()
    assert normalize_bio(tags, "bio", repairs) == expected
    assert repairs == Counter({kind: 1})


def test_bio_repairs_are_counted_per_occurrence():
    repairs = Counter()
    tags = ["I-A", "O", "I-A", "I-A", "O", "I-A", "B-B", "I-A", "I-B"]
    assert normalize_bio(tags, "bio", repairs) == ["B-A", "O", "B-A", "I-A", "O", "B-A", "B-B", "B-A", "B-B"]
    assert repairs == Counter({START: 1, AFTER_O: 2, AFTER_OTHER: 2})


def test_repairs_add_to_an_existing_counter():
    repairs = Counter({AFTER_O: 3})
    normalize_bio(["O", "I-A"], "bio", repairs)
    assert repairs[AFTER_O] == 4


def test_iob1_is_converted_without_counting_repairs():
    repairs = Counter()
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O", "I-MISC"]
    assert normalize_bio(iob1, "iob1", repairs) == [
        "B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "O", "B-MISC",
    ]
    assert repairs == Counter()


def test_tag_map_is_applied_after_repair_on_original_types():
    # LER coarse: RR and AN both become PER; an I-AN after B-RR is still a new entity (repaired)
    tag_map = {"RR": "PER", "AN": "PER", "LD": "LOC"}
    repairs = Counter()
    out = normalize_bio(["B-RR", "I-RR", "I-AN", "O", "B-LD"], "bio", repairs, tag_map)
    assert out == ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    assert repairs == Counter({AFTER_OTHER: 1})
    assert bio_spans(out) == [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")]


def test_normalize_bio_raises_on_ill_formed_tag():
    with pytest.raises(ValueError, match="'B_PER'"):
        normalize_bio(["O", "B_PER"], "bio", Counter())


def test_bio_spans_of_well_formed_tags():
    tags = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "I-LOC", "I-LOC", "O", "B-ORG"]
    assert bio_spans(tags) == [(0, 2, "PER"), (2, 3, "PER"), (4, 7, "LOC"), (8, 9, "ORG")]


def test_bio_spans_empty_and_all_outside():
    assert bio_spans([]) == []
    assert bio_spans(["O", "O"]) == []


def test_bio_spans_never_extends_a_span_of_another_type():
    # ill-formed input (not produced by normalize_bio) must neither crash nor mislabel
    assert bio_spans(["I-PER", "I-PER", "O", "I-LOC", "B-PER", "I-LOC"]) == [
        (0, 2, "PER"),
        (3, 4, "LOC"),
        (4, 5, "PER"),
        (5, 6, "LOC"),
    ]


def test_bio_spans_agree_with_normalize_bio():
    raw = ["O", "I-A", "I-A", "B-B", "I-A", "I-B", "O", "I-B"]
    assert bio_spans(raw) == bio_spans(normalize_bio(raw, "bio", Counter()))
