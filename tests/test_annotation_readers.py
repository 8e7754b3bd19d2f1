"""Reading what annotation tools write: WebAnno TSV 3.3 (INCEpTION), doccano JSONL, Label Studio JSON, column files with a
header and MISC sentence-end flags (HIPE-style newspapers), IO tags; every conversion rule with its count, and bad input
(truncated files, bad bytes, wrong columns) as one `file:line` error.

The fixtures in tests/fixtures/annotation/ are written from the formats' public specifications: the WebAnno TSV 3.3
section of the INCEpTION documentation, doccano's export formats, Label Studio's JSON export, the HIPE-2022 format.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.jsonl_spans import read_jsonl
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import own_corpus
from flairsuite.corpora.readers import read_column
from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.segmentation import split_text
from flairsuite.corpora.webanno_reader import read_webanno, unescape_java_text
from flairsuite.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "annotation"
LETTER = FIXTURES / "inception-letter.tsv"
WEBANNO = FormatSpec("webanno")
JSONL = FormatSpec("jsonl")
HIPE = FormatSpec("column", sep="tab", text="TOKEN", label="NE-COARSE-LIT", comment="# ", header=None, sentence_end="MISC:EndOfSentence")


def tagged(sentences) -> list[list[str]]:
    return [[f"{token}/{tag}" for token, tag in zip(s.tokens, s.tags)] for s in sentences]


def raises_at(path: Path, line, match: str):
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    return pytest.raises(InputError, match=re.escape(where) + match)


def header_and(body: str, layers: str = "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value") -> str:
    return f"#FORMAT=WebAnno TSV 3.3\n{layers}\n\n\n{body}"


# --- WebAnno TSV 3.3 --------------------------------------------------------------------------


def test_webanno_reads_the_named_entity_layer_alone_by_the_documented_rules():
    repairs = Counter()
    first, second = read_webanno(LETTER, WEBANNO, "utf-8", repairs)
    # PER[1] over two rows is one span; FAM[5] stacked inside it and ORG stacked on Berlin are dropped, the longer
    # (then the first written) kept; the lemma, custom span, chain and relation columns are not read
    assert tagged([first]) == [["Lieber/O", "Herwarth/B-PER", "Walden/I-PER", ",/O", "ich/O", "komme/O", "am/O", "12./B-DATE",
                                "März/I-DATE", "nach/O", "Berlin/B-LOC", "./O"]]
    # the LOC on sub-token 2-6.1 splits its token; WORK\_OF\_ART is unescaped; after the Gothic word (4 characters,
    # 8 UTF-16 units) the offsets still meet their tokens; `*[4]` is an annotation without a value
    assert tagged([second]) == [["Die/O", "Galerie/O", "Der/B-ORG", "Sturm/I-ORG", "in/O", "Berlin/B-LOC", "-Charlottenburg/O", "zeigt/O",
                                 "das/O", "gotische/O", "𐌰𐍄𐍄𐌰/B-WORK_OF_ART", "und/O", "Mappe/O", "3\\4/O", "./O"]]
    assert repairs == {"overlapping span dropped": 2, "overlapping span kept": 2, "annotation without a value (*) dropped": 1,
                       "token split at a span edge": 1}
    assert first.whitespace_after[2:4] == [False, True] and second.whitespace_after[5:7] == [False, True]  # "Walden," and "Berlin-"
    assert first.lines[:2] == [10, 11] and second.lines[5:7] == [29, 29]  # a split token keeps its row's line


def test_webanno_reads_another_span_layer_and_feature_by_its_short_name():
    sentences = list(read_webanno(LETTER, FormatSpec("webanno", layer="Letterpart", feature="kind"), "utf-8", Counter()))
    assert tagged(sentences)[0][:5] == ["Lieber/B-salutation", "Herwarth/I-salutation", "Walden/I-salutation", ",/I-salutation", "ich/O"]
    assert {tag for s in sentences[1:] for tag in s.tags} == {"O"}


@pytest.mark.parametrize(
    "fmt, message",
    [
        (FormatSpec("webanno", layer="CoreferenceLink", feature="referenceType"),
         "layer de.tudarmstadt.ukp.dkpro.core.api.coref.type.CoreferenceLink is a chain layer; `layer:` names a span layer"),
        (FormatSpec("webanno", feature="type"), "layer de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity has no feature 'type' "
                                                "(its features: identifier, value); choose one with `feature:`"),
    ],
)
def test_webanno_layer_errors_name_the_declaration_line(fmt, message):
    with raises_at(LETTER, 6, re.escape(message)):
        list(read_webanno(LETTER, fmt, "utf-8", Counter()))


def test_webanno_file_without_the_layer_is_all_o_and_counted(write):
    path = write("doc.tsv", header_and("#Text=Grüße.\n1-1\t0-5\tGrüße\tgrüßen\n1-2\t5-6\t.\t.\n",
                                       "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Lemma|value"))
    repairs = Counter()
    assert tagged(read_webanno(path, WEBANNO, "utf-8", repairs)) == [["Grüße/O", "./O"]]
    assert repairs == {"file without the layer: all tokens O": 1}


def test_webanno_multiline_escaped_text_and_a_span_across_sentences(write):
    body = ("#Text=Herwarth\n1-1\t0-8\tHerwarth\t*[1]\tPER[1]\n\n"
            "#Text=Walden\\tschrieb\n#Text=aus Berlin\n2-1\t9-15\tWalden\t*[1]\tPER[1]\n2-2\t16-23\tschrieb\t_\t_\n"
            "2-3\t24-27\taus\t_\t_\n2-4\t28-34\tBerlin\t*\tLOC\n")
    repairs = Counter()
    (sentence,) = read_webanno(write("doc.tsv", header_and(body)), WEBANNO, "utf-8", repairs)
    assert tagged([sentence]) == [["Herwarth/B-PER", "Walden/I-PER", "schrieb/O", "aus/O", "Berlin/B-LOC"]]
    assert repairs == {"sentences joined: a span crosses their end": 1}


@pytest.mark.parametrize(
    "content, line, message",
    [
        ("#Text=Anna\n1-1\t0-4\tAnna\t*\tPER\n", 1, "no '#FORMAT=WebAnno TSV 3.x' line: not a WebAnno TSV 3 file"),
        (header_and("#Text=Anna\n1-1\t0-9\tAnna\t*\tPER\n"), 6, re.escape("offsets 0-9 fall outside the text of their sentence (UTF-16 offsets 0-4)")),
        (header_and("#Text=Anna kam\n1-1\t0-4\tAnna\t*\n"), 6, "expected 5 tab-separated columns"),
        (header_and("#Text=Anna kam\n1-1\t0-4\tAnna\t*\tPER\n1-2\t5"), 7, "expected 5 tab-separated columns"),  # truncated
        (header_and("#Text=Anna kam\n1-1\t0-4\tAnna\t*\tPER\n1-2\t4-8\tkam\t_\t_\n"), 7, "token 'kam' is not the text at its offsets"),
        (header_and("#Text=Anna\n1-1.1\t0-2\tAn\t*\tPER\n"), 6, "sub-token 1-1.1 before any token of its sentence"),
        (header_and("#Text=Anna\n1-1\t0-4\tAnna\t_\t_\n1-1.1\t2-6\tna\t*\tPER\n"), 7, "offsets 2-6 fall outside the text"),
        (header_and("#Text=😊 Anna\n1-1\t0-1\t?\t_\t_\n"), 6, "UTF-16 offset 1 falls inside a character of the text"),
        (header_and("1-1\t0-4\tAnna\t*\tPER\n"), 5, "token row without a #Text= line before its sentence"),
        (header_and("#Text=Anna\nx-1\t0-4\tAnna\t*\tPER\n"), 6, "'x-1\t0-4' is no 'SENTENCE-TOKEN<TAB>BEGIN-END' pair"),
        ("#FORMAT=WebAnno TSV 3.3\n#T_SP=x|y\nnonsense\n", 3, "expected a layer declaration"),
    ],
)
def test_webanno_bad_input_is_one_file_line_error(write, content, line, message):
    path = write("doc.tsv", content)
    with raises_at(path, line, message):
        list(read_webanno(path, WEBANNO, "utf-8", Counter()))


def test_webanno_31_text_is_java_escaped_and_32_on_is_not(write):
    # TSV 3.1 (WebAnno 3.2) wrote `#Text=` with Java's escapes, non-ASCII as \\uXXXX (webanno/webanno#617), read back by INCEpTION with
    # commons-lang3 unescapeJava; from 3.2 on only \\, tab, line feed, \\f, \\r, \\b and control characters are escaped (Escaping.java)
    body = ("#Text=Daf\\u00FCr wegen gef\\u00E4hrlicher K\\u00F6rperverletzung \\u2013 \\uD83D\\uDE0A \\\"erneut\\\" \\\\ .\\r\n"
            "1-1\t0-5\tDafür\t_\t_\n1-2\t6-11\twegen\t_\t_\n1-3\t12-24\tgefährlicher\t*[1]\tLAW[1]\n1-4\t25-41\tKörperverletzung\t*[1]\tLAW[1]\n"
            "1-5\t42-43\t–\t_\t_\n1-6\t44-46\t😊\t_\t_\n1-7\t47-55\t\"erneut\"\t_\t_\n1-8\t56-57\t\\\\\t_\t_\n1-9\t58-59\t.\t_\t_\n")
    old = write("old.tsv", header_and(body).replace("TSV 3.3", "TSV 3.1"))
    (sentence,) = read_webanno(old, WEBANNO, "utf-8", Counter())
    assert tagged([sentence]) == [["Dafür/O", "wegen/O", "gefährlicher/B-LAW", "Körperverletzung/I-LAW", "–/O", "😊/O", '"erneut"/O', "\\/O", "./O"]]
    # the same \\u in a 3.3 file is text: six characters, as INCEpTION reads it
    new = write("new.tsv", header_and("#Text=Daf\\u00FCr kam\\\\\n1-1\t0-10\tDaf\\u00FCr\t*\tPER\n1-2\t11-15\tkam\\\\\t_\t_\n"))
    assert tagged(read_webanno(new, WEBANNO, "utf-8", Counter())) == [["Daf\\u00FCr/B-PER", "kam\\/O"]]
    bad = write("bad.tsv", header_and("#Text=Daf\\u00Fr\n1-1\t0-5\tDafr\t_\t_\n").replace("TSV 3.3", "TSV 3.1"))
    with raises_at(bad, 5, re.escape("'\\u00Fr' is no \\uXXXX escape (four hex digits) in a WebAnno TSV 3.1 #Text= line")):
        list(read_webanno(bad, WEBANNO, "utf-8", Counter()))


def test_java_unescaping_follows_commons_lang():
    assert unescape_java_text("\\101\\0x\\477\\3777") == "A\x00x'7\xff7"  # octal: up to three digits, the third only after 0-3
    assert unescape_java_text("\\uuu00e4\\u+00e4\\b\\t\\n\\f\\r\\'\\q\\") == "ää\b\t\n\f\r'q"  # any other backslash is dropped
    assert unescape_java_text("\\ud83d\\ude0a") == "😊"


def test_webanno_bad_bytes_name_the_line(write):
    path = write("doc.tsv", header_and("#Text=Anna\n1-1\t0-4\tAnna\t*\tPER\n").encode() + b"#Text=K\xf6ln\n")
    with raises_at(path, 7, "not valid utf-8: byte 0xf6"):
        list(read_webanno(path, WEBANNO, "utf-8", Counter()))


# --- doccano and Label Studio -----------------------------------------------------------------


def test_doccano_label_form_tokenised_as_predict_with_each_rule_counted():
    repairs = Counter()
    sentences = list(read_jsonl(FIXTURES / "doccano.jsonl", JSONL, "utf-8", repairs))
    assert tagged(sentences) == [
        ["Lieber/O", "Herwarth/B-PER", "Walden/I-PER", ",/O", "ich/O", "komme/O", "am/O", "12./B-DATE", "März/I-DATE", "nach/O",
         "Berlin/B-LOC", "./O"],
        ["Grüße/O", "an/O", "Nell/B-PER", "Walden/I-PER", "aus/O", "Berlin-Charlottenburg/B-LOC", "./O"],
        ["Die/O", "Sturm/B-ORG", "ausstellung/O", "zeigt/O", "Bilder/O", "von/O", "Franz/B-PER", "Marc/I-PER", "./O"],
        ["Herzlich/O", ",/O", "Ihr/O", "Kandinsky/B-PER"],
    ]
    # "Nell Walden " ends on a space; "Berlin" inside the longer "Berlin-Charlottenburg"; "Sturm" inside "Sturmausstellung"
    assert repairs == {"span edge on whitespace trimmed": 1, "overlapping span dropped": 1, "overlapping span kept": 1,
                       "token split at a span edge": 1, "record without text skipped": 1}
    assert [s.lines[0] for s in sentences] == [1, 2, 2, 3]


def test_jsonl_tokens_are_predicts_tokens(write):
    """Tokens and sentences as `predict` makes them of the same text (the tokenizer it uses, `split_text`)."""
    text = "Am 3. Mai 1914 schrieb Franz Marc aus Sindelsdorf:\u200b „Lieber Herwarth!“ Dann kam Kandinsky."
    path = write("a.jsonl", json.dumps({"text": text, "label": []}, ensure_ascii=False) + "\n")
    assert [s.tokens for s in read_jsonl(path, JSONL, "utf-8", Counter())] == [[token.text for token in s] for s in split_text(text)]


def test_doccano_entities_form_and_a_date_stays_in_its_sentence():
    repairs = Counter()
    sentences = list(read_jsonl(FIXTURES / "doccano-entities.jsonl", JSONL, "utf-8", repairs))
    assert tagged(sentences)[1] == ["Am/O", "3/B-DATE", "./I-DATE", "Mai/I-DATE", "1914/I-DATE", "kam/O", "Paul/B-PER", "Klee/I-PER",
                                    "nach/O", "München/B-LOC", "./O"]
    assert tagged(sentences)[0][:2] == ["Else/B-PER", "Lasker-Schüler/I-PER"]
    assert repairs == Counter()  # the German splitter keeps "3. Mai 1914" in one sentence (segtok cut after "3.", and the reader joined them)


def test_label_studio_export_first_annotation_not_cancelled_each_skip_counted():
    repairs = Counter()
    sentences = list(read_jsonl(FIXTURES / "label-studio.json", JSONL, "utf-8", repairs))
    assert tagged(sentences) == [
        ["Lieber/O", "Herwarth/B-PER", "Walden/I-PER", ",/O", "die/O", "Ausstellung/O", "in/O", "Köln/B-LOC", "eröffnet/O", "am/O",
         "1./B-DATE", "Juni/I-DATE", "./O"],
        ["Gabriele/B-PER", "Münter/I-PER", "grüßt/O", "aus/O", "Murnau/B-LOC", "./O"],
    ]
    assert repairs == {"further annotation of a task skipped": 1, "span label after the first skipped": 1,
                       "result other than labels skipped": 1, "task without annotation skipped": 1}
    assert sentences[1].lines[0] == 103  # the line the task starts on


@pytest.mark.parametrize(
    "content, line, message",
    [
        ('{"text": "Anna", "label": [[0, 4, "PER"]]}\n["Anna"]\n', 2, "a JSON list, not an object"),
        ('{"text": "Anna", "label": [[0, 9, "PER"]]}\n', 1, re.escape("span [0, 9] is outside the text (length 4) or empty")),
        ('{"text": "Anna", "label": [[0, 4]]}\n', 1, re.escape("label item [0, 4] is not [start, end, TYPE]")),
        ('{"text": "Anna", "entities": [{"start_offset": 0, "end_offset": "4", "label": "PER"}]}\n', 1, 'span offsets 0, "4" are not integers'),
        ('{"text": "Anna"}\n', 1, "no 'label' list"),
        ('{"text": "Anna", "label": [[0, 4, "PER"]]}\n{"text": "Ot', 2, "not valid JSON"),  # truncated
        ('[{"data": {"text": "Anna"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 3, "text": "Anna", '
         '"labels": ["PER"]}}]}]}]', 1, re.escape("span [0, 3] is 'Ann', not 'Anna'")),
        ('[\n {"data": {"text": "Anna"}, "annotations": []},\n {"data": {"text": "Ot', 3, "not valid JSON"),  # truncated
        ('[\n {"data": {"text": "Anna"}, "annotations": []},\n', 2, re.escape("the JSON list of tasks ends early (truncated file?)")),
        ('[\n {"data": {"a": "x", "b": "y"}, "annotations": []}\n]', 2, "the task's data has no 'text' string"),
    ],
)
def test_jsonl_bad_input_is_one_file_line_error(write, content, line, message):
    path = write("export.jsonl", content)
    with raises_at(path, line, message):
        list(read_jsonl(path, JSONL, "utf-8", Counter()))


def test_jsonl_bad_bytes_name_the_line(write):
    path = write("export.jsonl", b'{"text": "Anna", "label": []}\n{"text": "K\xf6ln", "label": []}\n')
    with raises_at(path, 2, "not valid utf-8: byte 0xf6"):
        list(read_jsonl(path, JSONL, "utf-8", Counter()))


# --- column files: header, MISC sentence-end flags, IO ------------------------------------------


def test_hipe_style_header_named_columns_and_misc_flags():
    repairs = Counter()
    sentences = list(read_column(FIXTURES / "hipe-newspaper.tsv", HIPE, "utf-8", repairs))
    # `St.` carries EndOfSentence, but the entity continues in `Gallen`: no end there
    assert [s.tokens for s in sentences] == [
        ["Die", "Gesandtschaft", "in", "St.", "Gallen", "meldet", ":", "General", "Bonaparte", "."],
        ["Aus", "Zürich", "nichts", "."], ["Der", "Grosse", "Rath", "tagte", "."]]
    assert sentences[0].tags[3:5] == ["B-loc", "I-loc"] and sentences[0].whitespace_after[4:7] == [False, False, True]
    assert repairs == {"header line skipped": 1, "sentence-end flag inside an entity ignored": 1, "sentence ended by a flag": 1}


@pytest.mark.parametrize(
    "header, first, skipped",
    [(None, "TOKEN\tNE\n", 1), (None, "Anna\tB-PER\n", 0), (True, "word\ttag\n", 1), (False, "Anna\tB-PER\n", 0), (None, "Anna\tb-per\n", 0)],
)
def test_header_auto_true_false(write, header, first, skipped):
    path = write("a.tsv", first + "Otto\tB-PER\nkam\tO\n")
    repairs = Counter()
    sentences = list(read_column(path, FormatSpec("column", sep="tab", text=0, label=-1, header=header), "utf-8", repairs))
    assert len(sentences[0].tokens) == 3 - skipped and repairs["header line skipped"] == skipped


@pytest.mark.parametrize(
    "fmt, line, message",
    [
        (FormatSpec("column", sep="tab", text="TOKEN", label="NE", header=None), 1, "label: no column named 'NE' in the header line"),
        (FormatSpec("column", sep="tab", text=0, label=1, header=None, sentence_end="FLAGS:EndOfSentence"), 1,
         "sentence_end: no column named 'FLAGS' in the header line"),
        (FormatSpec("column", sep="tab", text=0, label=1, header=False, sentence_end="MISC:EndOfSentence"), 1,
         "sentence_end: 'MISC' names a column, but the file has no header line"),
        (FormatSpec("column", sep="tab", text=0, label=1, header=True, sentence_end="5:EndOfSentence"), 2,
         "expected at least 6 tab-separated columns, found 3"),
    ],
)
def test_column_and_flag_column_errors(write, fmt, line, message):
    path = write("a.tsv", "TOKEN\tNE-COARSE-LIT\tMISC\nAnna\tB-pers\t_\n")
    with raises_at(path, line, message):
        list(read_column(path, fmt, "utf-8"))


def test_io_scheme_starts_an_entity_at_each_type_change(tmp_path):
    text = "Franz\tPER\nMarc\tPER\nBerlin\tLOC\nund\tO\nWien\tI-LOC\n"
    for split in ("train", "dev", "test"):
        write_file(tmp_path / "io" / f"{split}.tsv", text)
    spec = own_corpus({"path": "io", "scheme": "io"}, tmp_path)
    (sentence,) = read_splits(spec, tmp_path / "io")["train"].sentences
    assert sentence.tags == ["B-PER", "I-PER", "B-LOC", "O", "B-LOC"] and spec.types == ("LOC", "PER")
    write_file(tmp_path / "io" / "dev.tsv", "Franz\tB-PER\n")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'io' / 'dev.tsv'}:1: tag 'B-PER' has a B- prefix, but scheme io has none")):
        own_corpus({"path": "io", "scheme": "io"}, tmp_path)


def test_the_format_registry_reads_every_format():
    for path, fmt in ((LETTER, WEBANNO), (FIXTURES / "doccano.jsonl", JSONL), (FIXTURES / "hipe-newspaper.tsv", HIPE)):
        assert any(tag != "O" for s in read_tagged(path, fmt, "utf-8", Counter()) for tag in s.tags)
