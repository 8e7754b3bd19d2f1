"""Large inputs: the text read in blocks and cut into parts gives the whole text's sentences at the same offsets,
parts stay bounded on a text without line breaks, the streamed formats equal the whole-document writers, and the
installed `flairsuite predict` tags a one-line text of a few hundred KB with offsets into the file."""

import functools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.corpora.segmentation import flair_view, split_text
from flairsuite.errors import InputError, read_utf8
from flairsuite.inference import stream, textfile
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.inference.stream import text_parts
from flairsuite.inference.tagger import torch_threads
from flairsuite.inference.textfile import chunks, scan
from flairsuite.predict import loading, plain_text
from flairsuite.predict.formats import FORMATS
from flairsuite.predict.inputs import predict_document

MODELS = Path(__file__).parent / "fixtures" / "saved-models"
LETTER = (Path(__file__).resolve().parents[1] / "experiments" / "walkthrough" / "brief.txt").read_text(encoding="utf-8")
# paragraphs, 2-, 3- and 4-byte characters, a zero-width space Flair drops, CRLF, abbreviations segtok keeps inside sentences
TEXT = (
    "\ufeffBerlin, den 14. März 1913.\n\nLieber Herr Walden!\n\nGestern traf ich Franz Marc bei Else Lasker-Schüler. "
    "Wir sprachen z.B. über die Ausstellung in München, d.h. über den „Sturm“. Kandinsky schreibt aus Moskau.\r\n\r\n"
    "Das 𝔄𝔫𝔫𝔞-Blatt kam an\u200b. Dr. Müller reiste nach Köln… und dann? Nach Wien!\n \nMit herzlichen Grüßen\nIhr August Macke\n"
)


def whole_sentences(text: str, segmentation: str = "words") -> list[list[tuple[int, int]]]:
    """Every sentence's token offsets in `text` as `predict` found them by splitting the whole text."""
    view = flair_view(text)
    return [[view.original(s.start_position + t.start_position, s.start_position + t.end_position) for t in s] for s in split_text(view.text, segmentation)]


def streamed_sentences(blocks: list[str], window: int, segmentation: str = "words") -> tuple[list[list[tuple[int, int]]], list[stream.Part]]:
    """The same from the parts of the blocks, and the parts."""
    abbreviations = stream.text_abbreviations(blocks) if segmentation == "words" else ()  # what split_text learns from the whole text
    parts = list(text_parts(blocks, segmentation, window, abbreviations=abbreviations))
    found = [[part.original(s.start_position + t.start_position, s.start_position + t.end_position) for t in s] for part in parts for s in part.sentences]
    return found, parts


@pytest.mark.parametrize("read_bytes", [1, 3, 7])
@pytest.mark.parametrize("window", [100, 150])
def test_stream_reader_yields_the_whole_texts_sentences_and_offsets(tmp_path, read_bytes, window):
    path = write_file(tmp_path / "letter.txt", TEXT)
    blocks = list(chunks(path, path, read_bytes))
    assert "".join(blocks) == TEXT.removeprefix("\ufeff")
    boundaries = {len(TEXT[:i].encode("utf-8")) for i in range(len(TEXT) + 1)}
    assert any(edge not in boundaries for edge in range(read_bytes, len(TEXT.encode("utf-8")), read_bytes))  # reads end inside characters
    text = TEXT.removeprefix("\ufeff")
    found, parts = streamed_sentences(blocks, window)
    assert found == whole_sentences(text)
    assert len(parts) > 2 and "".join(part.text for part in parts) == text  # cut inside paragraphs, nothing lost or doubled
    assert [part.start for part in parts] == [sum(len(p.text) for p in parts[:i]) for i in range(len(parts))]
    tokens = [text[start:end] for sentence in found for start, end in sentence]
    assert {"𝔄𝔫𝔫𝔞-Blatt", "z.B.", "„", "Sturm"} <= set(tokens)


def test_stream_reader_on_random_texts():
    """Texts of abbreviations, quotes, brackets, blank lines and multibyte characters, in blocks of 1 to 30 characters."""
    words = ["Anna", "ging", "z.B.", "Dr.", "U.S.", "und", "König", "(Wien)", "„heute“", "3.", "Jan.", "and", "𝔄𝔫𝔫𝔞", "e.g.", "A.", "a", "das"]
    ends = [". ", "! ", "? ", ".\n", ".\n\n", "\n\n", " \n\n", ".) ", '." ', ", ", "\n", "\n \n", "...  ", "\r\n\r\n", ". \u200b", "。", "！"]
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        text = "".join(" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) + rng.choice(ends) for _ in range(rng.randint(5, 40)))
        segmentation = rng.choice(["words", "characters"])
        size = rng.randint(1, 30)
        found, parts = streamed_sentences([text[i : i + size] for i in range(0, len(text), size)], 200, segmentation)
        if any(len(part.text) > 200 and len(part.sentences) <= stream.KEEP for part in parts):
            continue  # a cut forced by 400 characters without KEEP + 1 sentences: not the whole text's split by design
        assert found == whole_sentences(text, segmentation), text
        checked += 1
    assert checked > 40


@pytest.mark.parametrize("line, tokens", [("ein Wort ohne Satzende " * 3000, 12_000), ("x" * 50_000, 50)])
def test_a_long_line_without_sentence_ends_is_cut_into_bounded_parts(line, tokens):
    window, block = 1000, 64
    parts = list(text_parts([line[i : i + block] for i in range(0, len(line), block)], "words", window))
    assert "".join(part.text for part in parts) == line
    assert len(parts) >= len(line) // (2 * window) and all(len(part.text) <= window for part in parts[:-1]) and len(parts[-1].text) < 2 * window + block
    assert all(part.text.endswith(" ") for part in parts[:-1]) if " " in line else all(len(part.text) == window for part in parts[:-1])
    assert sum(len(s) for part in parts for s in part.sentences) == tokens


def test_short_sentences_on_one_line_come_in_parts_of_about_the_window():
    text = "Anna reiste nach Wien. " * 5000  # 115,000 characters on one line
    window, block = 20_000, 4096
    parts = list(text_parts([text[i : i + block] for i in range(0, len(text), block)], "words", window))
    assert all(window - 100 <= len(part.text) <= window + block for part in parts[:-1]) and len(parts) >= 5
    assert sum(len(part.sentences) for part in parts) == 5000


@pytest.mark.parametrize("bad_at", [0, 1, 2, 5, 17, 40])
def test_a_bad_byte_is_named_as_when_the_file_is_read_whole(tmp_path, bad_at):
    data = "Zeile eins\nzwei ä\n𝔄𝔫𝔫𝔞 drei\n".encode("utf-8")
    path = tmp_path / "bad.txt"
    path.write_bytes(data[:bad_at] + b"\xff" + data[bad_at:])
    with pytest.raises(InputError) as whole:
        read_utf8(path)
    for read_bytes in (1, 2, 5):
        with pytest.raises(InputError) as streamed:
            scan(path, path, read_bytes)
        assert str(streamed.value) == str(whole.value)
    path.write_bytes(data + "ä".encode("utf-8")[:1])  # a character cut off at the end
    with pytest.raises(InputError, match="not valid utf-8: byte 0xc3 at column 1"):
        scan(path, path, 4)


def test_scan_counts_and_sees_blank_and_markup(tmp_path):
    found = scan(write_file(tmp_path / "a.txt", TEXT), tmp_path / "a.txt", 5)
    assert (found.size, found.chars, found.bom, found.blank) == (len(TEXT.encode("utf-8")), len(TEXT) - 1, True, False)
    assert found.head.startswith("Berlin, den")
    assert scan(write_file(tmp_path / "b.txt", "\ufeff \n\t\n"), tmp_path / "b.txt").blank
    assert scan(write_file(tmp_path / "c.xml", "\n\n  <TEI>"), tmp_path / "c.xml", 2).head.startswith("<TEI>")


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    """The letter repeated with extra lines: several parts at a window of 300 characters."""
    extra = ["Anna\u200b reiste nach Wien.", "Müller 𝔄𝔫𝔫𝔞 kam. ", "\n\n", "Der „König“ sagte: Ja! ", "\r\n"]
    rng = random.Random(3)
    text = "\ufeff" + "".join(LETTER + rng.choice(extra) for _ in range(12))
    return write_file(tmp_path_factory.mktemp("edition") / "edition.txt", text)


@pytest.fixture(scope="module")
def load_once():
    """`load_tagger` that loads each model file once in this module (Flair's predict leaves the model as it was)."""
    return functools.lru_cache(load_tagger)


@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_formats_equal_the_whole_document_writers(edition, load_once, monkeypatch, fmt):
    """Tagged in parts of 300 characters read in blocks of 5 bytes, every format is byte for byte what the text as
    one part gives (there the whole-document writers of `flairsuite.markup` write conll, webanno, jsonl, labelstudio)."""
    monkeypatch.setattr(loading, "load_tagger", load_once)
    with torch_threads(1):  # tiny matrices: a second thread only costs
        whole = predict_document(MODELS / "map.pt", edition, fmt, False, None)
        monkeypatch.setattr(plain_text, "text_parts", functools.partial(stream.text_parts, window=300))
        monkeypatch.setattr(plain_text, "chunks", functools.partial(textfile.chunks, read_bytes=5))
        parts = []
        monkeypatch.setattr(plain_text, "linked", lambda found: (parts.append(part) or part for part in stream.linked(found)))
        streamed = predict_document(MODELS / "map.pt", edition, fmt, False, None)
    assert len(parts) > 10
    assert streamed == whole


def test_one_line_text_end_to_end(tmp_path):
    """The installed command on a one-line text of about 220 KB: JSON lines with offsets into the file across parts
    and across a 4-byte character on the edge of the first 64 KiB block; a progress bar on stderr."""
    line = " ".join(LETTER.split("\n")) + " "
    head = (line * (65_533 // len(line.encode("utf-8")) + 1)).encode("utf-8")[:65_533].decode("utf-8", errors="ignore")
    head += " " * (65_533 - len(head.encode("utf-8")))
    text = head + " 𝔄𝔫𝔫𝔞 besuchte Berlin. " + line * (150_000 // len(line))  # 𝔄's four bytes: 65,534 .. 65,537
    assert text.encode("utf-8")[65_534:65_538].decode("utf-8") == "𝔄" and "\n" not in text
    path = write_file(tmp_path / "edition.txt", text)
    command = [str(Path(sys.executable).with_name("flairsuite")), "predict", str(MODELS / "map.pt"), str(path), "--format", "json", "--threads", "1"]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert f"tagged {len(objects):,} sentences" in result.stderr and len(objects) > 3000
    starts = [o["start_char"] for o in objects]
    assert starts == sorted(starts) and starts[-1] > len(text) - 200
    spans = [(s, o) for o in objects for s in o["spans"]]
    assert len(spans) > 1000
    for span, sentence in spans:
        surface = text[span["start_char"] : span["end_char"]]
        assert surface.startswith(sentence["tokens"][span["start"]]) and surface.endswith(sentence["tokens"][span["end"] - 1])
    assert all(text.startswith(sentence["text"], sentence["start_char"]) for sentence in objects)
    assert any("𝔄𝔫𝔫𝔞" in sentence["tokens"] for sentence in objects)
    assert "predict:" in result.stderr and "B/s" in result.stderr  # the progress bar, in bytes


def test_stdin_is_read_as_a_file(tmp_path):
    from click.testing import CliRunner

    from flairsuite.cli import cli

    path = write_file(tmp_path / "letter.txt", TEXT)
    from_file = CliRunner().invoke(cli, ["predict", str(MODELS / "map.pt"), str(path), "--format", "webanno"], catch_exceptions=False)
    from_stdin = CliRunner().invoke(cli, ["predict", str(MODELS / "map.pt"), "-", "--format", "webanno"], input=TEXT.encode("utf-8"))
    assert from_stdin.exit_code == from_file.exit_code == 0, from_stdin.output
    assert from_stdin.stdout == from_file.stdout and from_file.stdout.startswith("#FORMAT=WebAnno TSV 3.3")


def test_document_context_reads_across_parts(edition, tmp_path, monkeypatch):
    """A tagger on a character LM that reads 60 characters of the neighbouring sentences (`@context60`) tags the text
    in parts of 300 characters as it tags it whole: the parts' sentences are linked as one document."""
    import flair
    from flair.data import Dictionary
    from flair.embeddings import StackedEmbeddings

    from flairsuite.embeddings.context import ContextFlairEmbeddings
    from flairsuite.models.registry import build_tagger

    lm = tmp_path / "lm.pt"
    load_tagger(MODELS / "map.pt").embeddings.embeddings[0].lm.save(lm)
    dictionary = Dictionary(add_unk=False)
    for kind in ("pers", "place"):
        dictionary.add_item(kind)
    dictionary.span_labels = True
    flair.set_seed(2)
    path = tmp_path / "context.pt"
    build_tagger("map", StackedEmbeddings([ContextFlairEmbeddings(str(lm), context_chars=60)]), dictionary, "ner").save(path)
    with torch_threads(1):
        whole = predict_document(path, edition, "json", False, None)
        alone = predict_document(path, write_file(tmp_path / "one.txt", LETTER.split("\n\n")[1]), "json", False, None)
        monkeypatch.setattr(plain_text, "text_parts", functools.partial(stream.text_parts, window=300))
        monkeypatch.setattr(plain_text, "chunks", functools.partial(textfile.chunks, read_bytes=5))
        streamed = predict_document(path, edition, "json", False, None)
    assert streamed == whole
    in_text = json.loads(whole.text.splitlines()[1])  # "Lieber Herr Walden!" with its neighbours
    assert in_text["tokens"] == json.loads(alone.text)["tokens"] and in_text != {**json.loads(alone.text), "start_char": in_text["start_char"]}
