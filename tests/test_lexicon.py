"""Entity lexicons: new-word discovery, lexicon files, matching (Algorithm 1, DaLUKE), coverage, the `lexicon:` embedding.

Covers: MI, left/right entropy and the score of a small text computed by hand; the common-word
and top-share cuts; Algorithm 1 on the paper's case-study sentence and against a direct
implementation of Algorithm 1 on random inputs; the DaLUKE rule's 5-48 character bounds, case
and partly covered words; one-line errors for bad lexicon files; coverage and hit precision on a
tiny labeled set; `discover-words` and `match-lexicon` from the command line; a tagger with
`lexicon:` that trains, saves, reloads (entries inside the model, no lexicon file) and predicts.
"""

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write_file
from hypothesis import given, settings
from hypothesis import strategies as st

from flairsuite.cli import cli
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.lexicon.coverage import split_coverage
from flairsuite.lexicon.daluke import BulkDaluke, automaton_matches, build_automaton, entry_keys
from flairsuite.lexicon.discover import discover
from flairsuite.lexicon.greedy import greedy_picks
from flairsuite.lexicon.hashing import char_codes, token_bounds
from flairsuite.lexicon.match import BulkMaximum, LexiconMatcher, Match, position_tags, token_matches
from flairsuite.lexicon.ngrams import unit_text
from flairsuite.lexicon.settings import SETTINGS, DiscoverySettings
from flairsuite.lexicon.store import Lexicon, read_lexicon
from flairsuite.rawtext.tokens import TOKEN

HEADER_WORDS = "# flairsuite lexicon: units=words language=de\nentry\tscore\n"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def lexicon(units: str, *entries: str) -> Lexicon:
    split = (lambda e: tuple(e)) if units == "characters" else (lambda e: tuple(e.split()))
    return Lexicon(units, tuple(split(e) for e in entries), tuple(float(i) for i in range(len(entries))))


# --- discovery --------------------------------------------------------------------------------

DOCUMENTS = [["A", "B", "C"], ["A", "B", "D"], ["E", "A", "B"], ["C", "D"]]


def test_scores_of_a_small_text_computed_by_hand():
    every = DiscoverySettings(shortest=2, longest=2, min_count=1, common_share=1.0, keep=1.0)
    table = discover(unit_text(DOCUMENTS), every, " ", progress=False).set_index("entry")
    assert set(table.index) == {"A B", "B C", "B D", "E A", "C D"}
    # N = 11 units; count(A B) = 3, count(A) = count(B) = 3: MI = log2(3 * 11 / (3 * 3))
    ab = table.loc["A B"]
    assert ab["frequency"] == 3 and ab["documents"] == 3
    assert ab["mi"] == pytest.approx(math.log2(11 / 3), abs=1e-9)
    # left of "A B": a document start twice, E once; right: C, D and a document end
    assert ab["left_entropy"] == pytest.approx(-(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3)), abs=1e-9)
    assert ab["right_entropy"] == pytest.approx(math.log2(3), abs=1e-9)
    assert ab["score"] == pytest.approx(ab["mi"] + ab["left_entropy"] + ab["right_entropy"])
    cd = table.loc["C D"]  # count(C) = count(D) = 2; alone in its document: both entropies 0
    assert (cd["mi"], cd["left_entropy"], cd["right_entropy"]) == (pytest.approx(math.log2(11 / 4)), 0.0, 0.0)
    assert list(table.index)[0] == "A B"  # sorted by score


def test_each_punctuation_mark_is_a_neighbour_of_its_own_and_document_ends_are_one():
    text = unit_text([["A", "B", ","], ["x", "A", "B", "."], ["A", "B", ","], ["A", "B"], ["A", "B", "!"], ["y", "A", "B"]])
    every = DiscoverySettings(shortest=2, longest=2, min_count=1, common_share=1.0, keep=1.0)
    ab = discover(text, every, " ", progress=False).set_index("entry").loc["A B"]
    # right of the 6 "A B": "," twice, "." once, "!" once, a document end twice; left: a document start 4 times, x, y
    assert ab["right_entropy"] == pytest.approx(-sum(p * math.log2(p) for p in (2 / 6, 1 / 6, 1 / 6, 2 / 6)), abs=1e-9)
    assert ab["left_entropy"] == pytest.approx(-sum(p * math.log2(p) for p in (4 / 6, 1 / 6, 1 / 6)), abs=1e-9)
    assert "B ," not in set(discover(text, every, " ", progress=False)["entry"])  # marks are in no entry


def test_trigram_mi_is_the_weakest_cut_and_single_words_have_mi_zero():
    text = unit_text([["x", "y", "z"], ["x", "y", "q"], ["p", "y", "z"]])
    table = discover(text, DiscoverySettings(shortest=1, longest=3, min_count=1, common_share=1.0, keep=1.0), " ", progress=False)
    table = table.set_index("entry")
    # N = 9; x y z once: cuts x|yz: log2(1*9/(2*2)), xy|z: log2(1*9/(2*2)) -> both log2(9/4)
    assert table.loc["x y z", "mi"] == pytest.approx(math.log2(9 / 4))
    assert table.loc["y", "mi"] == 0.0 and table.loc["y", "frequency"] == 3


def test_punctuation_is_a_boundary_common_words_go_and_the_top_share_is_kept():
    text = unit_text([["A", "B", ",", "C"], ["A", "B"], ["A", "B", "D"], ["F", "G"]])
    everything = discover(text, DiscoverySettings(shortest=2, longest=2, min_count=1, common_share=1.0, keep=1.0), " ", progress=False)
    assert "B C" not in set(everything["entry"]) and "B ," not in set(everything["entry"])
    common = discover(text, DiscoverySettings(shortest=2, longest=2, min_count=1, common_share=0.5, keep=1.0), " ", progress=False)
    assert "A B" not in set(common["entry"])  # in 3 of 4 documents
    half = discover(text, DiscoverySettings(shortest=2, longest=2, min_count=1, common_share=1.0, keep=0.5), " ", progress=False)
    assert list(half["entry"]) == list(everything["entry"])[: round(len(everything) / 2)]


def test_keeping_by_length_keeps_the_top_share_of_each_length():
    text = unit_text([["x", "y", "z"], ["x", "y", "q"], ["p", "y", "z"], ["a", "b", "x", "y"], ["z", "q", "p"]])
    every = DiscoverySettings(shortest=1, longest=2, min_count=1, common_share=1.0, keep=1.0)
    ranked = discover(text, every, " ", progress=False)
    lengths = ranked["entry"].str.count(" ") + 1
    # one ranking: single words (MI 0) fall behind the pairs; by length: half of each
    overall = discover(text, replace(every, keep=0.5), " ", progress=False)
    assert list(overall["entry"]) == list(ranked["entry"])[: round(len(ranked) / 2)]
    by_length = discover(text, replace(every, keep=0.5, keep_by="length"), " ", progress=False)
    expected = [entry for n in (1, 2) for entry in list(ranked.loc[lengths == n, "entry"])[: round((lengths == n).sum() / 2)]]
    assert sorted(by_length["entry"]) == sorted(expected)
    assert list(by_length["score"]) == sorted(by_length["score"], reverse=True)  # one table, best first
    assert (overall["entry"].str.count(" ") == 0).sum() < (by_length["entry"].str.count(" ") == 0).sum()
    assert SETTINGS["words"].keep_by == "length" and SETTINGS["characters"].keep_by == "all"  # the paper's rule for Chinese


# --- matching ---------------------------------------------------------------------------------

def test_algorithm_1_on_the_papers_case_study_sentence():
    sentence = "我们可以运用花旗中国的全球经验和知识。"  # Jia et al. 2020, §4.4: 花旗中国 (Citi China) is the company
    matcher = LexiconMatcher(lexicon("characters", "花旗", "花旗中国", "中国", "全球", "经验", "知识", "我"))
    matches = matcher.maximum(list(sentence))
    assert [("".join(sentence[m.start : m.end]), m.start, m.end) for m in matches] == [
        ("花旗中国", 6, 10), ("全球", 11, 13), ("经验", 13, 15), ("知识", 16, 18)
    ]  # the longest entry at 花 wins over 花旗; 中国 lies inside it; the one-character entry 我 is never matched
    assert position_tags(matches, len(sentence))[5:11] == ["O", "B", "I", "I", "E", "O"]


def algorithm_1(units: list[str], entries: dict[tuple[str, ...], int], shortest: int) -> list[Match]:
    """Algorithm 1 as the paper writes it, for comparison: the longest entry c_i..c_j at i, then on after j."""
    found, i = [], 0
    while i < len(units):
        best = None
        for j in range(i + shortest, len(units) + 1):
            if tuple(units[i:j]) in entries:
                best = Match(i, j, entries[tuple(units[i:j])])
        if best is None:
            i += 1
        else:
            found.append(best)
            i = best.end
    return found


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet="abcd", min_size=1, max_size=4), min_size=1, max_size=8, unique=True),
    st.lists(st.sampled_from("abcde"), max_size=20),
)
def test_automaton_scan_is_algorithm_1(entries, units):
    matcher = LexiconMatcher(lexicon("characters", *entries))
    table = {tuple(entry): index for index, entry in enumerate(entries) if len(entry) >= 2}
    assert matcher.maximum(units) == algorithm_1(units, table, 2)


def test_an_entry_inside_a_longer_entrys_failed_prefix_is_found():
    # pyahocorasick's iter_long misses "bc" here (it gives up after the prefix "abc" of "abcc"); Algorithm 1 does not
    matcher = LexiconMatcher(lexicon("characters", "abcc", "bc"))
    assert matcher.maximum(list("dabc")) == [Match(2, 4, 1)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["aa", "bb", "cc"]), min_size=1, max_size=3), min_size=1, max_size=6),
    st.lists(st.lists(st.sampled_from(["aa", "bb", "cc", "dd", ","]), max_size=10), min_size=1, max_size=4),
)
def test_whole_texts_match_as_their_lines_do(entries, lines):
    lex = lexicon("words", *(" ".join(entry) for entry in entries))
    texts = [" ".join(words) for words in lines]
    per_line = [[(m.start, m.end, m.entry) for m in LexiconMatcher(lex).maximum(words)] for words in lines]
    spans = BulkMaximum(lex).text_spans(texts)
    starts = [[sum(len(w) + 1 for w in words[:i]) for i in range(len(words) + 1)] for words in lines]
    assert spans == [[(offsets[a], offsets[b] - 1, entry) for a, b, entry in found] for found, offsets in zip(per_line, starts)]


TEXT_ALPHABET = st.sampled_from(list("aäbB1_ ,.-\t\n") + ["ß", "é", "中", "文", "\u00a0", "\u2003", "😀", "\u0301", "\u00b2"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=TEXT_ALPHABET, max_size=40))
def test_numpy_tokens_are_the_regular_expressions_tokens(text):
    # the vectorised tokenizer must split exactly as rawtext.tokens.TOKEN does, Unicode classes included
    starts, ends = token_bounds(char_codes(text))
    assert list(zip(starts.tolist(), ends.tolist())) == [m.span() for m in TOKEN.finditer(text)]
    starts, ends = token_bounds(char_codes(text), line_tokens=True)  # a line end becomes a token of its own
    assert list(zip(starts.tolist(), ends.tolist())) == [m.span() for m in re.finditer(f"{TOKEN.pattern}|\n", text)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["Karl", "Marx", "ß", ",", "中"]), min_size=1, max_size=3), min_size=1, max_size=6),
    st.lists(st.lists(st.sampled_from(["Karl", "Marx", "Marxs", "ß", ",", "中", " ", "  ", "_", "\u00a0"]), max_size=12).map("".join),
             min_size=1, max_size=5),
)
def test_whole_texts_in_small_pieces_match_as_the_definition(entries, lines):
    # lines of any spacing and Unicode, split into pieces of a few characters: the spans of Algorithm 1 on each line's tokens
    lex = lexicon("words", *(" ".join(entry) for entry in entries))
    table = {entry: index for index, entry in reversed(list(enumerate(lex.entries)))}
    expected = []
    for line in lines:
        tokens = list(TOKEN.finditer(line))
        found = algorithm_1([t.group() for t in tokens], table, 1)
        expected.append([(tokens[m.start].start(), tokens[m.end - 1].end(), m.entry) for m in found])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("flairsuite.lexicon.pieces.CHUNK_CHARACTERS", 8)
        assert BulkMaximum(lex).text_spans(lines) == expected


def test_a_hash_collision_falls_back_to_exact_lookups(monkeypatch):
    # a match the second hash does not confirm sends the text the exact way: same spans
    lines = ["Karl Marx lebte in London , Karl", "中文 Marx"]
    for units, entries in (("words", ("Karl Marx", "London", "Marx")), ("characters", ("中文", "rx", "Lond"))):
        bulk = BulkMaximum(lexicon(units, *entries))
        fast = bulk.text_spans(lines)
        monkeypatch.setattr(BulkMaximum, "confirmed", lambda *args: False)
        assert bulk.text_spans(lines) == fast and fast[0]
        monkeypatch.undo()


def test_greedy_picks_take_the_leftmost_longest_and_jump_past_it():
    # marks at 0 (length 3), 1 (2), 3 (1), 4 (2), 5 (3), 9 (1): 0-3 taken, 1 inside it, 3 free, 4-6 taken, 5 inside, 9 free
    starts, lengths = np.array([0, 1, 3, 4, 5, 9]), np.array([3, 2, 1, 2, 3, 1])
    assert greedy_picks(starts, lengths).tolist() == [True, False, True, True, False, True]
    # a mark inside the reach of one not taken is taken, and then covers the next: 0-2, (1-4 skipped), 2-4, (3 covered)
    assert greedy_picks(np.array([0, 1, 2, 3]), np.array([2, 3, 2, 1])).tolist() == [True, False, True, False]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=30))
def test_greedy_picks_are_the_sequential_pass(lengths_at):
    # a mark at every position (and at every second one) with a random longest length: the plain left-to-right loop decides the same
    starts, lengths = np.arange(len(lengths_at)), np.array(lengths_at)
    for step in (1, 2):
        assert greedy_picks(starts[::step], lengths[::step]).tolist() == list(sequential(starts[::step], lengths[::step]))


def sequential(starts, lengths):
    after = 0
    for start, length in zip(starts.tolist(), lengths.tolist()):
        yield start >= after
        if start >= after:
            after = start + length


def test_word_lexicons_match_whole_tokens_only():
    matcher = LexiconMatcher(lexicon("words", "Franz Marc", "Marc", "Berlin"))
    tokens = "Franz Marcus und Franz Marc in Berlin".split()
    assert [(m.start, m.end) for m in matcher.maximum(tokens)] == [(3, 5), (6, 7)]  # not the "Marc" inside "Marcus"


def test_daluke_rule_bounds_case_and_partly_covered_words():
    entries = ("Wien", "Berlin", "new york city", "Karl Mar", "x" * 48, "y" * 49)
    matcher = LexiconMatcher(lexicon("words", *entries), "daluke")
    words = "In Wien , BERLIN und New York City traf Karl Marx".split()
    found = [(words[m.start : m.end], entries[m.entry]) for m in matcher.daluke(words)]
    assert found == [
        (["BERLIN"], "Berlin"),  # case ignored; "Wien" (4 characters) is below the bound of 5
        (["New", "York", "City"], "new york city"),
        (["Karl", "Marx"], "Karl Mar"),  # Marx is covered in part: annotated whole
    ]
    assert [m.end - m.start for m in matcher.daluke(["x" * 48, "y" * 49])] == [1]  # 48 characters match, 49 never
    assert matcher.daluke(["aBerlin"]) == []  # only at word starts


DALUKE_WORDS = ["Karl", "Marx", "karl", "Marxismus", "New", "York", "ß", "Straße", ",", "Ab", "İst"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(DALUKE_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=8),
    st.lists(st.lists(st.sampled_from(DALUKE_WORDS + ["  ", "\u00a0"]), max_size=12).map(" ".join), min_size=1, max_size=5),
)
def test_vectorised_daluke_rule_is_the_automaton_definition(entries, lines):
    # over word lists and over whole texts in pieces of a few characters: the definition's matches, line by line
    lex = lexicon("words", *entries)
    bulk = BulkDaluke(lex)
    automaton = build_automaton(entry_keys(lex))
    expected = []
    for line in lines:
        tokens = list(TOKEN.finditer(line))
        words = [t.group() for t in tokens]
        assert bulk.word_matches(words) == automaton_matches(automaton, words)
        expected.append([(tokens[a].start(), tokens[b - 1].end(), entry) for a, b, entry in automaton_matches(automaton, words)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("flairsuite.lexicon.pieces.CHUNK_CHARACTERS", 8)
        assert bulk.text_spans(lines) == expected


def test_daluke_hash_collision_falls_back_to_the_automaton(monkeypatch):
    lines = ["In Wien , BERLIN und New York City", "traf Karl Marx"]
    bulk = BulkDaluke(lexicon("words", "Berlin", "new york city", "Karl Mar"))
    fast = bulk.text_spans(lines)
    assert [[line[a:b] for a, b, _ in spans] for line, spans in zip(lines, fast)] == [["BERLIN", "New York City"], ["Karl Marx"]]
    monkeypatch.setattr(BulkDaluke, "word_spans", lambda *args: None)
    assert bulk.text_spans(lines) == fast
    assert bulk.word_matches(lines[1].split()) == [(1, 3, 2)]


def test_characters_lexicon_on_word_tokens_covers_every_token_it_touches():
    matcher = LexiconMatcher(lexicon("characters", "北京大学"))
    assert token_matches(matcher, ["在", "北京", "大学", "读书"]) == [Match(1, 3, 0)]


# --- files and coverage -----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("entry\tscore\nBerlin\t1\n", ":1: not a flairsuite lexicon: the first line must be `# flairsuite lexicon: units=characters|words`"),
        ("# flairsuite lexicon: units=tokens\nentry\n", ":1: units must be one of characters, words (found 'tokens')"),
        (HEADER_WORDS + "Berlin\t1\tx\n", ":3: 3 tab-separated cells, the header names 2"),
        (HEADER_WORDS + "Berlin\thigh\n", ":3: score 'high' is not a number"),
        (HEADER_WORDS + "Berlin\t2.5\nWien\tnan\n", ":4: score 'nan' is not a number"),
        ("# flairsuite lexicon: units=words\nentry\tfrequency\tmi\tscore\nFranz Marc\t12\tabc\t1.5\n", ":3: mi 'abc' is not a number"),
        ("# flairsuite lexicon: units=words\nentry\nBer\xfcn\n".encode("latin-1"),
         ":3: not valid utf-8: byte 0xfc at column 4 (convert the file, e.g. with iconv)"),
        ("# flairsuite lexicon: units=words\nscore\tentry\n", ":2: the second line must name the columns, the first being `entry`"),
    ],
)
def test_bad_lexicon_files_are_one_line_errors(tmp_path, text, message):
    path = write_file(tmp_path / "l.tsv", text)
    with pytest.raises(InputError) as error:
        read_lexicon(path)
    assert str(error.value) == f"{path}{message}"


def test_missing_lexicon_names_the_command(tmp_path):
    with pytest.raises(FlairsuiteError, match="lexicon not found \\(make one with `flairsuite discover-words --lang LANG"):
        read_lexicon(tmp_path / "none.tsv")


def test_coverage_and_hit_precision_counted_by_hand():
    sentences = [
        TaggedSentence(["Franz", "Marc", "malte", "in", "Berlin"], ["B-pers", "I-pers", "O", "O", "B-place"]),
        TaggedSentence(["Marc", "kam", "nach", "Berlin", "Mitte"], ["B-pers", "O", "O", "B-place", "I-place"]),
        TaggedSentence(["Berlin", "ist", "groß"], ["B-place", "O", "O"]),
    ]
    lex = lexicon("words", "Franz Marc", "Berlin", "groß")
    found = split_coverage(lex, LexiconMatcher(lex), "toy", "train", sentences)
    # mentions: Franz Marc, Berlin, Marc, Berlin Mitte, Berlin -> covered: Franz Marc, Berlin, Berlin = 3 of 5
    assert (found.mentions, found.covered, found.distinct, found.distinct_covered) == (5, 3, 4, 2)
    # matches: Franz Marc, Berlin | Berlin (inside "Berlin Mitte") | Berlin, groß -> exact: 3 of 5
    assert (found.matches, found.exact) == (5, 3)
    assert found.hits == ["Berlin", "Franz Marc"] and set(found.misses) == {"Marc", "Berlin Mitte"}


# --- commands ---------------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--keep", "--common-share"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_share_that_is_no_finite_number_is_a_usage_error(tmp_path, option, value):
    result = run("discover-words", "--lang", "de", "--corpus", str(tmp_path / "text.txt"), option, value)
    found = {"nan": "NaN", "inf": "Infinity"}[value]
    assert result.exit_code == 2 and f"Invalid value for '{option}': must be a share in (0, 1] (found {found})" in result.output


def test_discover_words_and_match_lexicon_from_the_command_line(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    corpus = write_file(tmp_path / "raw" / "text.txt", "\n".join(
        f"{who} schrieb an {whom} in {where} ." for who, whom, where in
        [("Franz Marc", "Else Lasker", "Berlin"), ("Else Lasker", "Franz Marc", "Wien"), ("Franz Marc", "Herwarth Walden", "Berlin"),
         ("Herwarth Walden", "Else Lasker", "Sindelsdorf")] * 100
    ) + "\n")
    result = run("discover-words", "--lang", "de", "--corpus", str(corpus), "--min-count", "3", "--common-share", "0.9",
                 "--corpora-dir", str(tmp_path / "no-corpora"))
    assert result.exit_code == 0, result.output + result.stderr
    out = home / "lexicons" / "de.tsv"
    assert re.search(rf"^{re.escape(str(out))}: \d+ entries \(words, 1-3 units, count >= 3", result.stdout, re.M), result.stdout
    assert "no labeled NER train set of this language" in result.stdout
    lex = read_lexicon(out)
    assert lex.units == "words" and ("Franz", "Marc") in lex.entries
    assert run("discover-words", "--lang", "de", "--corpus", str(corpus), "--corpora-dir", str(tmp_path)).stderr.strip().endswith(
        "exists: pass --force to replace it")
    # a labeled set of the language present: coverage on its train and dev split (a raw text may hold a train set's text)
    write_file(tmp_path / "corpora" / "sturm" / "train_sturm.conll", "Franz B-pers\nMarc I-pers\nschrieb O\nKandinsky B-pers\n")
    write_file(tmp_path / "corpora" / "sturm" / "dev_sturm.conll", "Else B-pers\nLasker I-pers\nin O\nBerlin B-place\n")
    write_file(tmp_path / "corpora" / "sturm" / "test_sturm.conll", "Wien B-place\n")
    covered = run("discover-words", "--lang", "de", "--corpus", str(corpus), "--min-count", "3", "--common-share", "0.9", "--force",
                  "--corpora-dir", str(tmp_path / "corpora")).stdout
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in covered.splitlines() if line.startswith("sturm ")}
    entries = read_lexicon(out).entries
    assert ("Franz", "Marc") in entries and ("Else", "Lasker") in entries and ("Kandinsky",) not in entries
    assert rows[("sturm", "train")][:2] == ["2", "50.0%"]  # Franz Marc, not Kandinsky
    assert rows[("sturm", "dev")][:2] == ["2", f"{50 * (1 + (('Berlin',) in entries)):.1f}%"]  # Else Lasker, and Berlin if kept
    assert "sturm dev: hits " in covered

    text = write_file(tmp_path / "letter.txt", "Heute schrieb Franz Marc .\nnichts\n")
    matched = run("match-lexicon", str(out), str(text))
    assert matched.exit_code == 0, matched.stderr
    records = [json.loads(line) for line in matched.stdout.splitlines()]
    assert records[1] == {"line": 2, "spans": []}
    assert {"start": 14, "end": 24, "text": "Franz Marc", "entry": "Franz Marc"} in records[0]["spans"]
    assert re.match(r"matched \d+ spans in 2 lines \(32 characters\) by the maximum rule in", matched.stderr)
    bad = run("match-lexicon", str(tmp_path / "none.tsv"), str(text))
    assert bad.exit_code == 1 and bad.stderr.strip().startswith(f"Error: {tmp_path / 'none.tsv'}: lexicon not found")
    latin = write_file(tmp_path / "latin.txt", "Franz Marc\nMünchen\n".encode("latin-1"))
    bad = run("match-lexicon", str(out), str(latin))
    assert bad.exit_code == 1 and bad.stderr.strip() == f"Error: {latin}:2: not valid utf-8: byte 0xfc at column 2 (convert the file, e.g. with iconv)"


def test_a_dataset_the_raw_text_already_holds_is_not_added_twice(tmp_path, monkeypatch):
    # raw-zh holds CLUENER's train text: --add-dataset cluener would count every sentence twice
    monkeypatch.setenv("FLAIRSUITE_HOME", str(tmp_path / "home"))
    write_file(tmp_path / "corpora" / "cluener2020" / "train.json", '{"text": "浙商银行", "label": {"company": {"浙商银行": [[0, 3]]}}}\n')
    result = run("discover-words", "--lang", "zh", "--add-dataset", "cluener", "--corpora-dir", str(tmp_path / "corpora"))
    assert result.exit_code == 1 and result.stderr.strip() == (
        "Error: --add-dataset cluener: its train text is already in the raw text (raw-zh source cluener-train); leave the option out")



def test_added_datasets_must_be_labeled_and_of_the_language(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAIRSUITE_HOME", str(tmp_path / "home"))
    corpus = write_file(tmp_path / "raw.txt", "Franz Marc schrieb .\n")
    common = ["--corpus", str(corpus), "--corpora-dir", str(tmp_path / "corpora")]
    other = run("discover-words", "--lang", "de", "--add-dataset", "cluener", *common)
    assert other.exit_code == 1 and other.stderr.strip() == "Error: --add-dataset cluener: a zh dataset, and the lexicon is for --lang de"
    raw = run("discover-words", "--lang", "de", "--add-dataset", "raw-de", *common)
    assert raw.exit_code == 1 and raw.stderr.strip().startswith("Error: --add-dataset raw-de: a raw-text set, not a labeled dataset")


def test_a_corpus_too_small_for_any_entry_is_refused_with_what_to_change(tmp_path, monkeypatch):
    """Under 500 documents no n-gram in at most 1 % of them reaches 5 occurrences unless it repeats inside one: the
    lexicon would be empty and every token tagged "no match", so nothing is written and the error says why."""
    monkeypatch.setenv("FLAIRSUITE_HOME", str(tmp_path / "home"))
    corpus = write_file(tmp_path / "raw.txt", "".join(f"Franz Marc schrieb Brief {i} .\n" for i in range(300)))
    result = run("discover-words", "--lang", "de", "--corpus", str(corpus), "--corpora-dir", str(tmp_path / "corpora"))
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    found = re.fullmatch(
        r"Error: no entry found in [\d,]+ units of (\d+) documents \(an entry must occur >= 5 times and in at most 1% of the "
        r"documents: with \1 documents that leaves only n-grams repeated inside one document\); give more text \(a document "
        r"per line\), or raise --common-share or lower --min-count", last)
    assert found and 290 <= int(found.group(1)) <= 300, last  # the train split: valid and test take their share
    assert not (tmp_path / "home" / "lexicons" / "de.tsv").exists()


def test_hand_made_word_entries_with_punctuation_match_both_rules(tmp_path):
    """Text splits into words and single punctuation marks (rawtext.tokens): so do the entries read from a file."""
    path = write_file(tmp_path / "l.tsv", "# flairsuite lexicon: units=words language=de\nentry\nSt. Pauli\nMærsk-Møller\nFranz Marc\n")
    lex = read_lexicon(path)
    assert lex.entries == (("St", ".", "Pauli"), ("Mærsk", "-", "Møller"), ("Franz", "Marc"))
    line = "Am Hafen von St. Pauli traf Franz Marc die Mærsk-Møller ."
    # a labeled corpus keeps the full stop and hyphen inside its tokens (Sturm's `W.`, LER's `Abs.`)
    tokens = ["Am", "Hafen", "von", "St.", "Pauli", "traf", "Franz", "Marc", "die", "Mærsk-Møller", "."]
    for rule in ("maximum", "daluke"):
        matcher = LexiconMatcher(lex, rule)
        assert [line[start:end] for start, end, _ in matcher.text_spans(line)] == ["St. Pauli", "Franz Marc", "Mærsk-Møller"], rule
        assert [(m.start, m.end, m.entry) for m in token_matches(matcher, tokens)] == [(3, 5, 0), (6, 8, 2), (9, 10, 1)], rule
    # an entry inside a token's pieces covers the whole token; the units a match took are those of raw text
    inside = LexiconMatcher(lexicon("words", "Abs"))
    assert [(m.start, m.end) for m in token_matches(inside, ["nach", "Abs.", "2"])] == [(1, 2)]
    assert token_matches(inside, ["Absatz"]) == []  # never a match ending inside a word


def test_the_daluke_rule_on_a_characters_lexicon_is_refused(tmp_path):
    path = write_file(tmp_path / "zh.tsv", "# flairsuite lexicon: units=characters language=zh\nentry\n北京大学\n")
    with pytest.raises(FlairsuiteError) as error:
        LexiconMatcher(read_lexicon(path), "daluke")
    assert str(error.value) == f"{path}: the daluke rule matches word lexicons, and this one's units are characters: use the maximum rule"
    from flairsuite.embeddings.lexicon import resolve

    with pytest.raises(FlairsuiteError) as when_stacked:  # the spec lexicon:zh@daluke is refused as the stack is built
        resolve("zh@daluke", path)
    assert str(when_stacked.value) == str(error.value)
    assert resolve("zh", path).rule == "maximum"

NER_TRAIN = "Franz\tB-pers\nMarc\tI-pers\nmalte\tO\nin\tO\nBerlin\tB-place\n.\tO\n\nElse\tB-pers\nkam\tO\nnach\tO\nWien\tB-place\n"
NER_TEST = "Franz\tB-pers\nMarc\tI-pers\nkam\tO\nnach\tO\nBerlin\tB-place\n"


def test_tagger_with_a_lexicon_embedding_saves_reloads_without_the_file_and_predicts(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    write_file(home / "lexicons" / "toy.tsv", HEADER_WORDS + "Franz Marc\t3.5\nBerlin\t2.0\nWien\t1.0\n")
    for split, text in (("train", NER_TRAIN), ("dev", NER_TEST), ("test", NER_TEST)):
        write_file(tmp_path / "data" / "names" / f"{split}.tsv", text)
    path = write_file(tmp_path / "lex.yaml", """\
name: lex
corpora: [{path: data/names/}]
embeddings: {lex: [char, lexicon:toy@scores]}
taggers: [map-crf]
seeds: [1]
train: {max_epochs: 2}
""")
    result = run("tag", str(path), "--threads", "1")
    assert result.exit_code == 0, result.output
    model_path = home / "results" / "lex" / "names" / "lex" / "map-crf" / "seed-1" / "model.pt"
    (home / "lexicons" / "toy.tsv").unlink()  # the saved tagger holds its entries

    from flair.data import Sentence
    from flair.models import SequenceTagger

    import flairsuite.embeddings  # noqa: F401  (registers LexiconEmbeddings with Flair)

    model = SequenceTagger.load(model_path)
    embedding = model.embeddings.list_embedding_1
    assert type(embedding).__name__ == "LexiconEmbeddings" and embedding.entries == ["Franz Marc", "Berlin", "Wien"]
    assert embedding.embedding_length == 24 and embedding.rule == "maximum"
    sentence = Sentence("Franz Marc kam nach Berlin".split())
    embedding.embed(sentence)
    assert embedding.positions.weight.shape == (5, 16)
    vectors = [token.get_embedding(embedding.get_names()) for token in sentence]
    assert vectors[0][:16].tolist() == embedding.positions.weight[1].tolist()  # B
    assert vectors[1][:16].tolist() == embedding.positions.weight[3].tolist()  # E
    assert vectors[2][:16].tolist() == embedding.positions.weight[0].tolist()  # O
    assert vectors[4][:16].tolist() == embedding.positions.weight[4].tolist()  # S
    assert vectors[0][16:].tolist() == embedding.buckets.weight[embedding.bucket(0)].tolist()
    # matching is fixed, so each distinct sentence is matched once: later epochs read the cached ids
    calls = []
    original = flairsuite.embeddings.lexicon.token_matches
    monkeypatch.setattr(flairsuite.embeddings.lexicon, "token_matches", lambda *a: calls.append(a) or original(*a))
    for _ in range(3):
        embedding.embed([Sentence("Franz Marc kam nach Berlin".split()), Sentence("Wien".split())])
    assert len(calls) == 1  # "Franz Marc kam nach Berlin" was matched above; only "Wien" is new

    text = write_file(tmp_path / "letter.txt", "Franz Marc kam nach Berlin")
    predicted = run("predict", str(model_path), str(text), "--no-fast")
    assert predicted.exit_code == 0, predicted.output
    rows = [line.split("\t") for line in predicted.stdout.splitlines() if line]
    assert [token for token, _ in rows] == ["Franz", "Marc", "kam", "nach", "Berlin"]
    again = Sentence("Franz Marc kam nach Berlin".split())  # the reloaded tagger's own predict, tag for tag
    model.predict(again, label_name="raw", force_token_predictions=True)
    assert [tag for _, tag in rows] == [token.get_label("raw").value for token in again]
