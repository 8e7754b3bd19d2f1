"""`flairsuite suggest`'s units (flairsuite/suggest/): every format holds the letters' own characters (WebAnno's `#Text=`
lines with their spacing and line breaks, read back by the suite's WebAnno reader to the same tokens), `--unit window`
writes a chosen sentence with its neighbours and passes over what a chosen window holds, `--unit document` writes the
whole letter with the selected sentences in `meta`, and sentences shorter than `--min-tokens` are merged before ranking."""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke, write_file

from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.webanno_reader import read_webanno
from flairsuite.markup.annotated import pieces
from flairsuite.models.uncertainty import Scores
from flairsuite.suggest.candidates import Windows
from flairsuite.suggest.scoring import Scored
from flairsuite.suggest.suggestion import suggest
from flairsuite.suggest.texts import read_units
from flairsuite.suggest.units import Original

MODEL = Path(__file__).parent / "fixtures" / "saved-models" / "lcrf-ner.pt"
LETTERS = {
    "a.txt": "Sindelsdorf, den 14. März 1913.\n\nLieber Herr  Walden!\nGestern war ich in Ber-\nlin bei Else Lasker-Schüler.\nDanke. Ja.\n"
             "Die Bilder sind   angekommen, sagte Otto in Wien.\nAnna reiste nach München.\n\nIhr Franz Marc\n",
    "b.txt": "Am Montag besuchte Anna die Stadt Wien.\nOtto verließ München, sagte der König.\nDer Brief kam am Freitag.\n",
}


@pytest.fixture
def letters(tmp_path: Path) -> Path:
    for name, text in LETTERS.items():
        write_file(tmp_path / "letters" / name, text)
    return tmp_path / "letters"


def file_sentences(letters: Path) -> dict[str, list[Original]]:
    """Every letter's sentences as the file holds them, in order."""
    return {name: [unit.originals[0] for unit in read_units(letters / name, "sentence", "words")] for name in LETTERS}


def sentence_text(original: Original) -> str:
    return original.text[: original.end]


def test_webanno_text_lines_are_the_letters_characters_and_read_back_to_the_same_tokens(letters: Path) -> None:
    found = suggest(MODEL, letters, 50, "webanno", unit="sentence", min_tokens=1)
    out = write_file(letters.parent / "next.tsv", found.text)
    blocks = found.text.split("\n\n")[1:]
    texts = ["\n".join(line[len("#Text="):] for line in block.splitlines() if line.startswith("#Text=")) for block in blocks]
    expected = [sentence_text(o) for originals in file_sentences(letters).values() for o in originals]
    assert sorted(texts) == sorted(expected) and found.sentences == len(expected)
    assert "#Text=Lieber Herr  Walden!" in found.text.splitlines()  # the letter's spacing, not the tokens joined by spaces
    assert "#Text=Gestern war ich in Ber-\n#Text=lin bei Else Lasker-Schüler." in found.text  # its line break kept
    assert "#Text=Die Bilder sind   angekommen, sagte Otto in Wien." in found.text.splitlines()
    read = [tuple(sentence.tokens) for sentence in read_webanno(out, FormatSpec("webanno"), "utf-8", Counter())]
    written = [tuple(line.split("\t")[2] for line in block.splitlines() if "\t" in line) for block in blocks]
    assert read == written
    pieces_of = [tuple(o.text[a:b] for token in o.tokens for a, b in pieces(o.text, *token))
                 for originals in file_sentences(letters).values() for o in originals]
    assert sorted(read) == sorted(pieces_of)  # "Ber-" and "lin": the word joined for tagging, written as its lines hold it
    assert sum(1 for tokens in read for token in tokens if token == "Ber-") == 1


def test_a_window_is_the_chosen_sentence_with_its_neighbours(letters: Path) -> None:
    found = suggest(MODEL, letters, 1, "jsonl", unit="window", neighbours=1, min_tokens=1)
    (line,) = found.text.splitlines()
    record = json.loads(line)
    meta = record["meta"]
    text = Path(meta["file"]).read_text(encoding="utf-8")
    assert record["text"] == text[meta["start"] : meta["end"]]
    (chosen,) = meta["selected"]
    assert record["text"][chosen["in_unit"][0] : chosen["in_unit"][1]] == text[chosen["start"] : chosen["end"]]
    originals = file_sentences(letters)[Path(meta["file"]).name]
    k = [o.start for o in originals].index(chosen["start"])
    first, last = originals[max(k - 1, 0)], originals[min(k + 1, len(originals) - 1)]
    assert (meta["start"], meta["end"]) == (first.start, last.start + last.end)
    assert found.ranking.splitlines()[1].split("\t")[2] == f"{meta['file']}:{chosen['line']}"
    assert found.selection["units"] == [{"position": 0, "text_start": 0, **meta}] and found.selection["unit"] == "window"


def test_windows_pass_over_what_they_hold_and_overlapping_ones_are_one_unit(letters: Path) -> None:
    every = sum(len(originals) for originals in file_sentences(letters).values())
    found = suggest(MODEL, letters, every, "conll", unit="window", neighbours=2, min_tokens=1)
    assert found.inside > 0 and found.chosen == every - found.inside
    assert found.sentences == every and found.written == 2  # each sentence written once; a letter's windows make one unit
    assert "inside a chosen window" in found.summary("uncertainty", "window", 1.0)
    files = [unit["file"] for unit in found.selection["units"]]
    assert sorted(Path(name).name for name in files) == ["a.txt", "b.txt"]


def test_document_unit_writes_the_whole_letter_with_the_selected_sentences_in_meta(letters: Path) -> None:
    found = suggest(MODEL, letters, 2, "labelstudio", unit="document")
    tasks = json.loads(found.text)
    assert len(tasks) == 2
    for task in tasks:
        meta, text = task["meta"], task["data"]["text"]
        assert text == Path(meta["file"]).read_text(encoding="utf-8").strip()
        (chosen,) = meta["selected"]
        starts = [o.start for o in file_sentences(letters)[Path(meta["file"]).name]]
        assert chosen["in_unit"][0] in starts and text[chosen["in_unit"][0] : chosen["in_unit"][1]].strip()
        for result in task["predictions"][0]["result"]:
            assert text[result["value"]["start"] : result["value"]["end"]] == result["value"]["text"]


def test_short_sentences_are_merged_with_their_neighbours_before_ranking(letters: Path) -> None:
    merged = suggest(MODEL, letters, 50, "column", unit="sentence")  # --min-tokens 5
    alone = suggest(MODEL, letters, 50, "column", unit="sentence", min_tokens=1)
    texts = [row.split("\t")[3] for row in merged.ranking.splitlines()[1:]]
    assert "Danke. Ja. Die Bilder sind   angekommen, sagte Otto in Wien." in texts  # "Danke." and "Ja." join the next sentence
    assert "Ihr Franz Marc" not in texts and any(text.endswith("München. Ihr Franz Marc") for text in texts)  # the short last one: the one before
    assert {"Danke.", "Ja.", "Ihr Franz Marc"} <= {row.split("\t")[3] for row in alone.ranking.splitlines()[1:]}
    assert merged.units == alone.units - 4 and merged.sentences == alone.sentences  # "Lieber Herr  Walden!" joins "Gestern ..." too


def fake(index: int, words: int) -> Scored:
    text = " ".join(["w"] * words)
    tokens = tuple((2 * i, 2 * i + 1) for i in range(words))
    return Scored("f.txt", index, Original(text + " ", len(text), tokens, "", 2 * index, index + 1), ("w",) * words, text,
                  Scores([("O", 1.0)] * words, words, None, 0.0))


def test_windows_merge_and_hold_the_neighbours_until_they_are_read() -> None:
    sentences = [fake(i, words) for i, words in enumerate([1, 2, 6, 1, 7, 2, 9])]
    windows = Windows("f.txt", 5, 1)
    done = windows.add(sentences[:3])
    assert done == []  # the group 0-2 waits for sentence 3, its neighbour (and for the next group: a short rest would join it)
    done = windows.add(sentences[3:5]) + windows.add(sentences[5:]) + windows.finish()
    groups = [[s.index for s in group] for group, _ in done]
    contexts = [[s.index for s in context] for _, context in done]
    assert groups == [[0, 1, 2], [3, 4], [5, 6]] and contexts == [[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6]]
    windows = Windows("f.txt", 5, 0)
    done = windows.add([fake(0, 6), fake(1, 2)]) + windows.finish()
    assert [[s.index for s in group] for group, _ in done] == [[0, 1]]  # a short last sentence joins the group before it


def test_the_command_writes_the_selection_beside_out_and_defaults_to_windows(letters: Path) -> None:
    out = letters.parent / "next.tsv"
    result = invoke("suggest", str(MODEL), str(letters), "--n", "2", "--out", str(out), "--format", "webanno", "--threads", "1")
    assert result.exit_code == 0, result.output
    selection = json.loads((letters.parent / "next.selection.json").read_text(encoding="utf-8"))
    assert (selection["unit"], selection["neighbours"], selection["min_tokens"], selection["format"]) == ("window", 2, 5, "webanno")
    ranks = sorted(chosen["rank"] for unit in selection["units"] for chosen in unit["selected"])
    assert ranks == [1, 2] and len(result.stdout.splitlines()) == 3
    document = "".join(line[len("#Text="):] for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("#Text=")).replace(" ", "")
    for unit in selection["units"]:
        for chosen in unit["selected"]:
            chosen_text = Path(unit["file"]).read_text(encoding="utf-8")[chosen["start"] : chosen["end"]]
            assert "".join(chosen_text.split()) in document


ODD_BLOCKS = "Lieber Herr Walden!\n\n\u200b\n\n\ufeff\n\n \u00ad \n\n...\n\n¬\n\n- \n\n\x0c\n\nIch schrieb an Franz Marc in Berlin.\n"


@pytest.mark.parametrize("unit", ["sentence", "document"])
def test_blocks_without_words_make_no_empty_sentence(tmp_path: Path, unit: str) -> None:
    """Zero-width and format characters, a lone soft hyphen, punctuation or a line-end mark between blank lines: no
    empty Flair Sentence is made (Flair warns "An empty Sentence was created!" for each, on the stderr a user sees: so the
    command runs as a user runs it), and the words are all kept."""
    write_file(tmp_path / "letters" / "odd.txt", ODD_BLOCKS)
    out = tmp_path / "next.tsv"
    done = subprocess.run([sys.executable, "-m", "flairsuite", "suggest", str(MODEL), str(tmp_path / "letters"), "--unit", unit,
                           "--min-tokens", "1", "--out", str(out), "--format", "webanno", "--threads", "1"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "empty Sentence" not in done.stderr and "ranked" in done.stderr
    tokens = [line.split("\t")[2] for line in out.read_text(encoding="utf-8").splitlines() if "\t" in line and not line.startswith("#")]
    assert {"Walden", "Franz", "Marc", "Berlin"} <= set(tokens)
