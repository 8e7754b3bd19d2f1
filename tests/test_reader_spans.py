"""Spans a reader would accept (`flairsuite.inference.reader_spans`): the rules on tags, every predict format holding the
same spans, the keep option, the count in the summary line (the installed command), serve and suggest."""

import html
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_file
from flair.data import get_spans_from_bio

from flairsuite.corpora.line_ends import joined_view, reading_view
from flairsuite.inference.raw_tags import split, tag
from flairsuite.inference.reader_spans import ACROSS_LINES, PUNCTUATION_ONLY, TRIMMED, is_punctuation, reader_tags
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.inference.tagger import torch_threads
from flairsuite.predict import loading
from flairsuite.predict.formats import FORMATS
from flairsuite.predict.inputs import predict_document
from flairsuite.predict.outputs import sentence_json

MODELS = Path(__file__).parent / "fixtures" / "saved-models"
LETTER = (
    "Sindelsdorf, den 14. März 1913.\n\nLieber Herr Wal-\nden! Gestern war ich in Ber-\nlin bei Else Lasker-\nSchüler und "
    "Jacoba van Heems-\nkerck; d ’ Audretsch kam auch. Haus-\nund Gartenarbeit ruht. „Sturm“ (Wien)!\nIhr Franz\nMarc aus Sindels¬\ndorf\n"
)
TEI_TYPES = {"pers": "persName", "place": "placeName", "date": "date"}


def tags_of(*tags: str) -> list[tuple[str, float]]:
    return [(tag, 0.5 + i / 100) for i, tag in enumerate(tags)]


def spans(tags: list[tuple[str, float]]) -> list[tuple[list[int], str]]:
    return [(indices, kind) for indices, _, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags])]


@pytest.mark.parametrize(
    "words, tags, expected, counted",
    [
        (["d", "’", "Audretsch"], ["O", "B-pers", "O"], ["O", "O", "O"], {PUNCTUATION_ONLY: 1}),
        ([".", "!"], ["B-pers", "B-pers"], ["O", "O"], {PUNCTUATION_ONLY: 2}),
        (["„", "Sturm", "“"], ["B-org", "I-org", "I-org"], ["O", "B-org", "O"], {TRIMMED: 1}),
        (["Anna", ",", "Otto"], ["B-pers", "I-pers", "I-pers"], ["B-pers", "I-pers", "I-pers"], {}),  # inside: kept
        (["(", "Wien", ")"], ["B-LOC", "I-LOC", "E-LOC"], ["O", "S-LOC", "O"], {TRIMMED: 1}),  # BIOES stays BIOES
        (["Marc", "aus", "."], ["B-pers", "I-pers", "E-pers"], ["B-pers", "E-pers", "O"], {TRIMMED: 1}),
        (["Ihr", "Franz", "Marc"], ["O", "B-pers", "I-pers"], ["O", "O", "O"], {ACROSS_LINES: 1}),  # "Franz\nMarc"
        (["Anna", "Wien"], ["I-pers", "I-place"], ["I-pers", "I-place"], {}),  # ill-formed raw tags stay as they are
    ],
)
def test_the_rules_on_tags(words, tags, expected, counted):
    gaps = ["\n" if words[i : i + 2] == ["Franz", "Marc"] else " " for i in range(len(words) - 1)]
    counts: Counter = Counter()
    found = reader_tags(tags_of(*tags), words, gaps, counts)
    assert [tag for tag, _ in found] == expected and counts == Counter(counted)
    assert [confidence for _, confidence in found] == [confidence for _, confidence in tags_of(*tags)]
    for indices, _ in spans(found):  # what is left holds no edge punctuation and crosses no line break
        assert not is_punctuation(words[indices[0]]) and not is_punctuation(words[indices[-1]])
        assert all(gaps[i] == " " for i in indices[:-1])


def test_a_joined_word_crosses_no_line_break():
    counts: Counter = Counter()
    found = reader_tags(tags_of("B-pers", "I-pers", "I-pers"), ["Jacoba", "van", "Heemskerck"], [" ", " "], counts)
    assert [tag for tag, _ in found] == ["B-pers", "I-pers", "I-pers"] and not counts


def test_punctuation():
    assert is_punctuation("’") and is_punctuation("...") and is_punctuation("„") and is_punctuation("(")
    assert not is_punctuation("14.") and not is_punctuation("€") and not is_punctuation("") and not is_punctuation("d’")


@pytest.fixture(scope="module")
def letter(tmp_path_factory) -> Path:
    return write_file(tmp_path_factory.mktemp("letter") / "brief.txt", LETTER)


@pytest.fixture(scope="module")
def outputs(letter):
    """Every format of the letter, tagged by the tiny CSE tagger (it marks nearly every token), and its JSON with the rules off."""
    model = load_tagger(MODELS / "cse.pt")
    found = {}
    with torch_threads(1), pytest.MonkeyPatch.context() as patch:
        patch.setattr(loading, "load_tagger", lambda path: model)
        for fmt in FORMATS:
            found[fmt, True] = predict_document(MODELS / "cse.pt", letter, fmt, False, None)
        found["json", False] = predict_document(MODELS / "cse.pt", letter, "json", False, None, reader_spans=False)
    return found


def json_spans(text: str) -> list[tuple[int, int, str]]:
    return [(s["start_char"], s["end_char"], s["type"]) for line in text.splitlines() for s in json.loads(line)["spans"]]


def webanno_spans(text: str) -> list[tuple[int, int, str]]:
    """The spans of WebAnno TSV rows (one span per value, or per `[n]` of a multi-token one); offsets UTF-16 = characters here."""
    found: dict[str, list[int]] = {}
    for line in text.splitlines():
        if re.match(r"\d+-\d+\t", line):
            _, offsets, _, _, value, _ = line.split("\t")
            if value != "_":
                start, end = map(int, offsets.split("-"))
                key = value if "[" in value else f"{value}@{start}"
                found.setdefault(key, [start, end])[1] = end
    return sorted((start, end, key.split("[")[0].split("@")[0]) for key, (start, end) in found.items())


def conll_spans(text: str, webanno: str) -> list[tuple[int, int, str]]:
    """The spans of the CoNLL tags, placed on the tokens of the WebAnno output (the same tokens in the same order)."""
    offsets = [tuple(map(int, line.split("\t")[1].split("-"))) for line in webanno.splitlines() if re.match(r"\d+-\d+\t", line)]
    tags = [line.split(" ")[1] for line in text.splitlines() if line]
    assert len(tags) == len(offsets)
    return sorted((offsets[i[0]][0], offsets[i[-1]][1], kind) for i, _, kind in get_spans_from_bio(tags))


def markup_surfaces(text: str, pattern: str) -> Counter:
    return Counter((html.unescape(surface), kind) for kind, surface in re.findall(pattern, text))


def test_every_format_holds_the_same_spans(outputs):
    expected = sorted(json_spans(outputs["json", True].text))
    assert expected and len(expected) < len(json_spans(outputs["json", False].text))
    assert sorted(tuple(label) for label in json.loads(outputs["jsonl", True].text)["label"]) == expected
    results = json.loads(outputs["labelstudio", True].text)[0]["predictions"][0]["result"]
    assert sorted((r["value"]["start"], r["value"]["end"], r["value"]["labels"][0]) for r in results) == expected
    assert webanno_spans(outputs["webanno", True].text) == expected
    assert conll_spans(outputs["conll", True].text, outputs["webanno", True].text) == expected
    surfaces = Counter((LETTER[start:end], kind) for start, end, kind in expected)
    tei = markup_surfaces(outputs["tei", True].text, r'<(persName|placeName|date)\b[^>]*>([^<]*)</(?:persName|placeName|date)>')
    assert tei == Counter((surface, TEI_TYPES[kind]) for (surface, kind), n in surfaces.items() for _ in range(n))
    marked = markup_surfaces(outputs["html", True].text, r'<mark class="ent ent-[^"]*" data-type="([^"]*)"[^>]*>([^<]*)</mark>')
    assert marked == surfaces
    column = [line.split("\t")[1] for line in outputs["column", True].text.splitlines() if line]
    tags = [tag for line in outputs["json", True].text.splitlines() for tag in json.loads(line)["tags"]]
    assert column == tags


def test_the_rules_dropped_and_counted_what_the_tagger_marked(outputs):
    raw = json_spans(outputs["json", False].text)
    kept = set(json_spans(outputs["json", True].text))
    surfaces = {LETTER[start:end] for start, end, _ in raw}
    assert {".", "’"} & surfaces  # the tiny tagger marks punctuation ...
    assert not any(is_punctuation(LETTER[start:end]) for start, end, _ in kept)  # ... which the rules drop
    assert not any("\n" in joined_view(LETTER[start:end]).text for start, end, _ in kept)  # a joined word crosses no line break
    assert any("\n" in LETTER[start:end] for start, end, _ in kept)
    found = outputs["json", True]
    assert found.rules[PUNCTUATION_ONLY] + found.rules[ACROSS_LINES] == len(raw) - len(kept) and found.rules[PUNCTUATION_ONLY] > 0
    assert "dropped" in found.summary(1.0) and f"{found.rules[PUNCTUATION_ONLY]:,} punctuation only" in found.summary(1.0)
    assert "dropped" not in outputs["json", False].summary(1.0)


def test_a_span_across_a_line_break_is_dropped_a_joined_word_is_not(tmp_path, monkeypatch):
    """With a tagger that marks each sentence whole: the span over "Ihr Franz\nMarc kam" crosses a line break of the file
    and is dropped, the one over "Lieber Herr Wal-\nden" holds a joined word and is kept; both lose their final punctuation."""
    text = "Ihr Franz\nMarc kam. Lieber Herr Wal-\nden. Ja!\n"
    path = write_file(tmp_path / "lines.txt", text)
    whole = lambda sentences: [[("B-pers", 0.9)] + [("I-pers", 0.8)] * (len(s) - 1) for s in sentences]  # noqa: E731
    monkeypatch.setattr(loading, "tagger", lambda model, fast, batch_size: whole)
    found = predict_document(MODELS / "map.pt", path, "json", False, None)
    assert [text[start:end] for start, end, _ in json_spans(found.text)] == ["Lieber Herr Wal-\nden", "Ja"]
    assert (found.rules[ACROSS_LINES], found.rules[TRIMMED], found.rules[PUNCTUATION_ONLY]) == (1, 2, 0)
    raw = predict_document(MODELS / "map.pt", path, "json", False, None, reader_spans=False)
    assert [text[start:end] for start, end, _ in json_spans(raw.text)] == ["Ihr Franz\nMarc kam.", "Lieber Herr Wal-\nden.", "Ja!"]
    tei = predict_document(MODELS / "map.pt", path, "tei", False, None).text
    assert "<persName" in tei and ">Lieber Herr Wal-\nden</persName>." in tei and ">Ja</persName>!" in tei and "Franz</" not in tei


def test_the_keep_option_keeps_the_spans_as_tagged(outputs, letter):
    model = load_tagger(MODELS / "cse.pt")
    view = reading_view(LETTER)
    sentences = split(view.text)
    with torch_threads(1):
        tagged = tag(model, sentences, False, None)
    raw = [span for s, tags in zip(sentences, tagged) for span in sentence_json(s, tags, True, view)["spans"]]
    assert json_spans(outputs["json", False].text) == [(s["start_char"], s["end_char"], s["type"]) for s in raw]


def test_the_installed_command_counts_on_stderr(letter):
    command = [str(Path(sys.executable).with_name("flairsuite")), "predict", str(MODELS / "map.pt"), str(letter), "--format", "jsonl",
               "--threads", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    ruled = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    raw = subprocess.run([*command, "--keep-raw-spans"], capture_output=True, text=True, env=env, timeout=600)
    assert ruled.returncode == raw.returncode == 0, ruled.stderr[-2000:]
    labels, raw_labels = json.loads(ruled.stdout)["label"], json.loads(raw.stdout)["label"]  # stdout holds the output only
    assert len(labels) < len(raw_labels)
    match = re.search(r"dropped (\d+) spans \((\d+) punctuation only, (\d+) across a line break\) and trimmed (\d+)", ruled.stderr)
    assert match is not None, ruled.stderr
    assert int(match[2]) > 0 and int(match[1]) == int(match[2]) + int(match[3])
    assert "dropped" not in raw.stderr and "tagged 6 sentences" in raw.stderr


def test_serve_applies_the_rules():
    from flairsuite.serve.engine import TextTagger

    text = "Lieber Herr Walden! Gestern war ich in Berlin, sagte Marc.\nIhr Franz\nMarc ."
    with torch_threads(1):
        ruled = TextTagger(MODELS / "cse.pt", fast=False).tag([text])[0]
        raw = TextTagger(MODELS / "cse.pt", fast=False, reader_spans=False).tag([text])[0]
    assert len(ruled.spans) < len(raw.spans)
    assert not any(is_punctuation(text[s.start : s.end]) or "\n" in text[s.start : s.end] for s in ruled.spans)


def test_suggest_writes_reader_spans(tmp_path):
    from flairsuite.suggest.suggestion import suggest

    path = write_file(tmp_path / "brief.txt", LETTER)
    with torch_threads(1):
        ruled = suggest(MODELS / "map.pt", path, 10, "column")
        raw = suggest(MODELS / "map.pt", path, 10, "column", reader_spans=False)
    assert ruled.ranking == raw.ranking and "dropped" in ruled.summary("uncertainty", "sentence", 1.0)
    rows = [line.split("\t") for line in ruled.text.splitlines() if line]
    assert not any(is_punctuation(token) and tag != "O" for token, tag in rows)
    assert any(is_punctuation(line.split("\t")[0]) and line.split("\t")[1] != "O" for line in raw.text.splitlines() if line)
