"""`flairsuite predict MODEL INPUT...` on a folder, a glob and several files (flairsuite/cli/predict_files.py): one model load,
one output per input in --out, each byte for byte what predicting the file alone writes, nothing on stdout, one summary
line on stderr; a folder without --out, a bad file, two inputs for one output are one-line errors (the installed command)."""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.cli.predict_files import inputs_and_outputs
from flairsuite.errors import FlairsuiteError
from flairsuite.predict.inputs import predict_document

MODEL = Path(__file__).parent / "fixtures" / "saved-models" / "map.pt"
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")
LETTERS = {
    "a.txt": "Am Montag besuchte Anna die Stadt Berlin.\nOtto verließ München, sagte der König.\n",
    "b": "Lieber Herwarth Walden, herzlichen Dank für den Brief aus Wien!\n\nIhr Franz Marc\n",
    "1913/c.txt": "Franz Marc schrieb aus Sindels-\ndorf an Else Lasker-Schüler.   Sie antwortete aus Ber-\nlin.\n",
}
EDITION = ('<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/><text><body>'
           '<p>Am Montag reiste Anna nach Wien.</p></body></text></TEI>\n')


def flairsuite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FLAIRSUITE, *args], capture_output=True, text=True, timeout=600)


@pytest.fixture
def letters(tmp_path: Path) -> Path:
    for name, text in LETTERS.items():
        write_file(tmp_path / "letters" / name, text)
    write_file(tmp_path / "letters" / "scan.png", b"\x89PNG")  # passed over, counted
    return tmp_path / "letters"


def summary_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tagged ")]


def test_a_folder_gives_one_output_per_letter_as_each_alone(letters: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = flairsuite("predict", str(MODEL), str(letters), "--format", "webanno", "--out", str(out), "--threads", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == ""
    written = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert written == ["1913/c.tsv", "a.tsv", "b.tsv"]
    sentences = tokens = 0
    for name, output in (("a.txt", "a.tsv"), ("b", "b.tsv"), ("1913/c.txt", "1913/c.tsv")):
        alone = predict_document(MODEL, letters / name, "webanno", True, None)
        assert (out / output).read_text(encoding="utf-8") == alone.text, name
        sentences, tokens = sentences + alone.sentences, tokens + alone.tokens
    single = flairsuite("predict", str(MODEL), str(letters / "a.txt"), "--format", "webanno", "--threads", "1")
    assert single.stdout == (out / "a.tsv").read_text(encoding="utf-8")  # the command on the file alone
    (line,) = summary_lines(result.stderr)
    assert line.startswith(f"tagged 3 files, {sentences} sentences, {tokens} tokens in ") and "files/s" in line and str(out) in line
    assert "passed over 1 files that are not text for --format webanno (1 .png)" in result.stderr
    assert not list(out.rglob(".*.part"))


def test_a_glob_and_a_tei_file_keep_their_names(letters: Path, tmp_path: Path) -> None:
    edition = write_file(tmp_path / "edition.xml", EDITION)
    out = tmp_path / "tei"
    result = flairsuite("predict", str(MODEL), str(letters / "*.txt"), str(edition), "--format", "tei", "--out", str(out), "--threads", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "" and len(summary_lines(result.stderr)) == 1
    assert sorted(path.name for path in out.iterdir()) == ["a.xml", "edition.xml"]  # the glob does not reach into 1913/
    assert (out / "edition.xml").read_text(encoding="utf-8") == predict_document(MODEL, edition, "tei", True, None).text
    assert (out / "a.xml").read_text(encoding="utf-8") == predict_document(MODEL, letters / "a.txt", "tei", True, None).text


def test_a_folder_without_out_is_one_error_line(letters: Path) -> None:
    result = flairsuite("predict", str(MODEL), str(letters))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"Error: {letters}: a folder: give --out DIR, the folder for their outputs (one file per input)"]


def test_a_bad_file_is_skipped_named_and_fails_the_run(letters: Path, tmp_path: Path) -> None:
    write_file(letters / "bad.txt", b"Anna reiste \xff nach Wien.\n")
    write_file(letters / "blank.txt", "\n  \n")
    out = tmp_path / "out"
    result = flairsuite("predict", str(MODEL), str(letters), "--format", "json", "--out", str(out), "--threads", "1")
    assert result.returncode == 1 and result.stdout == ""
    assert sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()) == ["1913/c.jsonl", "a.jsonl", "b.jsonl"]
    lines = result.stderr.strip().splitlines()
    assert f"not tagged: {letters / 'bad.txt'}:1: not valid utf-8: byte 0xff at column 13 (convert the file, e.g. with iconv)" in lines
    assert f"not tagged: {letters / 'blank.txt'}: no text to tag: the file is empty or blank" in lines
    assert "; 2 files not tagged (named above)" in summary_lines(result.stderr)[0]
    assert lines[-1] == (f"Error: 2 of 5 files not tagged (named above), the first: {letters / 'bad.txt'}:1: not valid utf-8: byte 0xff at "
                         "column 13 (convert the file, e.g. with iconv)")


def test_outputs_are_checked_before_anything_is_tagged(letters: Path, tmp_path: Path) -> None:
    write_file(tmp_path / "other" / "a.txt", "Anna.\n")
    with pytest.raises(FlairsuiteError, match=r"a\.txt and .*a\.txt would both be written to .*a\.xml"):
        inputs_and_outputs([str(letters / "a.txt"), str(tmp_path / "other" / "a.txt")], tmp_path / "out", "tei")
    edition = write_file(tmp_path / "eds" / "edition.xml", EDITION)
    with pytest.raises(FlairsuiteError, match="would replace an input"):
        inputs_and_outputs([str(edition)], tmp_path / "eds", "tei")
    with pytest.raises(FlairsuiteError, match="no file matches this pattern"):
        inputs_and_outputs([str(letters / "*.md")], tmp_path / "out", "tei")
    with pytest.raises(FlairsuiteError, match=r"- \(stdin\) can only be the one input"):
        inputs_and_outputs(["-", str(letters)], tmp_path / "out", "column")
    pairs = inputs_and_outputs([str(letters / "a.txt"), str(letters / "a.txt"), str(letters)], tmp_path / "out", "column")
    assert [(source.name, target.name) for source, target in pairs] == [("a.txt", "a.tsv"), ("c.txt", "c.tsv"), ("b", "b.tsv")]
