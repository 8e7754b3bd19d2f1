"""Clean pipes: the installed `flairsuite`, run in a subprocess, writes only its output to stdout, and every log line
(Flair's own logger has a handler on stdout) to stderr. Each test parses stdout as what it claims to be: JSON lines
with `json`, TEI with an XML parser, tables by their rows.

Click's test runner would not see the problem: Flair's handler holds the real stdout, not the runner's.
"""

import json
import re
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

import pytest
from conftest import write_file

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "fixtures" / "saved-models"
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")  # the console script of the environment the tests run in
FLAIR_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", re.M)  # Flair's log format: "%(asctime)-15s %(message)s"
LETTER = (
    "Am Montag besuchte Anna Schmidt die Stadt Berlin und schrieb an Herwarth Walden.\n"
    "Walden antwortete ihr aus München.\n\n"
    "Am Sonntag reiste Karl nach Wien.\n"
)
TEI = "{http://www.tei-c.org/ns/1.0}"


def flairsuite(*args: str, stdin: Optional[bytes] = None) -> subprocess.CompletedProcess:
    """Run the installed command line; stdout and stderr kept apart, as bytes."""
    result = subprocess.run([FLAIRSUITE, *args], input=stdin, capture_output=True, timeout=600, env=None)
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")[-3000:]
    return result


def no_log_lines(stdout: str) -> None:
    assert not FLAIR_LOG.search(stdout), stdout[:500]


@pytest.fixture(scope="module")
def letter(tmp_path_factory) -> Path:
    return write_file(tmp_path_factory.mktemp("letter") / "letter.txt", LETTER)


def test_predict_json_is_json_lines_and_flairs_log_goes_to_stderr(letter):
    result = flairsuite("predict", str(MODELS / "map.pt"), str(letter), "--format", "json")
    stdout = result.stdout.decode("utf-8")
    objects = [json.loads(line) for line in stdout.splitlines()]  # the first line used to be Flair's log line
    assert len(objects) == 3 and objects[0]["tokens"][:3] == ["Am", "Montag", "besuchte"]
    for found in objects:
        for span in found["spans"]:
            assert LETTER[span["start_char"] : span["end_char"]] == " ".join(found["tokens"][span["start"] : span["end"]]).replace(" .", ".")
    stderr = result.stderr.decode("utf-8")
    assert "tagged 3 sentences" in stderr and "SequenceTagger predicts" not in stderr  # the suite's log; Flair's load line kept quiet


def test_predict_reads_stdin_as_a_file(letter):
    from_file = flairsuite("predict", str(MODELS / "cse.pt"), str(letter), "--format", "jsonl").stdout
    from_stdin = flairsuite("predict", str(MODELS / "cse.pt"), "-", "--format", "jsonl", stdin=LETTER.encode("utf-8")).stdout
    assert from_stdin == from_file
    record = json.loads(from_stdin)
    assert record["text"] == LETTER and all(LETTER[start:end].strip() == LETTER[start:end] for start, end, _ in record["label"])


def test_predict_tei_parses_as_xml_and_keeps_the_text(letter):
    result = flairsuite("predict", str(MODELS / "lcrf-ner.pt"), str(letter), "--format", "tei")
    root = ET.fromstring(result.stdout)
    body = root.find(f"{TEI}text/{TEI}body")
    assert body is not None
    assert "".join(body.itertext()).split() == LETTER.split()


def test_predict_webanno_and_conll_on_stdout(letter):
    webanno = flairsuite("predict", str(MODELS / "map.pt"), str(letter), "--format", "webanno").stdout.decode("utf-8")
    no_log_lines(webanno)
    assert webanno.startswith("#FORMAT=WebAnno TSV 3.3\n#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value\n\n\n#Text=")
    rows = [line.split("\t") for line in webanno.splitlines() if line and not line.startswith("#")]
    for row in rows:
        begin, end = map(int, row[1].split("-"))
        assert LETTER[begin:end] == row[2] and row[-1] == ""  # ASCII and umlauts: UTF-16 offsets are character offsets
    conll = flairsuite("predict", str(MODELS / "map.pt"), str(letter), "--format", "conll").stdout.decode("utf-8")
    blocks = conll.rstrip("\n").split("\n\n")
    assert len(blocks) == 3
    assert [line.split(" ")[0] for line in blocks[0].splitlines()] == [row[2] for row in rows if row[0].startswith("1-")]


def test_evaluate_prints_only_its_report(sturm, tmp_path):
    root = sturm("Anna B-pers\nreiste O\nnach O\nBerlin B-place\n. O\n")
    write_file(root / "sturm" / "test_sturm.conll", "Walden B-pers\nschrieb O\naus O\nMünchen B-place\n.\tO\n\nAnna B-pers\nkam O\n")
    result = flairsuite("evaluate", str(MODELS / "map.pt"), "sturm", "--corpora-dir", str(root), "--threads", "1")
    lines = result.stdout.decode("utf-8").splitlines()
    assert lines[0].startswith(f"{MODELS / 'map.pt'}: SequenceTagger on sturm test")
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == "| type | precision | recall | F1 | support |" and table[-1].startswith("| **all (micro)** |")
    no_log_lines(result.stdout.decode("utf-8"))
    assert "SequenceTagger predicts" not in result.stderr.decode("utf-8")  # Flair's INFO line of loading the model kept quiet


def test_results_table_on_stdout_is_the_committed_one():
    result = flairsuite("results", str(ROOT / "results" / "table8-de"), "--layout", "table8")
    assert result.stdout.decode("utf-8") == (ROOT / "results" / "table8-de" / "table8.md").read_text(encoding="utf-8")


def test_corpora_stats_table_on_stdout(sturm):
    root = sturm("Der O\nSturm B-pers\n\nHerwarth B-pers\nWalden I-pers\n")
    stdout = flairsuite("corpora", "stats", "sturm", "--corpora-dir", str(root)).stdout.decode("utf-8")
    title, summary, types = stdout.split("\n", 1)[0], *stdout.split("\n", 1)[1].split("\nentities by type (after repair):\n")
    assert title.startswith("sturm: Sturm")
    header, *rows = [line.split() for line in summary.strip("\n").splitlines()]
    assert header == ["file", "sentences", "tokens", "entities", "repairs"]
    assert rows == [["train", "train_sturm.conll", "2", "4", "2", "0"], ["dev", "dev_sturm.conll", "1", "3", "1", "0"],
                    ["test", "test_sturm.conll", "1", "2", "1", "0"]]
    header, *rows = [line.split() for line in types.strip("\n").splitlines()]
    assert header == ["train", "dev", "test"] and rows[0] == ["pers", "2", "0", "1"]


def test_serve_announces_on_stdout_and_logs_on_stderr(tmp_path):
    stderr_path = tmp_path / "stderr.txt"
    command = [FLAIRSUITE, "serve", str(MODELS / "lcrf-ner.pt"), "--port", "0", "--threads", "1"]
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, encoding="utf-8")
        try:
            assert process.stdout is not None
            announced = process.stdout.readline()
            url = re.search(r"on (http://\S+) ", announced).group(1)
            for _ in range(100):  # the socket listens before uvicorn serves it
                try:
                    request = urllib.request.Request(url + "tag", data=b"Anna reiste nach Berlin.", headers={"Content-Type": "text/plain"})
                    found = json.loads(urllib.request.urlopen(request, timeout=30).read())
                    break
                except OSError:
                    time.sleep(0.2)
            assert found["tokens"] == 5
        finally:
            process.terminate()
            rest, _ = process.communicate(timeout=60)
    assert announced.startswith("serving lcrf-ner.pt on http://127.0.0.1:") and rest == ""
    logged = stderr_path.read_text(encoding="utf-8")
    assert "POST /tag" in logged and "SequenceTagger predicts" not in logged  # uvicorn's access log; Flair's load line kept quiet
