"""Writing what annotation tools read: WebAnno TSV 3.3 (INCEpTION), doccano JSONL, Label Studio JSON, CoNLL-2002.

The writers (`flairsuite.markup`) against the formats' rules, and round trips through the corpus readers
(`flairsuite.corpora.formats.read_tagged`): a corpus read, written and read again keeps its tokens and tags;
a file `predict` wrote reads back as the spans it predicted; WebAnno offsets are the text's UTF-16 offsets.
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import FlairsuiteError
from flairsuite.markup.annotated import Annotated, from_tokens
from flairsuite.markup.annotation_formats import annotation_text
from flairsuite.markup.conll import conll_text
from flairsuite.markup.doccano import doccano_jsonl
from flairsuite.markup.labelstudio import labelstudio_json
from flairsuite.markup.spans import Span
from flairsuite.markup.webanno_writer import webanno_tsv

MODELS = Path(__file__).resolve().parent / "fixtures" / "saved-models"
SENTENCES = [["Herwarth", "Walden", "schrieb", "an", "Else", "Lasker-Schüler", "."], ["Der", "Sturm", "erschien", "in", "Berlin", "."]]
TAGS = [["B-pers", "I-pers", "O", "O", "B-pers", "I-pers", "O"], ["O", "B-work", "O", "O", "B-place", "O"]]


def token_spans(tags: list[str]) -> list[tuple[int, int, str, float]]:
    """BIO tags as (first, after, type, 1.0) spans."""
    spans: list[list] = []
    for index, tag in enumerate(tags):
        if tag.startswith("B-") or (tag.startswith("I-") and not (spans and spans[-1][1] == index and spans[-1][2] == tag[2:])):
            spans.append([index, index + 1, tag[2:], 1.0])
        elif tag.startswith("I-"):
            spans[-1][1] = index + 1
    return [tuple(span) for span in spans]


def read(path: Path, kind: str) -> tuple[list[list[str]], list[list[str]]]:
    sentences = list(read_tagged(path, FormatSpec(kind=kind), "utf-8", Counter()))
    return [s.tokens for s in sentences], [s.tags for s in sentences]


def corpus() -> Annotated:
    return from_tokens(SENTENCES, [token_spans(tags) for tags in TAGS])


def test_from_tokens_joins_tokens_and_places_spans():
    document = corpus()
    assert document.text == "Herwarth Walden schrieb an Else Lasker-Schüler .\nDer Sturm erschien in Berlin .\n"
    assert [document.text[s.start : s.end] for s in document.spans] == ["Herwarth Walden", "Else Lasker-Schüler", "Sturm", "Berlin"]
    assert document.forms() == SENTENCES and document.tags() == TAGS


def test_webanno_rows_as_inception_writes_them():
    text = "Grüße an 🙂 Anna_Maria [A|B].\nZeile zwei\\"
    tokens = [[(0, 5), (6, 8), (9, 10), (11, 21), (22, 27), (27, 28)], [(29, 34), (35, 40)]]
    spans = [Span(11, 21, "per_son", 0.9), Span(22, 27, "wo|rk", 0.8), Span(29, 40, "MISC", 0.7)]
    assert webanno_tsv(Annotated(text, tokens, spans)) == (
        "#FORMAT=WebAnno TSV 3.3\n"
        "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value\n"
        "\n\n"
        "#Text=Grüße an 🙂 Anna_Maria [A|B].\n"
        "1-1\t0-5\tGrüße\t_\t_\t\n"
        "1-2\t6-8\tan\t_\t_\t\n"
        "1-3\t9-11\t🙂\t_\t_\t\n"  # an emoji is two UTF-16 units
        "1-4\t12-22\tAnna_Maria\t*\tper\\_son\t\n"
        "1-5\t23-28\t[A|B]\t*\two\\|rk\t\n"
        "1-6\t28-29\t.\t_\t_\t\n"
        "\n"
        "#Text=Zeile zwei\\\\\n"
        "2-1\t30-35\tZeile\t*[1]\tMISC[1]\t\n"
        "2-2\t36-41\tzwei\\\t*[1]\tMISC[1]\t\n"
    )


def test_webanno_sentence_over_line_breaks_gets_a_text_line_each(tmp_path):
    text = "Lieber Herr\nWalden ,\tdanke ."
    tokens = [[(0, 6), (7, 11), (12, 18), (19, 20), (21, 26), (27, 28)]]
    written = webanno_tsv(Annotated(text, tokens, [Span(7, 18, "pers", 1.0)]))
    assert "#Text=Lieber Herr\n#Text=Walden ,\\tdanke .\n" in written
    tokens_read, tags_read = read(write_file(tmp_path / "letter.tsv", written), "webanno")
    assert tokens_read == [["Lieber", "Herr", "Walden", ",", "danke", "."]]
    assert tags_read == [["O", "B-pers", "I-pers", "O", "O", "O"]]


def test_doccano_labelstudio_and_conll_text():
    document = corpus()
    record = json.loads(doccano_jsonl([document]))
    assert record == {"text": document.text, "label": [[0, 15, "pers"], [27, 46, "pers"], [53, 58, "work"], [71, 77, "place"]]}
    tasks = json.loads(labelstudio_json([document], "map.pt"))
    result = tasks[0]["predictions"][0]["result"]
    assert tasks[0]["data"] == {"text": document.text} and tasks[0]["predictions"][0]["model_version"] == "map.pt"
    assert [(r["from_name"], r["to_name"], r["type"]) for r in result] == [("label", "text", "labels")] * 4
    assert [(r["value"]["text"], r["value"]["labels"]) for r in result] == [
        ("Herwarth Walden", ["pers"]), ("Else Lasker-Schüler", ["pers"]), ("Sturm", ["work"]), ("Berlin", ["place"])
    ]
    assert conll_text([document]).endswith("\n\nDer O\nSturm B-work\nerschien O\nin O\nBerlin B-place\n. O\n\n")
    with pytest.raises(FlairsuiteError, match="holds whitespace"):
        conll_text([Annotated("New York", [[(0, 8)]], [])])
    with pytest.raises(ValueError, match="one document"):
        annotation_text([document, document], "webanno", "m")


@pytest.mark.parametrize("fmt, kind", [("webanno", "webanno"), ("conll", "column"), ("jsonl", "jsonl")])
def test_a_corpus_read_written_and_read_again_keeps_tokens_and_tags(tmp_path, fmt, kind):
    source = write_file(tmp_path / "train.txt", "\n\n".join("\n".join(f"{t} {g}" for t, g in zip(s, tags)) for s, tags in zip(SENTENCES, TAGS)) + "\n")
    tokens, tags = read(source, "column")
    spans = [token_spans(t) for t in tags]
    # as `evaluate --predictions` writes them: doccano a record per sentence (its reader splits a text as predict does), the others one document
    documents = [from_tokens([s], [found]) for s, found in zip(tokens, spans)] if fmt == "jsonl" else [from_tokens(tokens, spans)]
    written = write_file(tmp_path / f"again.{fmt}", annotation_text(documents, fmt, "m"))
    assert read(written, kind) == (tokens, tags) == (SENTENCES, TAGS)


LETTER = "Lieber Herwarth Walden, Grüße 🙂 aus München!\nIch las den Sturm in Berlin.\n\nDeine Else Lasker-Schüler\n"


@pytest.fixture(scope="module")
def predicted(tmp_path_factory) -> dict[str, Path]:
    """map.pt's predictions of LETTER in json, webanno, jsonl and conll."""
    from flairsuite.predict.inputs import predict_document

    folder = tmp_path_factory.mktemp("predicted")
    letter = write_file(folder / "letter.txt", LETTER)
    return {fmt: write_file(folder / f"letter.{fmt}", predict_document(MODELS / "map.pt", letter, fmt, True, None).text)
            for fmt in ("json", "webanno", "jsonl", "conll", "labelstudio")}


@pytest.mark.parametrize("fmt, kind", [("webanno", "webanno"), ("jsonl", "jsonl"), ("labelstudio", "jsonl"), ("conll", "column")])
def test_a_predicted_file_reads_back_as_the_predicted_spans(predicted, fmt, kind):
    sentences = [json.loads(line) for line in predicted["json"].read_text(encoding="utf-8").splitlines()]
    expected_tags = []
    for sentence in sentences:
        tags = ["O"] * len(sentence["tokens"])
        for span in sentence["spans"]:
            tags[span["start"] : span["end"]] = [f"B-{span['type']}"] + [f"I-{span['type']}"] * (span["end"] - span["start"] - 1)
        expected_tags.append(tags)
    assert any(tag != "O" for tags in expected_tags for tag in tags)
    assert read(predicted[fmt], kind) == ([s["tokens"] for s in sentences], expected_tags)


def test_predicted_webanno_offsets_are_the_texts_utf16_offsets(predicted):
    units = LETTER.encode("utf-16-le")
    rows = [line.split("\t") for line in predicted["webanno"].read_text(encoding="utf-8").splitlines() if line[:1].isdigit()]
    assert len(rows) > 10 and "🙂" in [row[2] for row in rows]
    for row in rows:
        begin, end = map(int, row[1].split("-"))
        assert units[2 * begin : 2 * end].decode("utf-16-le") == row[2]


def test_predicted_labelstudio_and_doccano_spans_agree(predicted):
    record = json.loads(predicted["jsonl"].read_text(encoding="utf-8"))
    task = json.loads(predicted["labelstudio"].read_text(encoding="utf-8"))[0]
    values = [result["value"] for result in task["predictions"][0]["result"]]
    assert record["text"] == task["data"]["text"] == LETTER
    assert [[v["start"], v["end"], v["labels"][0]] for v in values] == record["label"]
    assert all(LETTER[v["start"] : v["end"]] == v["text"] for v in values)
