"""Readers, validation and loaders on tiny fixture files: every bad input and every real-data quirk."""

import logging
import re
from collections import Counter
from pathlib import Path

import pytest

from flairsuite.corpora.labeled import read_split, read_splits
from flairsuite.corpora.loading import load_corpus
from flairsuite.corpora.raw import iter_documents, source_path
from flairsuite.corpora.readers import read_column, read_conllu, read_lines, read_spans_json
from flairsuite.corpora.registry import FileSpec, FormatSpec, dataset
from flairsuite.corpora.stats import corpus_stats
from flairsuite.errors import FlairsuiteError, InputError

SPACE = FormatSpec(kind="column", sep="space", text=0, label=1)
TAB = FormatSpec(kind="column", sep="tab", text=0, label=1)
GERMEVAL = FormatSpec(kind="column", sep="tab", text=1, label=2, comment="#\t")
CONLL03 = FormatSpec(kind="column", sep="space", text=0, label=3, docstart="-DOCSTART-", scheme="iob1")
UPOS = FormatSpec(kind="conllu", label="upos")
NAME = FormatSpec(kind="conllu", label="misc:name")
SPANS = FormatSpec(kind="spans_json")


def spans(sentence, label_type="ner"):
    return [(span.text, span.get_label(label_type).value) for span in sentence.get_spans(label_type)]


def raises_at(path: Path, line, match: str):
    """pytest.raises for an InputError located at `path`:`line` whose message matches `match`."""
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    return pytest.raises(InputError, match=re.escape(where) + match)


def column(path, fmt=SPACE, encoding="utf-8"):
    return [(s.tokens, s.tags, s.lines) for s in read_column(path, fmt, encoding)]


# --- read_lines: encodings, compression, line ends -------------------------------------------


def test_read_lines_strips_bom_crlf_and_numbers_lines(write):
    path = write("a.txt", b"\xef\xbb\xbfeins\r\nzwei\r\n\r\ndrei")
    assert list(read_lines(path)) == [(1, "eins"), (2, "zwei"), (3, ""), (4, "drei")]


def test_read_lines_keeps_a_bom_character_that_is_not_at_file_start(write):
    path = write("a.txt", "eins\n\ufeffzwei\n")
    assert list(read_lines(path)) == [(1, "eins"), (2, "\ufeffzwei")]


def test_read_lines_reads_gzip(write):
    path = write("a.txt.gz", "\ufeffeins\r\nzwei\n", compress=True)
    assert list(read_lines(path)) == [(1, "eins"), (2, "zwei")]


def test_read_lines_missing_file(tmp_path):
    path = tmp_path / "nope.conll"
    with raises_at(path, None, "file not found"):
        list(read_lines(path))


def test_read_lines_non_utf8_names_line_and_byte(write):
    path = write("bad.conll", b"A O\nB O\nC\xe4sar O\n")
    with raises_at(path, 3, r"not valid utf-8: byte 0xe4 at column 2"):
        list(read_lines(path))


def test_read_lines_decodes_declared_encoding(write):
    path = write("latin.conll", "Cäsar O\n".encode("latin-1"))
    assert list(read_lines(path, "latin-1")) == [(1, "Cäsar O")]


def test_read_lines_corrupt_gzip_is_an_input_error(write):
    path = write("bad.conll.gz", b"this is not gzip data")
    with raises_at(path, 1, r"cannot read file"):
        list(read_lines(path))


def test_read_lines_truncated_gzip_is_an_input_error(write, tmp_path):
    whole = write("whole.txt.gz", "".join(f"line {i}\n" for i in range(2000)), compress=True)
    path = write("cut.txt.gz", whole.read_bytes()[:-20])
    with pytest.raises(InputError, match=re.escape(str(path)) + r":\d+: cannot read file"):
        list(read_lines(path))


# --- read_column: CoNLL-style column files ---------------------------------------------------


def test_column_sentences_tags_and_line_numbers(write):
    path = write("a.conll", "\n\nDer O\nSturm B-pers\n\n\nBerlin B-place\n\n")
    assert column(path) == [(["Der", "Sturm"], ["O", "B-pers"], [3, 4]), (["Berlin"], ["B-place"], [7])]


def test_column_last_sentence_without_final_newline(write):
    path = write("a.conll", "A O\n\nB O")
    assert column(path) == [(["A"], ["O"], [1]), (["B"], ["O"], [3])]


@pytest.mark.parametrize("blank", ["\t", " \t", "   ", "\t\t"])
def test_column_whitespace_only_line_ends_sentence(write, blank):
    path = write("a.tsv", f"A\tO\n{blank}\nB\tB-PER\n")
    assert column(path, TAB) == [(["A"], ["O"], [1]), (["B"], ["B-PER"], [3])]


def test_column_crlf_line_ends(write):
    path = write("a.conll", "A B-pers\r\nB I-pers\r\n\r\nC O\r\n")
    assert column(path) == [(["A", "B"], ["B-pers", "I-pers"], [1, 2]), (["C"], ["O"], [4])]


def test_column_bom_at_file_start_is_not_part_of_the_first_token(write):
    path = write("a.conll", "\ufeffA O\n")
    assert column(path) == [(["A"], ["O"], [1])]


def test_column_too_few_columns(write):
    path = write("a.conll", "A O\n\nB O\nC\n")
    with raises_at(path, 4, "expected at least 2 space-separated columns, found 1"):
        list(read_column(path, SPACE, "utf-8"))


def test_column_too_few_columns_for_the_label_column(write):
    path = write("NER-de-dev.tsv", "1\tA\tO\tO\n2\tB\n")
    with raises_at(path, 2, "expected at least 3 tab-separated columns, found 2"):
        list(read_column(path, GERMEVAL, "utf-8"))


@pytest.mark.parametrize("fmt, line", [(SPACE, " O"), (TAB, "\tO"), (TAB, " \tO")])
def test_column_empty_token(write, fmt, line):
    path = write("a.conll", f"A O\n{line}\n".replace("A O", "A\tO" if fmt is TAB else "A O"))
    with raises_at(path, 2, "empty token"):
        list(read_column(path, fmt, "utf-8"))


def test_column_trailing_empty_columns_are_ignored(write):
    # GermEval test: a 5th, empty column; also a trailing separator in a space file
    ge = write("NER-de-test.tsv", "1\tSchartau\tB-PER\tO\t\n2\tsagte\tO\tO\t\t\n")
    assert column(ge, GERMEVAL) == [(["Schartau", "sagte"], ["B-PER", "O"], [1, 2])]
    sp = write("a.conll", "A O \n")
    assert column(sp) == [(["A"], ["O"], [1])]


def test_column_germeval_comments_skipped_but_hash_token_kept(write):
    path = write(
        "NER-de-dev.tsv",
        "#\thttp://de.wikipedia.org/wiki/X\t[2009-10-23]\n1\t#\tO\tO\n2\tEins\tB-ORG\tO\n\n"
        "#\tsecond comment\n1\tZwei\tO\tO\n",
    )
    assert column(path, GERMEVAL) == [(["#", "Eins"], ["O", "B-ORG"], [2, 3]), (["Zwei"], ["O"], [6])]


def test_column_ler_hash_token_is_a_token_not_a_comment(write):
    fmt = dataset("ler").format
    assert fmt.comment is None
    path = write("ler_dev.conll", "# O\nAbs B-GS\n\n# B-LIT\n")
    assert column(path, fmt) == [(["#", "Abs"], ["O", "B-GS"], [1, 2]), (["#"], ["B-LIT"], [4])]


def test_column_docstart_lines_skipped(write):
    path = write(
        "eng.testa",
        "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n\n-DOCSTART- -X- -X- O\n\nPeter NNP B-NP I-PER\n",
    )
    assert column(path, CONLL03) == [(["EU", "rejects"], ["I-ORG", "O"], [3, 4]), (["Peter"], ["I-PER"], [8])]


def test_column_docstart_with_fewer_columns_ends_the_sentence(write):
    path = write("eng.testa", "EU NNP B-NP I-ORG\n-DOCSTART-\nPeter NNP B-NP I-PER\n")
    assert column(path, CONLL03) == [(["EU"], ["I-ORG"], [1]), (["Peter"], ["I-PER"], [3])]


def test_column_gzip_file(write):
    path = write("a.conll.gz", "A B-pers\n\nB O\n", compress=True)
    assert column(path) == [(["A"], ["B-pers"], [1]), (["B"], ["O"], [3])]


def test_column_empty_file_has_no_sentences(write):
    assert column(write("a.conll", "")) == []
    assert column(write("b.conll", "\n\t\n \n")) == []


# --- read_conllu ----------------------------------------------------------------------------


def conllu_row(index, form, upos="NOUN", misc="_"):
    """A CoNLL-U line; a multiword range or an empty node has no HEAD, as the format says."""
    head = "_" if "-" in index or "." in index else "0"
    return "\t".join([index, form, "_", upos, "_", "_", head, "_", "_", misc])


def test_conllu_skips_ranges_and_empty_nodes_and_reads_space_after(write):
    text = "\n".join(
        [
            "# sent_id = 1",
            "# text = Hallo, zum Bahnhof.",
            conllu_row("1", "Hallo", "INTJ", "SpaceAfter=No"),
            conllu_row("2", ",", "PUNCT"),
            conllu_row("3-4", "zum", "_"),
            conllu_row("3", "zu", "ADP"),
            conllu_row("4", "dem", "DET"),
            conllu_row("4.1", "ghost", "_"),
            conllu_row("5", "Bahnhof", "NOUN", "Gloss=station|SpaceAfter=No"),
            conllu_row("6", ".", "PUNCT"),
            "",
            conllu_row("1", "Ja", "INTJ"),
            "",
        ]
    )
    sentences = list(read_conllu(write("a.conllu", text), UPOS, "utf-8"))
    assert [s.tokens for s in sentences] == [["Hallo", ",", "zu", "dem", "Bahnhof", "."], ["Ja"]]
    assert sentences[0].tags == ["INTJ", "PUNCT", "ADP", "DET", "NOUN", "PUNCT"]
    assert sentences[0].whitespace_after == [False, True, True, True, False, True]
    assert sentences[0].lines == [3, 4, 6, 7, 9, 10]
    assert sentences[1].lines == [12]


def test_conllu_misc_label(write):
    text = conllu_row("1", "Anders", "PROPN", "name=B-PER") + "\n" + conllu_row("2", "And", "PROPN", "SpaceAfter=No|name=I-PER") + "\n"
    (sentence,) = read_conllu(write("ddt.dev.conllu", text), NAME, "utf-8")
    assert sentence.tags == ["B-PER", "I-PER"]
    assert sentence.whitespace_after == [True, False]


def test_conllu_token_without_the_misc_key_is_o_and_counted(write):
    path = write("ddt.dev.conllu", conllu_row("1", "A", misc="name=B-PER") + "\n" + conllu_row("2", "B", misc="SpaceAfter=No") + "\n"
                 + conllu_row("3", "C", misc="_") + "\n")
    repairs = Counter()
    (sentence,) = read_conllu(path, NAME, "utf-8", repairs)
    assert sentence.tags == ["B-PER", "O", "O"] and sentence.whitespace_after == [True, False, True]
    assert repairs == {"token without name= in MISC read as O": 2}


def test_conllu_wrong_column_count(write):
    path = write("a.conllu", conllu_row("1", "A") + "\n1\tB\t_\tNOUN\n")
    with raises_at(path, 2, "expected 10 tab-separated CoNLL-U columns, found 4"):
        list(read_conllu(path, UPOS, "utf-8"))


def test_conllu_empty_token(write):
    path = write("a.conllu", conllu_row("1", "A") + "\n" + conllu_row("2", " ") + "\n")
    with raises_at(path, 2, "empty token"):
        list(read_conllu(path, UPOS, "utf-8"))


def test_conllu_whitespace_only_line_and_crlf(write):
    text = conllu_row("1", "A") + "\r\n \t\r\n" + conllu_row("1", "B", "VERB") + "\r\n"
    assert [(s.tokens, s.tags) for s in read_conllu(write("a.conllu", text), UPOS, "utf-8")] == [
        (["A"], ["NOUN"]),
        (["B"], ["VERB"]),
    ]


# --- read_spans_json (CLUENER) -----------------------------------------------------------------


def test_spans_json_character_bio_with_inclusive_end(write):
    line = '{"text": "浙商银行企业信贷部", "label": {"company": {"浙商银行": [[0, 3]]}, "name": {"信贷": [[6, 7]]}}}'
    repairs = Counter()
    (sentence,) = read_spans_json(write("dev.json", line + "\n"), SPANS, "utf-8", repairs)
    assert sentence.tokens == list("浙商银行企业信贷部")
    assert sentence.tags == ["B-company", "I-company", "I-company", "I-company", "O", "O", "B-name", "I-name", "O"]
    assert sentence.whitespace_after == [False] * 9
    assert repairs == Counter()


def test_spans_json_repeated_surface_and_blank_lines(write):
    lines = '\n{"text": "ab ab", "label": {"x": {"ab": [[0, 1], [3, 4]]}}}\n\n{"text": "c"}\n'
    repairs = Counter()
    sentences = list(read_spans_json(write("dev.json", lines), SPANS, "utf-8", repairs))
    assert [s.tokens for s in sentences] == [["a", "b", "a", "b"], ["c"]]
    assert sentences[0].tags == ["B-x", "I-x", "B-x", "I-x"]
    assert sentences[0].whitespace_after == [False, True, False, False]
    assert [s.lines for s in sentences] == [[2, 2, 2, 2], [4]]
    assert repairs == Counter({"whitespace character skipped": 1})


def test_spans_json_overlapping_span_dropped_logged_and_counted(write, caplog):
    line = '{"text": "北京市长", "label": {"address": {"北京市": [[0, 2]]}, "position": {"市长": [[2, 3]]}, "x": {"北京": [[0, 1]]}}}'
    path = write("train.json", "\n" + line + "\n")
    repairs = Counter()
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        (sentence,) = read_spans_json(path, SPANS, "utf-8", repairs)
    assert sentence.tags == ["B-address", "I-address", "I-address", "O"]
    assert repairs == Counter({"overlapping span dropped": 2})
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert all(m.startswith(f"{path}:2: dropped") for m in messages)
    assert any("position span [2, 3]" in m for m in messages)


def test_spans_json_surface_mismatch_is_an_error(write):
    lines = '{"text": "abc", "label": {}}\n{"text": "abcd", "label": {"name": {"bc": [[1, 3]]}}}\n'
    path = write("train.json", lines)
    with raises_at(path, 2, r"span \[1, 3\] is 'bcd', not 'bc'"):
        list(read_spans_json(path, SPANS, "utf-8", Counter()))


@pytest.mark.parametrize(
    "offsets, message",
    [
        ("[[2, 1]]", r"span \[2, 1\] of '' is outside the text"),
        ("[[-1, 3]]", r"span \[-1, 3\] of '' is outside the text"),
        ("[[3, 9]]", r"span \[3, 9\] of '' is outside the text \(length 4\)"),
        ("[[0, \"x\"]]", r"offsets \[0, \"x\"\] of '' are not a \[start, end\] pair"),
        ("[0, 1]", r"offsets 0 of '' are not a \[start, end\] pair"),
        ("[[0, 1, 2]]", r"offsets \[0, 1, 2\] of '' are not"),
        ("\"0-1\"", r"offsets of '' are not a list"),
    ],
)
def test_spans_json_bad_offsets_are_errors(write, offsets, message):
    # the surface is '' so that only the offsets check can catch these
    path = write("train.json", '{"text": "abcd"}\n{"text": "abcd", "label": {"name": {"": %s}}}\n' % offsets)
    with raises_at(path, 2, message):
        list(read_spans_json(path, SPANS, "utf-8", Counter()))


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", r"not a JSON object with a 'text' field"),
        ('{"label": {}}', r"not a JSON object with a 'text' field"),
        ('["abc"]', r"not a JSON object with a 'text' field"),
        ('{"text": "ab", "n": ' + "9" * 5000 + "}", r"not a JSON object with a 'text' field \(Exceeds the limit"),
        ('{"text": 5}', r"'text' is not a string"),
        ('{"text": "ab", "label": ["x"]}', r"'label' is not an object"),
        ('{"text": "ab", "label": {"name": ["ab"]}}', r"label 'name' is not an object"),
    ],
)
def test_spans_json_malformed_records_are_errors(write, line, message):
    path = write("train.json", '{"text": "ok"}\n' + line + "\n")
    with raises_at(path, 2, message):
        list(read_spans_json(path, SPANS, "utf-8", Counter()))


# --- read_split / read_splits: validation, repairs, splits ---------------------------------------


def test_unknown_entity_type_names_file_and_line(sturm):
    root = sturm("Der O\nSturm B-pers\n\nHerwarth B-person\n")
    path = root / "sturm" / "train_sturm.conll"
    with raises_at(path, 4, r"unknown entity type 'person' in tag 'B-person' \(sturm types: pers place date\)"):
        read_splits(dataset("sturm"), root)


@pytest.mark.parametrize("tag", ["PER", "B-", "b-pers", "S-pers", "B_pers", "0"])
def test_ill_formed_tag_names_file_and_line(sturm, tag):
    root = sturm(f"A O\nB {tag}\n")
    with raises_at(root / "sturm" / "train_sturm.conll", 2, re.escape(f"ill-formed tag '{tag}'")):
        read_splits(dataset("sturm"), root)


def test_registered_columns_split_on_any_run_of_whitespace_as_flair(sturm):
    # a copy of Sturm with tabs, doubled spaces or trailing blanks reads as the original (Flair's ColumnCorpus splits on \\s+)
    root = sturm("A O\nB  B-pers\nC\t \tI-pers \t\n")
    (train,) = read_splits(dataset("sturm"), root, ["train"]).values()
    assert [(s.tokens, s.tags) for s in train.sentences] == [(["A", "B", "C"], ["O", "B-pers", "I-pers"])]


def test_a_line_with_other_columns_than_the_first_is_an_error(sturm):
    # "New York B-place" in a whitespace file would otherwise read as token "New" with the last column's tag
    root = sturm("Sie O\nfuhr O\nnach O\nNew York B-place\n")
    with raises_at(root / "sturm" / "train_sturm.conll", 4, re.escape("3 whitespace-separated columns, but line 1 has 2: every token line")):
        read_splits(dataset("sturm"), root)


def test_line_starting_with_whitespace_has_an_empty_token(sturm):
    root = sturm("A O\n\tB B-pers\n")
    with raises_at(root / "sturm" / "train_sturm.conll", 2, "empty token"):
        read_splits(dataset("sturm"), root)


def test_bad_input_in_dev_names_the_dev_file(sturm):
    root = sturm("A O\n", dev="A O\nB O\n\n\xff O\n".encode("latin-1"))
    with raises_at(root / "sturm" / "dev_sturm.conll", 4, "not valid utf-8: byte 0xff"):
        read_splits(dataset("sturm"), root)


def test_unknown_pos_tag_names_file_and_line(write, tmp_path):
    folder = "ud_english_ewt/en_ewt-ud-{}.conllu"
    for split in ("train", "dev"):
        write(folder.format(split), conllu_row("1", "A", "NOUN") + "\n")
    path = write(folder.format("test"), conllu_row("1", "A", "NOUN") + "\n\n" + conllu_row("1", "B", "NN") + "\n")
    with raises_at(path, 3, r"unknown tag 'NN' \(ud-en-ewt tags: ADJ ADP"):
        read_splits(dataset("ud-en-ewt"), tmp_path)


def test_bio_repairs_are_counted_exactly_per_split(sturm):
    train = "A I-pers\nB I-pers\n\nC O\nD I-place\n\nE B-pers\nF I-date\nG I-date\n\nH B-date\nI I-date\n"
    root = sturm(train, dev="A I-pers\n", test="A O\n")
    data = read_splits(dataset("sturm"), root)
    assert data["train"].repairs == Counter(
        {"I-X after start -> B-X": 1, "I-X after O -> B-X": 1, "I-X after another type -> B-X": 1}
    )
    assert data["train"].sentences[2].tags == ["B-pers", "B-date", "I-date"]
    assert data["dev"].repairs == Counter({"I-X after start -> B-X": 1})
    assert data["test"].repairs == Counter()


def test_iob1_converted_without_repairs_and_docstart_skipped(write, tmp_path):
    eng = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP I-MISC\n\nPeter NNP B-NP I-PER\nPaul NNP I-NP B-PER\n"
    for name in ("eng.train", "eng.testa", "eng.testb"):
        write(f"conll03-en/{name}", eng)
    data = read_splits(dataset("conll03-en"), tmp_path)
    for split in data.values():
        assert [s.tags for s in split.sentences] == [["B-ORG", "O", "B-MISC"], ["B-PER", "B-PER"]]
        assert [s.tokens for s in split.sentences][0] == ["EU", "rejects", "German"]
        assert split.repairs == Counter()


def test_conll03_de_is_read_as_latin1(write, tmp_path):
    deu = "-DOCSTART- -X- -X- -X- O\n\nMünchen münchen NE I-NC I-LOC\n".encode("latin-1")
    for name in ("deu.train", "deu.testa", "deu.testb"):
        write(f"conll03-de/{name}", deu)
    data = read_splits(dataset("conll03-de"), tmp_path, ["test"])
    assert data["test"].sentences[0].tokens == ["München"]
    assert data["test"].sentences[0].tags == ["B-LOC"]


def test_splits_argument_reads_only_those(sturm):
    root = sturm("A O\n")
    (root / "sturm" / "train_sturm.conll").unlink()
    data = read_splits(dataset("sturm"), root, ["dev", "test"])
    assert list(data) == ["dev", "test"]


def test_unknown_split_name(sturm):
    root = sturm("A O\n")
    with pytest.raises(FlairsuiteError, match=r"sturm has no valid split \(its splits: train, dev, test\)"):
        read_splits(dataset("sturm"), root, ["valid"])


def test_read_split_of_raw_format_is_an_error(write):
    spec = dataset("raw-de")
    with pytest.raises(FlairsuiteError, match="raw-text set"):
        read_splits(spec, write("x", "").parent)


# --- load_corpus: Flair corpora -----------------------------------------------------------------


def test_load_corpus_sturm_spans_and_quirks(sturm, write):
    train = "\ufeffDer O\r\nSturm B-pers\r\nWalden I-pers\r\n\t\r\nin O\r\nBerlin B-place\r\n \t\r\n1914 B-date\r\n"
    root = sturm(train)
    (root / "sturm" / "test_sturm.conll").unlink()
    write("sturm/test_sturm.conll.gz", "Walden B-pers\nschrieb O\n", compress=True)
    corpus = load_corpus("sturm", root)
    assert [len(corpus.train), len(corpus.dev), len(corpus.test)] == [3, 1, 1]
    assert [spans(s) for s in corpus.train] == [[("Sturm Walden", "pers")], [("Berlin", "place")], [("1914", "date")]]
    assert [t.text for t in corpus.train[0]] == ["Der", "Sturm", "Walden"]
    assert spans(corpus.dev[0]) == [("Berlin", "place")]
    assert spans(corpus.test[0]) == [("Walden", "pers")]


def test_load_corpus_repairs_ill_formed_bio(sturm):
    root = sturm("A O\nB I-pers\nC I-place\nD I-place\n")
    (sentence,) = load_corpus("sturm", root).train
    assert spans(sentence) == [("B", "pers"), ("C D", "place")]


def test_load_corpus_missing_split_names_fetch_command_and_never_samples(write, tmp_path):
    dev = "1\tSchartau\tB-PER\tO\n2\tsagte\tO\tO\n\n1\tin\tO\tO\n2\tBonn\tB-LOC\tO\n\n1\tja\tO\tO\n"
    write("germeval2014/NER-de-dev.tsv", dev)
    write("germeval2014/NER-de-test.tsv", "#\tcomment\n1\tKöln\tB-LOC\tO\t\n")
    expected = tmp_path / "germeval2014" / "NER-de-train.tsv"
    with pytest.raises(FlairsuiteError) as info:
        load_corpus("germeval14", tmp_path)
    message = str(info.value)
    assert not isinstance(info.value, InputError)
    assert message.startswith(f"germeval14: train split not found ({expected})")
    assert "flairsuite corpora fetch germeval14" in message
    assert "--split dev,test" in message
    corpus = load_corpus("germeval14", tmp_path, splits=["dev", "test"])
    assert corpus.train is None
    assert len(corpus.dev) == 3 and len(corpus.test) == 1  # nothing sampled away into a train split
    assert [spans(s) for s in corpus.dev] == [[("Schartau", "PER")], [("Bonn", "LOC")], []]
    assert spans(corpus.test[0]) == [("Köln", "LOC")]


def test_load_corpus_no_split_present_has_no_splits_hint(tmp_path):
    with pytest.raises(FlairsuiteError, match=r"run `flairsuite corpora fetch sturm`$"):
        load_corpus("sturm", tmp_path)


def test_load_corpus_user_supplied_missing_split(tmp_path):
    with pytest.raises(FlairsuiteError, match=r"conll03-en: train split not found .*place the files from https://"):
        load_corpus("conll03-en", tmp_path)


def test_load_corpus_germeval_inner_level(write, tmp_path):
    text = "#\tcomment\n1\tUniversität\tB-ORG\tO\t\n2\tBonn\tI-ORG\tB-LOC\t\n"
    for split in ("train", "dev", "test"):
        write(f"germeval2014/NER-de-{split}.tsv", text)
    outer = load_corpus("germeval14", tmp_path)
    inner = load_corpus("germeval14", tmp_path, level="inner")
    assert spans(outer.test[0]) == [("Universität Bonn", "ORG")]
    assert spans(inner.test[0]) == [("Bonn", "LOC")]


def test_load_corpus_ler_coarse_and_hash_token(write, tmp_path):
    text = "# O\nBGH B-GRT\nAbs. B-GS\n3 I-GS\nMüller B-RR\nMeier I-AN\n"
    for name in ("ler_train.conll", "ler_dev.conll", "ler_test.conll"):
        write(f"ler/{name}", text)
    fine = load_corpus("ler", tmp_path)
    coarse = load_corpus("ler", tmp_path, granularity="coarse")
    assert [t.text for t in fine.train[0]][0] == "#"
    assert spans(fine.train[0]) == [("BGH", "GRT"), ("Abs. 3", "GS"), ("Müller", "RR"), ("Meier", "AN")]
    assert spans(coarse.train[0]) == [("BGH", "ORG"), ("Abs. 3", "NRM"), ("Müller", "PER"), ("Meier", "PER")]
    assert dataset("ler", granularity="coarse").output_types == ("PER", "LOC", "ORG", "NRM", "REG", "RS", "LIT")


def test_load_corpus_ler_reads_the_reconstructed_gz_train(write, tmp_path):
    write("ler/ler_train.reconstructed.conll.gz", "Art. B-GS\n1 I-GS\n", compress=True)
    write("ler/ler_dev.conll", "A O\n")
    write("ler/ler_test.conll", "A O\n")
    assert spans(load_corpus("ler", tmp_path).train[0]) == [("Art. 1", "GS")]


def test_load_corpus_conllu_pos_labels_and_whitespace(write, tmp_path):
    text = "# text = Hi, you.\n" + "\n".join(
        [
            conllu_row("1", "Hi", "INTJ", "SpaceAfter=No"),
            conllu_row("2", ",", "PUNCT"),
            conllu_row("3-4", "you.", "_"),
            conllu_row("3", "you", "PRON", "SpaceAfter=No"),
            conllu_row("4", ".", "PUNCT"),
        ]
    ) + "\n\n"
    for split in ("train", "dev", "test"):
        write(f"ud_english_ewt/en_ewt-ud-{split}.conllu", text)
    corpus = load_corpus("ud-en-ewt", tmp_path)
    sentence = corpus.test[0]
    assert [t.get_label("upos").value for t in sentence] == ["INTJ", "PUNCT", "PRON", "PUNCT"]
    assert sentence.to_original_text() == "Hi, you."
    assert sentence.get_spans("ner") == []


def test_load_corpus_dane_misc_names(write, tmp_path):
    rows = [conllu_row("1", "Anders", "PROPN", "name=B-PER"), conllu_row("2", "Fogh", "PROPN", "name=I-PER"), conllu_row("3", "taler", "VERB", "name=O")]
    text = "".join(row + "\n" for row in rows)
    for split in ("train", "dev", "test"):
        write(f"dane/ddt.{split}.conllu", text)
    assert spans(load_corpus("dane", tmp_path).dev[0]) == [("Anders Fogh", "PER")]


def test_load_corpus_cluener_character_spans(write, tmp_path):
    line = '{"text": "在北京市工作", "label": {"address": {"北京市": [[1, 3]]}}}\n'
    write("cluener2020/train.json", line)
    write("cluener2020/dev.json", line)
    corpus = load_corpus("cluener", tmp_path)
    assert corpus.test is None
    (sentence,) = corpus.dev
    assert len(sentence) == 6
    assert spans(sentence) == [("北京市", "address")]


def test_load_corpus_cluener_unknown_type(write, tmp_path):
    write("cluener2020/train.json", '{"text": "ab"}\n{"text": "ab", "label": {"city": {"ab": [[0, 1]]}}}\n')
    write("cluener2020/dev.json", '{"text": "ab"}\n')
    with raises_at(tmp_path / "cluener2020" / "train.json", 2, "unknown entity type 'city'"):
        load_corpus("cluener", tmp_path)


def test_load_corpus_unknown_dataset_suggests_close_match(tmp_path):
    with pytest.raises(FlairsuiteError, match=r"unknown dataset 'strum'\. Did you mean sturm\?"):
        load_corpus("strum", tmp_path)


def test_load_corpus_unknown_option(sturm):
    root = sturm("A O\n")
    with pytest.raises(FlairsuiteError, match=r"dataset 'sturm' has no option 'level' \(its options: none\)"):
        load_corpus("sturm", root, level="inner")
    with pytest.raises(FlairsuiteError, match=r"option granularity=medium is not one of: fine, coarse"):
        load_corpus("ler", root, granularity="medium")


def test_danish_ner_train_size_option_picks_the_5k_file(write, tmp_path):
    write("danish_ner_plank2019/da_ddt-ud-ner-train-5k.conll", "Aarhus\tB-LOC\n")
    write("danish_ner_plank2019/da_ddt-ud-ner-dev.conll", "A\tO\n")
    write("danish_ner_plank2019/da_ddt-ud-ner-test.conll", "A\tO\n")
    with pytest.raises(FlairsuiteError, match="train split not found"):
        load_corpus("danish-ner", tmp_path)
    assert spans(load_corpus("danish-ner", tmp_path, train_size="5k").train[0]) == [("Aarhus", "LOC")]


# --- stats ------------------------------------------------------------------------------------


def test_corpus_stats_counts_after_repair(sturm):
    root = sturm("A B-pers\nB I-pers\n\nC I-place\nD O\n", dev="X O\n", test="Y B-date\n")
    stats = corpus_stats(dataset("sturm"), root)
    assert stats.summary.loc["train", "sentences"] == 2
    assert stats.summary.loc["train", "tokens"] == 4
    assert stats.summary.loc["train", "entities"] == 2
    assert stats.summary.loc["train", "repairs"] == 1
    assert stats.summary.loc["dev", "file"] == "dev_sturm.conll"
    assert stats.types.to_dict() == {
        "train": {"pers": 1, "place": 1, "date": 0},
        "dev": {"pers": 0, "place": 0, "date": 0},
        "test": {"pers": 0, "place": 0, "date": 1},
    }
    assert stats.repairs.loc["I-X after start -> B-X"].to_dict() == {"train": 1, "dev": 0, "test": 0}


# --- raw text -------------------------------------------------------------------------------------

LINES = FileSpec(name="eltec", files=("x",), format=FormatSpec(kind="lines"))
GNAD = FileSpec(name="news", files=("x",), format=FormatSpec(kind="csv", delimiter=";", quotechar="'", column=1))


def test_iter_documents_gz_lines(write):
    path = write("eltec_deu.txt.gz", "\ufeffErster Absatz.\r\n\n   \n\tZweiter Absatz.  \nDritter", compress=True)
    assert list(iter_documents(path, LINES)) == [(1, "Erster Absatz."), (4, "Zweiter Absatz."), (5, "Dritter")]


def test_iter_documents_10kgnad_csv(write):
    text = (
        "Etat;'Die ARD-Tochter Degeto hat sich verpflichtet; sagt ''sie''.'\n"
        "\n"
        "Sport;'Rapid gewinnt'\n"
        "Kultur;'Erste Zeile\nzweite Zeile'\n"
        "Web;Ohne Anführung\n"
    )
    path = write("test.csv", text)
    assert list(iter_documents(path, GNAD)) == [
        (1, "Die ARD-Tochter Degeto hat sich verpflichtet; sagt 'sie'."),
        (3, "Rapid gewinnt"),
        (4, "Erste Zeile\nzweite Zeile"),
        (6, "Ohne Anführung"),
    ]


def test_iter_documents_csv_missing_text_column(write):
    path = write("test.csv", "Etat;'a'\nSport;'b'\nKultur\n")
    with raises_at(path, 3, r"expected a text column 2, found 1 column\(s\)"):
        list(iter_documents(path, GNAD))


def test_iter_documents_csv_unterminated_quote(write):
    path = write("test.csv", "Etat;'a'\nSport;'b\nKultur;c\n")
    with raises_at(path, 2, r"malformed CSV record"):
        list(iter_documents(path, GNAD))


JSON_TEXT = FileSpec(name="cluener-train", files=("x",), format=FormatSpec(kind="json_lines", field="text"))


def test_iter_documents_json_lines_take_the_text_field(write):
    path = write("train.json", '{"text": " 浙商银行企业信贷部 ", "label": {}}\n\n{"text": ""}\n{"text": "2009年 Nokia"}\n')
    assert list(iter_documents(path, JSON_TEXT)) == [(1, "浙商银行企业信贷部"), (4, "2009年 Nokia")]


@pytest.mark.parametrize(("line", "message"), [
    ('{"text": "a"', r"not a JSON object \("),
    ('["text"]', r"not a JSON object with a 'text' text field"),
    ('{"label": {}}', r"not a JSON object with a 'text' text field"),
])
def test_iter_documents_json_lines_bad_line(write, line, message):
    path = write("train.json", '{"text": "a"}\n' + line + "\n")
    with raises_at(path, 2, message):
        list(iter_documents(path, JSON_TEXT))


def test_iter_documents_non_utf8(write):
    path = write("test.csv", b"Etat;'a'\nSport;'\xe9'\n")
    with raises_at(path, 2, r"not valid utf-8: byte 0xe9"):
        list(iter_documents(path, GNAD))


def test_raw_source_path_finds_gz_and_names_fetch(write, tmp_path):
    spec = dataset("raw-de")
    with pytest.raises(FlairsuiteError, match=r"raw-de: source 'news' not found .*`flairsuite corpora fetch raw-de`"):
        source_path(spec, spec.sources["news"], tmp_path)
    path = write("raw_de_10kgnad/test.csv.gz", "Etat;'Text'\n", compress=True)
    assert source_path(spec, spec.sources["news"], tmp_path) == path
    assert list(iter_documents(path, spec.sources["news"])) == [(1, "Text")]


def test_spec_locate_prefers_first_candidate_then_gz(write, tmp_path):
    spec = dataset("ler")
    entry = spec.splits["train"]
    gz = write("ler/ler_train.reconstructed.conll.gz", "", compress=True)
    assert spec.locate(entry, tmp_path) == gz
    plain = write("ler/ler_train.conll.gz", "", compress=True)
    assert spec.locate(entry, tmp_path) == plain


def test_read_split_rejects_non_labeled_format(write):
    spec = dataset("sturm")
    bad = type(spec)(**{**spec.__dict__, "format": FormatSpec(kind="lines")})
    path = write("x.txt", "a\n")
    with raises_at(path, None, "format 'lines' is not a labeled format"):
        read_split(bad, path)
