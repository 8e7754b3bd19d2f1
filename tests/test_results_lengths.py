"""Recall by gold-entity length (`flairsuite results --by-length`) on hand-made predictions with answers counted by hand."""


import pytest
from conftest import one_error_line
from test_results import metrics, run, table_rows, write_run

from flairsuite.errors import InputError
from flairsuite.results.lengths import bucket_of, ill_formed, length_counts, read_predictions

# Sentence 1: PER of 2 tokens found; LOC of 1 token missed (the prediction's I-LOC starts no entity: ill-formed).
# Sentence 2: ORG of 4 tokens, found by the CRF-like tags, cut in two by the Map-like tags (B-ORG I-ORG B-ORG I-ORG).
GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG", "I-ORG", "O"]]
MAP = [["B-PER", "I-PER", "O", "I-LOC"], ["B-ORG", "I-ORG", "B-ORG", "I-ORG", "O"]]
CRF = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "I-ORG", "I-ORG", "I-ORG", "O"]]


def predictions_text(gold: list[list[str]], predicted: list[list[str]]) -> str:
    sentences = ["\n".join(f"w{i}\t{g}\t{p}" for i, (g, p) in enumerate(zip(gs, ps))) for gs, ps in zip(gold, predicted)]
    return "\n\n".join(sentences) + "\n"


def test_buckets_have_both_ends_included():
    assert [bucket_of(n) for n in (1, 2, 3, 4, 7, 8, 40)] == ["1", "2-3", "2-3", "4-7", "4-7", "8+", "8+"]


def test_counts_match_strictly_and_count_ill_formed_tags():
    counts = length_counts(GOLD, MAP)
    assert counts["gold"] == {"1": 1, "2-3": 1, "4-7": 1, "8+": 0}
    assert counts["found"] == {"1": 0, "2-3": 1, "4-7": 0, "8+": 0}  # the split ORG and the ill-formed LOC count as misses
    assert counts["ill_formed"] == 1 and counts["tokens"] == 9
    assert length_counts(GOLD, CRF)["found"] == {"1": 0, "2-3": 1, "4-7": 1, "8+": 0}
    assert ill_formed([["I-PER", "I-PER", "B-LOC", "I-PER", "O", "I-LOC"]]) == 3  # at the start, after another type, after O


def test_reading_round_trips_also_with_crlf(tmp_path):
    path = tmp_path / "predictions.tsv"
    path.write_text(predictions_text(GOLD, MAP), encoding="utf-8")
    assert read_predictions(path) == (GOLD, MAP)
    path.write_bytes(predictions_text(GOLD, MAP).replace("\n", "\r\n").encode("utf-8"))
    assert read_predictions(path) == (GOLD, MAP)


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("w0\tB-PER\tB-PER\nw1 I-PER I-PER\n", ":2", "tabs"),
        ("w0\tB-PER\tB-PER\nw1\tI-PER\tS-PER\n", ":2", "'S-PER' is not O, B-TYPE or I-TYPE"),
        ("w0\tPER\tO\n", ":1", "'PER' is not O"),
        ("\n\n", "", "no tokens"),
    ],
)
def test_a_bad_predictions_file_is_one_line_naming_file_and_line(tmp_path, text, where, message):
    path = tmp_path / "predictions.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_predictions(path)
    assert "\n" not in str(err.value) and f"{path}{where}" in str(err.value) and message in str(err.value)


def test_cli_table_per_corpus_leaves_out_entity_fix_variants(tmp_path):
    for tagger, predicted in (("map", MAP), ("map-crf", CRF)):
        for seed in (1, 2):
            folder = write_run(tmp_path, metrics(tagger=tagger, seed=seed)).parent
            (folder / "predictions.tsv").write_text(predictions_text(GOLD, predicted), encoding="utf-8")
    write_run(tmp_path, metrics(tagger="map", seed=3, entity_fix=True))  # a variant: no predictions of its own, no row
    result = run("results", str(tmp_path), "--by-length")
    assert result.exit_code == 0, result.output
    section = result.output.split("test recall (%) of the 3 gold entities by length in tokens")[1]
    assert "| 1 token (1) | 2-3 tokens (1) | 4-7 tokens (1) | ill-formed chunks per 1,000 tokens |" in section  # no 8+ column: no such entity
    rows = table_rows(section)
    assert rows["proposed / map"] == ["**0.00 ± 0.00 (2)**", "**100.00 ± 0.00 (2)**", "0.00 ± 0.00 (2)", f"{1000 / 9:.2f}"]
    assert rows["proposed / map-crf"] == ["**0.00 ± 0.00 (2)**", "**100.00 ± 0.00 (2)**", "**100.00 ± 0.00 (2)**", "0.00"]


def test_cli_without_predictions_is_one_error_line(tmp_path):
    write_run(tmp_path, metrics())
    result = run("results", str(tmp_path), "--by-length")
    assert "predictions.tsv" in one_error_line(result)


def test_runs_scored_on_different_test_sets_are_an_error(tmp_path):
    for seed, gold in ((1, GOLD), (2, [GOLD[0]])):  # seed 2's test set lacks the second sentence
        folder = write_run(tmp_path, metrics(tagger="map", seed=seed)).parent
        (folder / "predictions.tsv").write_text(predictions_text(gold, gold), encoding="utf-8")
    line = one_error_line(run("results", str(tmp_path), "--by-length"))
    assert "different test sets" in line and "seed-1" in line and "seed-2" in line


def test_recorded_counts_need_no_predictions_and_give_entity_fix_rows(tmp_path):
    fixed = [["B-PER", "I-PER", "O", "B-LOC"], MAP[1]]  # Entity-Fix turned the ill-formed I-LOC into B-LOC
    write_run(tmp_path, metrics(tagger="map", test_lengths=length_counts(GOLD, MAP)))
    write_run(tmp_path, metrics(tagger="map", entity_fix=True, run="sturm/proposed/map/seed-1/entity-fix", test_lengths=length_counts(GOLD, fixed)))
    result = run("results", str(tmp_path), "--by-length")  # no predictions.tsv anywhere: a clean clone
    assert result.exit_code == 0, result.output
    section = result.output.split("strict match")[1]  # after the comparison table
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| proposed")]
    assert rows == [
        ["proposed", "map", "no", "0.00 ± – (1)", "**100.00 ± – (1)**", "**0.00 ± – (1)**", f"{1000 / 9:.2f}"],
        ["proposed", "map", "yes", "**100.00 ± – (1)**", "**100.00 ± – (1)**", "**0.00 ± – (1)**", "0.00"],  # the LOC found after the fix
    ]


def test_a_malformed_record_is_one_line_naming_the_file(tmp_path):
    path = write_run(tmp_path, metrics(test_lengths={"gold": {"1": 2}, "found": {"1": 3}, "ill_formed": 0, "tokens": 9}))
    line = one_error_line(run("results", str(tmp_path), "--by-length"))
    assert str(path) in line and "test_lengths" in line
