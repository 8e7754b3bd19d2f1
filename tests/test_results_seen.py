"""`results.seen_entity_recall`: recall on the entities train holds and on new ones, strict as the scorer; false positives by the same rule."""

from flairsuite.results.seen_entity_recall import SeenCounts, entities, seen_counts

TOKENS = [["Franz", "Marc", "fuhr", "nach", "Berlin", ",", "Wien", "und", "Paris"], ["Der", "Marc", "-", "Preis"]]
GOLD = [["B-pers", "I-pers", "O", "O", "B-place", "O", "B-place", "O", "B-place"], ["O", "O", "O", "O"]]


def test_seen_and_new_entities_and_false_positives():
    known = {(("Franz", "Marc"), "pers"), (("Berlin",), "place"), (("Marc",), "pers")}
    predicted = [["B-pers", "I-pers", "O", "O", "O", "O", "I-place", "O", "B-place"],  # Berlin missed; Wien ill-formed: dropped
                 ["O", "B-pers", "O", "B-place"]]  # a known name where none is, and a new one
    counts = seen_counts(TOKENS, GOLD, predicted, known)
    assert counts == SeenCounts(seen_gold=2, seen_found=1, new_gold=2, new_found=1, false_known=1, false_new=1)
    assert counts.line() == ("recall on entities seen in train (same tokens and type): 50.0 % of 2; on new ones: 50.0 % of 2; "
                             "false positives: 1 with a training entity's tokens and type, 1 other")


def test_a_type_is_part_of_what_was_seen_and_gold_tags_give_full_recall():
    known = entities(TOKENS[:1], GOLD[:1])
    assert known == {(("Franz", "Marc"), "pers"), (("Berlin",), "place"), (("Wien",), "place"), (("Paris",), "place")}
    other_type = [[("B-place" if tag == "B-pers" else "I-place" if tag == "I-pers" else tag) for tag in GOLD[0]], GOLD[1]]
    counts = seen_counts(TOKENS, other_type, other_type, known)  # Franz Marc as a place: not what train holds
    assert (counts.seen_gold, counts.new_gold, counts.seen_found + counts.new_found) == (3, 1, 4)
    assert (counts.false_known, counts.false_new) == (0, 0)
    assert "on new ones: none in the split" in seen_counts(TOKENS[:1], GOLD[:1], GOLD[:1], known).line()
