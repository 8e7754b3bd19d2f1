"""Words broken at a line end joined for tagging (`flairsuite.corpora.line_ends`): the rule, the view and its map back to
the original characters, streamed parts, and predict, serve and suggest on the committed tiny taggers."""

import functools
import json
import re
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.corpora.line_ends import JOIN, KEEP, LEAVE, decision, joined_view, reading_view
from flairsuite.corpora.segmentation import flair_view, split_text
from flairsuite.inference import stream
from flairsuite.inference.raw_tags import split, tag
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.inference.stream import text_parts
from flairsuite.inference.tagger import torch_threads
from flairsuite.predict import loading
from flairsuite.predict.inputs import predict_document
from flairsuite.predict.outputs import column_block, sentence_json
from flairsuite.predict.prediction import Prediction

MODELS = Path(__file__).parent / "fixtures" / "saved-models"
LETTER = (
    "Sindelsdorf, den 14. März 1913.\n\nLieber Herr Wal-\nden! Gestern war ich in Ber-\nlin bei Else Lasker-\nSchüler und "
    "Jacoba van Heems-\nkerck; d’Audretsch kam auch. Haus-\nund Gartenarbeit ruht. „Sturm“ (Wien)!\nIhr Franz Marc aus Sindels¬\ndorf\n"
)
JOINED = {"Walden": "Wal-\nden", "Berlin": "Ber-\nlin", "Lasker-Schüler": "Lasker-\nSchüler", "Heemskerck": "Heems-\nkerck", "Sindelsdorf": "Sindels¬\ndorf"}


def tokens_in_file(text: str, join: bool = True) -> list[tuple[str, str]]:
    """Every token of the whole text's split (its text, and the characters of `text` it stands for)."""
    view = reading_view(text, join)
    found = []
    for sentence in split_text(view.text):
        for token in sentence:
            start, end = view.original(sentence.start_position + token.start_position, sentence.start_position + token.end_position)
            found.append((token.text, text[start:end]))
    return found


def test_a_broken_word_joins_and_maps_back():
    text = "Gestern in Ber-\nlin."
    view = reading_view(text)
    assert view.text == "Gestern in Berlin."
    start = view.text.index("Berlin")
    assert text[slice(*view.original(start, start + 6))] == "Ber-\nlin"
    assert text[slice(*view.original(start, start + 3))] == "Ber" and text[slice(*view.original(start + 3, start + 6))] == "lin"
    assert view.original(len(view.text), len(view.text))[0] == len(text)  # the end maps to the end


def test_a_compound_keeps_its_hyphen():
    view = reading_view("Else Lasker-\nSchüler kam.")
    assert view.text == "Else Lasker-Schüler kam."
    assert "Else Lasker-\nSchüler kam."[slice(*view.original(5, 19))] == "Lasker-\nSchüler"


@pytest.mark.parametrize(
    "text, joined",
    [
        ("Sindels-\ndorf", "Sindelsdorf"),
        ("Heems-\nkerck", "Heemskerck"),
        ("Herwarth Wal-\nden", "Herwarth Walden"),
        ("Ber- \r\n   lin", "Berlin"),  # spaces around a CRLF break
        ("Sindels¬\ndorf", "Sindelsdorf"),
        ("Sindels⸗\ndorf", "Sindelsdorf"),
        ("Sindels=\ndorf", "Sindelsdorf"),
        ("Lasker⸗\nSchüler", "Lasker-Schüler"),  # a compound's hyphen is written "-"
        ("Heems\u00ad\nKerck", "HeemsKerck"),  # a soft hyphen only ever breaks a syllable
        ("US-\ngeführten", "US-geführten"),
        ("BER-\nLIN", "BERLIN"),
        ("Haus-\nund Gartenarbeit", "Haus-\nund Gartenarbeit"),  # a suspended compound: left as it is
        ("Ber-\n\nlin", "Ber-\n\nlin"),  # a paragraph break is no line end
        ("1914-\n1918", "1914-\n1918"),
        ("Er kam -\nund ging", "Er kam -\nund ging"),
    ],
)
def test_the_rule(text, joined):
    assert joined_view(text).text == joined


def test_decisions():
    assert decision("Ber", "lin") == JOIN and decision("Lasker", "Schüler") == KEEP and decision("Haus", "und") == LEAVE
    assert decision("Vor", "oder") == LEAVE and decision("so", "wie") == JOIN and decision("den", "noch") == JOIN


def test_composed_with_flairs_view():
    """Flair's changes (a zero-width space dropped, a C1 control restored) and the joining both apply; offsets are the file's."""
    text = "Herr\u200b Wal-\nden, \u0080 Ber-\nlin"
    view = reading_view(text)
    assert view.text == flair_view(joined_view(text).text).text.replace("\u200b", "") == "Herr Walden, € Berlin"
    for word, original in (("Walden", "Wal-\nden"), ("Berlin", "Ber-\nlin"), ("Herr", "Herr")):
        start = view.text.index(word)
        assert text[slice(*view.original(start, start + len(word)))] == original
    assert reading_view(text, join=False) == flair_view(text)


def test_the_off_switch_is_flairs_view():
    for text in (LETTER, "plain", "a\u200bb Ber-\nlin"):
        assert reading_view(text, join=False) == flair_view(text)
    assert reading_view("no breaks here.").origin is None


def test_whole_text_tokens():
    found = dict(tokens_in_file(LETTER))
    assert {word: found[word] for word in JOINED} == JOINED
    assert ("Haus", "Haus") in tokens_in_file(LETTER) and ("und", "und") in tokens_in_file(LETTER)
    kept = [word for word, _ in tokens_in_file(LETTER, join=False)]
    assert "Berlin" not in kept and "Ber" in kept and "lin" in kept


@pytest.mark.parametrize("window", [60, 90])
def test_parts_hold_the_whole_texts_joined_tokens(window):
    """Read in blocks of 7 characters and cut into windows, the parts give the whole text's joined tokens at its offsets."""
    text = LETTER * 4
    parts = list(text_parts([text[i : i + 7] for i in range(0, len(text), 7)], "words", window))
    assert "".join(part.text for part in parts) == text
    streamed = []
    for part in parts:
        for sentence in part.sentences:
            for token in sentence:
                start, end = part.original(sentence.start_position + token.start_position, sentence.start_position + token.end_position)
                streamed.append((token.text, text[start:end]))
    assert streamed == tokens_in_file(text)


def test_a_forced_cut_never_parts_a_broken_word():
    """A text without sentence ends is cut at whitespace, never inside a line-end break."""
    text = "".join(f"wort{i} Ber-\nlin " for i in range(400))
    parts = list(text_parts([text[i : i + 50] for i in range(0, len(text), 50)], "words", 100))
    assert len(parts) > 10
    words = [token.text for part in parts for sentence in part.sentences for token in sentence]
    assert words.count("Berlin") == 400 and "Ber" not in words


@pytest.fixture(scope="module")
def letter(tmp_path_factory) -> Path:
    return write_file(tmp_path_factory.mktemp("letter") / "brief.txt", LETTER)


def predicted(path: Path, fmt: str, model: str = "map.pt", **options) -> Prediction:
    with torch_threads(1):
        return predict_document(MODELS / model, path, fmt, False, None, **options)


def test_predict_tags_the_joined_words_at_the_files_offsets(letter):
    objects = [json.loads(line) for line in predicted(letter, "json").text.splitlines()]
    tokens = [token for sentence in objects for token in sentence["tokens"]]
    assert set(JOINED) <= set(tokens) and "Ber" not in tokens
    surfaces = {LETTER[span["start_char"] : span["end_char"]] for sentence in objects for span in sentence["spans"]}
    assert {"Ber-\nlin", "Heems-\nkerck", "Wal-\nden"} <= surfaces  # the tiny tagger marks nearly every word
    for sentence in objects:
        for span in sentence["spans"]:
            surface = LETTER[span["start_char"] : span["end_char"]]
            first, last = sentence["tokens"][span["start"]], sentence["tokens"][span["end"] - 1]
            assert joined_view(surface).text.startswith(first) and joined_view(surface).text.endswith(last)


@pytest.mark.parametrize("fmt", ["conll", "webanno"])
def test_token_formats_hold_a_joined_word_as_the_pieces_of_its_lines(letter, fmt):
    text = predicted(letter, fmt).text
    if fmt == "conll":
        rows = [line.split(" ") for line in text.splitlines() if line]
        assert ["Ber-", "B-date"] in rows or any(row[0] == "Ber-" for row in rows)
        assert [row[0] for row in rows][[row[0] for row in rows].index("Ber-") + 1] == "lin"
    else:
        rows = [line.split("\t") for line in text.splitlines() if re.match(r"\d+-\d+\t", line)]
        pieces = {row[2]: row for row in rows}
        assert "Ber-" in pieces and "lin" in pieces and "Berlin" not in pieces
        start, end = pieces["Ber-"][1].split("-")
        assert LETTER[int(start) : int(end)] == "Ber-"
        assert pieces["Ber-"][4] == pieces["lin"][4] and "[" in pieces["lin"][4]  # one span over both


def test_the_off_switch_gives_the_old_output(letter, monkeypatch):
    """--keep-line-ends --keep-raw-spans: column and JSON as the old pipeline made them (Flair's view, split, raw tags)."""
    model = load_tagger(MODELS / "lcrf-ner.pt")
    monkeypatch.setattr(loading, "load_tagger", lambda path: model)
    view = flair_view(LETTER)
    sentences = split(view.text)
    with torch_threads(1):
        tagged = tag(model, sentences, False, None)
    column = "\n\n".join(column_block(s, tags) for s, tags in zip(sentences, tagged)) + "\n"
    lines = "".join(json.dumps(sentence_json(s, tags, True, view), ensure_ascii=False) + "\n" for s, tags in zip(sentences, tagged))
    assert predicted(letter, "column", join_lines=False, reader_spans=False).text == column
    assert predicted(letter, "json", join_lines=False, reader_spans=False).text == lines
    assert predicted(letter, "column").text != column


def test_serve_joins_a_text_and_a_cass_tokens():
    from flairsuite.serve.engine import TextTagger, Tokens, merged

    text = "Lieber Herr Wal-\nden! Gestern war ich in Ber-\nlin bei Else Lasker-\nSchüler. Haus-\nund Hof."
    tokens = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]
    found = [text[start:end] for start, end in merged(text, tokens)]
    assert {"Wal-\nden", "Ber-\nlin", "Lasker-\nSchüler"} <= set(found) and "Haus" in found and "-" in found
    assert merged(text, [(m.start(), m.end()) for m in re.finditer(r"\S+", text)])[2:3] == [(12, 21)]  # "Wal-" and "den!"
    tagger = TextTagger(MODELS / "lcrf-ner.pt", fast=False)
    plain = TextTagger(MODELS / "lcrf-ner.pt", fast=False, join_lines=False, reader_spans=False)
    with torch_threads(1):
        as_text, as_tokens = tagger.tag([text, Tokens(text, [tokens])])
        old = plain.tag([Tokens(text, [tokens])])[0]
    assert as_text.tokens == as_tokens.tokens == len(tokens) - 6 and old.tokens == len(tokens)
    for tagging in (as_text, as_tokens):
        assert {"Ber-\nlin", "Wal-\nden"} <= {text[span.start : span.end] for span in tagging.spans}
    assert "Ber-\nlin" not in {text[span.start : span.end] for span in old.spans}


def test_suggest_ranks_and_writes_the_joined_words(tmp_path, monkeypatch):
    from flairsuite.suggest.suggestion import suggest
    from flairsuite.suggest.texts import read_units

    path = write_file(tmp_path / "brief.txt", LETTER)
    units = read_units(path, "sentence", "words")
    words = {token.text for unit in units for sentence in unit.sentences for token in sentence}
    assert set(JOINED) <= words
    assert [unit.source for unit in units] == [f"{path}:{line}" for line in (1, 3, 4, 7, 8, 9)]
    kept = {token.text for unit in read_units(path, "sentence", "words", join=False) for sentence in unit.sentences for token in sentence}
    assert "Berlin" not in kept and "Ber" in kept
    monkeypatch.setattr("flairsuite.suggest.units.text_parts", functools.partial(stream.text_parts, window=60))
    with torch_threads(1):
        found = suggest(MODELS / "map.pt", path, 10, "column")
    assert set(JOINED) <= {line.split("\t")[0] for line in found.text.splitlines() if line}


def test_a_users_text_file_reads_broken_words_whole_for_the_language_models(tmp_path):
    """`--corpus` / `adapt: text:` files: a line ending in a broken word goes on in the next line, joined by predict's
    rule; a registered set's lines stay one document each."""
    from flairsuite.corpora.raw import iter_documents
    from flairsuite.corpora.registry import FileSpec, FormatSpec
    from flairsuite.rawtext.prepare import LINES

    path = tmp_path / "letters.txt"
    path.write_text("Ich war in Ber-\nlin bei Else Lasker-\nSchüler und Haus-\nund Hofleuten.\n\nZweiter Brief.\n", encoding="utf-8")
    assert list(iter_documents(path, LINES)) == [(1, "Ich war in Berlin bei Else Lasker-Schüler und Haus- und Hofleuten."), (6, "Zweiter Brief.")]
    registered = FileSpec(name="raw", files=(), format=FormatSpec(kind="lines"))
    assert [text for _, text in iter_documents(path, registered)][:2] == ["Ich war in Ber-", "lin bei Else Lasker-"]
