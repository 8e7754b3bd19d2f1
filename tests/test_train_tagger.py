"""`flairsuite train-tagger`: from an annotation export to a tagger in one command (flairsuite/experiments/train_tagger.py,
flairsuite/corpora/format_detection.py, flairsuite/results/tagger_report.py).

Covers: the format told by content for every format the readers take, and the errors where it cannot be told; an unsplit
export read and printed as `tag` reads it (split by document, seed 1), an INCEpTION project export as it comes (curated,
or `--annotator`); the recipe (a language without a pair is an error; vectors only where they exist); the confusion
count of the report; one run of the installed command on a tiny home (a hidden-16 `de` pair and dim-16 vectors, one
epoch, a folder of two plain texts): its stdout (format, split, where, scores, the self-training round kept), the experiment file
`tag` reads naming the same corpus and split and self-training on the text given (and `flairsuite tag` on it finding the
study finished), the model loaded by plain Flair, the card's split, scores and round (the study's model.json), the
report's tables, picture and spans; `--no-self-training` leaves the block out; a bad export is one `Error:` line.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import invoke, one_error_line, train_tiny_embeddings, write_file

from flairsuite.corpora.document_splits import split_record
from flairsuite.corpora.format_detection import detect_format
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.reading import read_experiment
from flairsuite.experiments.train_tagger import choose_recipe, read_export_corpus
from flairsuite.results.tagger_report import BOUNDARY, MISSED, SPURIOUS, confusions, strict_entities

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "annotation"
LETTERS = sorted((REPO / "experiments" / "walkthrough" / "annotations" / "inception").glob("*/*.tsv"))  # types date pers place
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")
CONLLU = "# text = Anna wohnt in Wien.\n" + "".join(
    f"{i}\t{form}\t_\tX\tX\t_\t0\tdep\t_\t{misc}\n"
    for i, (form, misc) in enumerate([("Anna", "NE=B-PER"), ("wohnt", "NE=O"), ("in", "NE=O"), ("Wien", "NE=B-LOC|SpaceAfter=No"), (".", "_")], 1))


def flat_letters(folder: Path, count: int = 6) -> Path:
    """`count` walkthrough letters in one folder, named brief-01.tsv ... (no name holds train, dev or test): an unsplit export."""
    folder.mkdir(parents=True)
    for number, letter in enumerate(LETTERS[:count], 1):
        shutil.copy(letter, folder / f"brief-{number:02d}.tsv")
    return folder


def project_export(root: Path, documents: int = 6, curated: int = 5) -> Path:
    """An INCEpTION project export: every document annotated by anna, the first `curated` curated."""
    write_file(root / "exportedproject3.json", json.dumps({"name": "letters"}))
    for number, letter in enumerate(LETTERS[:documents]):
        document = f"brief-{number + 1:02d}.txt"
        write_file(root / "source" / document, "Lieber Herwarth ...\n")
        write_file(root / "annotation" / document / "anna.tsv", letter.read_bytes())
        if number < curated:
            write_file(root / "curation" / document / "CURATION_USER.tsv", letter.read_bytes())
    return root


# --- the format, told by content ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "content", "entry", "what"), [
    ("a.tsv", (FIXTURES / "inception-letter.tsv").read_text(encoding="utf-8"), {"format": "webanno"}, "WebAnno TSV 3.3"),
    ("a.jsonl", (FIXTURES / "doccano.jsonl").read_text(encoding="utf-8"), {"format": "jsonl"}, "doccano JSON lines"),
    ("a.json", (FIXTURES / "label-studio.json").read_text(encoding="utf-8"), {"format": "jsonl"}, "Label Studio JSON"),
    ("a.json", '{"text": "Anna", "label": {"PER": {"Anna": [[0, 3]]}}}\n', {"format": "spans_json"}, "CLUENER"),
    ("a.conllu", CONLLU, {"format": "conllu", "label": "misc:NE"}, "CoNLL-U, entity tags from MISC NE="),
    ("a.txt", "Anna B-PER\nwohnt O\nin O\nWien B-LOC\n\nOtto B-PER\n", {"format": "column"}, "whitespace-separated, no header line"),
    ("a.tsv", "Anna\tB-PER\tQ123\nwohnt\tO\t_\nin\tO\t_\n", {"format": "column", "sep": "tab", "label": 1}, "tags in column 2 of 3"),
    ("a.tsv", (FIXTURES / "hipe-newspaper.tsv").read_text(encoding="utf-8"), {"format": "hipe"},
     "HIPE TSV (format hipe: a header line of 10 columns, tags in NE-COARSE-LIT"),
    ("a.tsv", (FIXTURES / "hipe-newspaper.tsv").read_text(encoding="utf-8").replace("TOKEN\t", "WORD\t", 1),
     {"format": "column", "sep": "tab", "header": True, "label": "NE-COARSE-LIT", "text": "WORD", "sentence_end": "MISC:EndOfSentence",
      "comment": "# "}, "a header line, tags in column NE-COARSE-LIT of 10"),
])
def test_the_format_is_told_by_content_whatever_the_name(tmp_path, name, content, entry, what):
    detected = detect_format(write_file(tmp_path / name, content))
    assert detected.entry == entry and what in detected.what


def test_exports_and_folders_are_told_as_a_whole(tmp_path):
    assert detect_format(project_export(tmp_path / "export")).entry == {"format": "webanno"}
    assert "INCEpTION project export" in detect_format(project_export(tmp_path / "export")).what
    detected = detect_format(flat_letters(tmp_path / "letters"))
    assert detected.entry == {"format": "webanno"} and detected.what.endswith(", 6 files")
    write_file(tmp_path / "named" / "README.md", "# Letters\nnot read: the folder names its splits\n")
    for split in ("train", "dev", "test"):
        write_file(tmp_path / "named" / f"{split}.txt", "Anna B-PER\nwohnt O\n")
    assert detect_format(tmp_path / "named").entry == {"format": "column"}


@pytest.mark.parametrize(("files", "message"), [
    ({"a.tsv": LETTERS[0].read_text(encoding="utf-8"), "b.jsonl": '{"text": "Anna", "label": []}\n'},
     "its files are in more than one format: a.tsv is WebAnno TSV 3.3 (INCEpTION, WebAnno), b.jsonl is doccano JSON lines"),
    ({"notes.txt": "Dear Anna,\nthe letters are in the box.\n"}, "notes.txt: format not recognised: no column of entity tags"),
    ({"a.conllu": CONLLU.replace("NE=", "X=").replace("X=B-PER", "X=yes").replace("X=B-LOC", "X=no")}, "CoNLL-U, but no MISC key holds entity tags"),
    ({"a.jsonl": "{not json\n"}, "a.jsonl:1: begins like JSON lines (doccano), but its first line is no JSON object"),
    ({}, "an empty folder"),
])
def test_what_cannot_be_told_is_an_error_naming_the_file(tmp_path, files, message):
    (tmp_path / "export").mkdir()
    for name, content in files.items():
        write_file(tmp_path / "export" / name, content)
    with pytest.raises(FlairsuiteError, match=re.escape(message)):
        detect_format(tmp_path / "export")


# --- reading, the recipe, the report's counts --------------------------------------------------------------------------


def test_an_unsplit_export_is_read_split_by_document_and_said_so(tmp_path):
    read, text = read_export_corpus(flat_letters(tmp_path / "letters"))
    lines = read.lines()
    assert lines[0] == f"read: {tmp_path / 'letters'}"
    assert lines[1] == "format: WebAnno TSV 3.3 (INCEpTION, WebAnno), 6 files (read as format: webanno)"
    assert re.fullmatch(r"split: 4 train / 1 dev / 1 test documents \(seed 1\): dev = brief-\d\d\.tsv, test = brief-\d\d\.tsv", lines[2])
    assert "corpus: 6 documents, 180 sentences, " in "\n".join(lines) and "entity types: date " in "\n".join(lines)
    assert read.split()["by"] == "document" and sorted(read.split()["dev"] + read.split()["test"] + read.split()["train"]) == \
        [f"brief-{n:02d}.tsv" for n in range(1, 7)]
    assert len(text.splitlines()) == read.splits["train"].sentences == 120  # the train split's text, for the LMs


def test_split_files_of_several_hipe_documents_count_the_documents(tmp_path):
    page = (FIXTURES / "hipe-newspaper.tsv").read_text(encoding="utf-8")  # two `# hipe2022:document_id` pages
    for split in ("train", "dev", "test"):
        write_file(tmp_path / "export" / f"news-{split}.tsv", page)
    lines = read_export_corpus(tmp_path / "export")[0].lines()
    assert "split: as the export names it: train = 1 file, dev = 1 file, test = 1 file" in lines
    assert any(line.startswith("corpus: 6 documents, ") for line in lines)
    assert [line.split(",")[0] for line in lines if line.startswith("  ")] == ["  train: 2 documents", "  dev: 2 documents", "  test: 2 documents"]


def test_an_inception_project_export_is_read_curated_or_as_one_annotator_did(tmp_path):
    export = project_export(tmp_path / "export")
    curated, _ = read_export_corpus(export)
    assert "read: the curated version of 5 documents (curation/DOCUMENT/CURATION_USER.tsv); 1 without one skipped: brief-06.txt" in \
        "\n".join(curated.lines())
    anna, _ = read_export_corpus(export, "anna")
    assert anna.entry == {"name": "export", "format": "webanno", "annotator": "anna"} and anna.totals()[0] == 6
    archive = tmp_path / "letters.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(export.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(export).as_posix())
    zipped, _ = read_export_corpus(archive)
    assert zipped.entry["name"] == "letters" and zipped.split() == {**curated.split(), "export": zipped.split()["export"]}
    with pytest.raises(FlairsuiteError, match="annotator: applies to an INCEpTION project export"):
        read_export_corpus(flat_letters(tmp_path / "letters"), "anna")


def test_the_recipe_needs_a_pair_and_takes_vectors_where_they_are(tmp_path):
    with pytest.raises(FlairsuiteError, match=r"^--lang xx: no character-LM pair to continue .*flairsuite train-charlm --lang xx$"):
        choose_recipe("xx", "xx-letters", tmp_path / "home", tmp_path / "out" / "experiment.yaml")


def test_confusions_put_each_gold_entity_once_in_its_row():
    gold = strict_entities([["B-pers", "I-pers", "O", "B-place", "O", "B-date", "O"]])
    predicted = strict_entities([["B-pers", "O", "O", "B-pers", "O", "O", "B-date"]])
    assert confusions(gold, predicted) == {("pers", BOUNDARY): 1, ("place", "pers"): 1, ("date", MISSED): 1, (SPURIOUS, "date"): 1}
    assert strict_entities([["O", "I-pers", "B-date"]]) == [[(2, 3, "date")]]  # an I- after O starts none, as the scores read it


# --- the command, end to end on a tiny home ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One `flairsuite train-tagger` of 6 unsplit letters with a tiny `de` pair and vectors, one epoch, one thread."""
    root = tmp_path_factory.mktemp("train-tagger")
    home = train_tiny_embeddings(root, "both", fasttext=True)
    flat_letters(root / "work" / "letters")
    write_file(root / "work" / "plain" / "brief.txt", "Lieber Herwarth, ich komme am Montag nach Berlin.\n")
    write_file(root / "work" / "plain" / "karte.txt", "Anna schrieb aus Wien.\n")
    # no registered datasets: the walk-through letters are Sturm sentences, and with Sturm present (CI) the adaptation
    # would cut its dev and test sentences out of this tiny text, leaving less than one batch of the tiny pair
    (root / "no-datasets").mkdir()
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1", "FLAIRSUITE_CORPORA": str(root / "no-datasets")}
    command = [FLAIRSUITE, "train-tagger", "letters", "--texts", "plain", "--out", "letters-tagger",
               "--max-epochs", "1", "--threads", "1"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=root / "work", env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result, root / "work" / "letters-tagger", home, env


def test_stdout_says_what_was_read_where_it_wrote_and_the_scores(trained):
    result, out, home, _ = trained
    lines = result.stdout.splitlines()
    assert lines[:2] == ["read: letters", "format: WebAnno TSV 3.3 (INCEpTION, WebAnno), 6 files (read as format: webanno)"]
    assert re.fullmatch(r"split: 4 train / 1 dev / 1 test documents \(seed 1\): .*", lines[2])
    assert any(line.startswith("recipe: BiLSTM-CRF on the released de character-LM pair continued on the export's train text and 2 plain "
                               "text files given (charlm:de-letters-tagger-forward, -backward); fastText vectors fasttext:de as they are")
               for line in lines)
    train_sentences = json.loads((out / "card.json").read_text(encoding="utf-8"))["split"]["train"]["sentences"]
    assert any(line.startswith("recipe: ") and line.endswith(f"; then one round of self-training on up to {train_sentences:,} sentences of "
                                                              "the plain texts (those tagged with confidence 0.9 or more join train), the "
                                                              "round better on dev kept") for line in lines)  # as many as train holds
    assert "wrote letters-tagger/experiment.yaml (again: flairsuite tag letters-tagger/experiment.yaml)" in lines
    assert re.search(r"^self-training: kept round [01] \([0-2] of 2 plain sentences tagged with confidence 0.9 or more; dev F1: round 0 "
                     r"[0-9.]+, round 1 [0-9.]+; \d+ s for all rounds\)$", result.stdout, re.M)
    assert re.search(r"^test: precision [0-9.]+, recall [0-9.]+, F1 [0-9.]+ \(dev F1 [0-9.]+\)$", result.stdout, re.M)
    assert lines[-1] == "wrote letters-tagger/model.pt (a Flair SequenceTagger), letters-tagger/card.json, letters-tagger/report.html"
    assert "batch" not in result.stdout and "adapt: training" in result.stderr  # progress and the adaptation's lines: stderr
    assert not re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", result.stdout, re.M)  # nor Flair's log lines


def test_the_experiment_file_is_tags_and_names_the_same_corpus_and_split(trained):
    result, out, home, env = trained
    experiment = read_experiment(out / "experiment.yaml")
    (corpus,) = experiment.config.corpora
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert corpus.name == "letters" and corpus.own.format.kind == "webanno"
    assert split_record(corpus.own)["dev"] == card["split"]["dev"]["documents"] and card["split"]["by"] == "document"
    assert experiment.config.embeddings == {"adapted+word": ("charlm:de-letters-tagger-forward", "charlm:de-letters-tagger-backward",
                                                             "fasttext:de")}
    assert experiment.config.adaptation.fasttext is None  # the vectors are not continued
    assert [path.name for path in experiment.config.adaptation.texts] == ["letters-train.txt", "brief.txt", "karte.txt"]
    again = subprocess.run([FLAIRSUITE, "tag", str(out / "experiment.yaml"), "--threads", "1"], capture_output=True, text=True,
                           cwd=out.parent, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "are current" in again.stdout and "studied 1 runs (2 rounds each, 0 scored now, the rest before)" in again.stdout
    block = experiment.config.self_training  # the texts given, not the export's own: one round above 0.9, at most train's sentences
    assert [path.name for path in block.texts] == ["brief.txt", "karte.txt"] and (block.thresholds, block.rounds) == ((0.9,), 1)
    assert block.max_sentences == card["split"]["train"]["sentences"]


def test_no_self_training_trains_the_export_alone(trained):
    _, out, _, env = trained
    command = [FLAIRSUITE, "train-tagger", "letters", "--texts", "plain", "--no-self-training", "--out", "plain-tagger",
               "--max-epochs", "1", "--threads", "1"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=out.parent, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "self-training" not in result.stdout and re.search(r"^test: precision ", result.stdout, re.M)
    experiment = read_experiment(out.parent / "plain-tagger" / "experiment.yaml")
    assert experiment.config.self_training is None
    assert [path.name for path in experiment.config.adaptation.texts] == ["letters-train.txt", "brief.txt", "karte.txt"]  # still adapted on them
    card = json.loads((out.parent / "plain-tagger" / "card.json").read_text(encoding="utf-8"))
    assert "self_training" not in card["settings"] and card["run"].endswith("seed-1")


def test_the_model_loads_in_plain_flair_and_the_card_holds_split_and_scores(trained):
    from flair.data import Sentence
    from flair.models import SequenceTagger

    _, out, _, _ = trained
    tagger = SequenceTagger.load(str(out / "model.pt"))
    sentence = Sentence("Lieber Herwarth , ich komme am Montag nach Berlin .")
    tagger.predict(sentence)
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["data"]["format"].startswith("WebAnno TSV 3.3") and card["data"]["documents"] == 6
    assert [len(card["split"][split]["documents"]) for split in ("train", "dev", "test")] == [4, 1, 1]
    assert set(card["scores"]["test"]) >= {"precision", "recall", "f1", "per_type"} and "f1" in card["scores"]["dev"]
    assert card["settings"]["train"]["max_epochs"] == 1 and "fasttext" not in card["settings"]["adapt"]
    # the kept round's record: model.pt is the study's, its scores those model.json holds
    kept = json.loads((Path(card["run"]) / "model.json").read_text(encoding="utf-8"))
    assert card["settings"]["self_training"]["kept"]["round"] == kept["self_training"]["round"] in (0, 1)
    assert card["scores"]["test"] == kept["test"] and (out / "model.pt").read_bytes() == (Path(card["run"]) / "model.pt").read_bytes()


def test_the_report_is_one_page_with_tables_a_picture_and_spans(trained):
    _, out, _, _ = trained
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<h2>Per entity type (test)</h2>" in page
    assert all(f"<td>{kind}</td>" in page for kind in ("date", "pers", "place"))
    assert all(f"<td>gold {kind}</td>" in page for kind in ("date", "pers", "place")) and f"<td>{SPURIOUS}</td>" in page
    png = re.search(r'<img alt="[^"]+" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    assert "<th>gold</th><th>predicted</th>" in page and '<span class="entity' in page and "<sub>pers</sub>" in page


def test_a_bad_export_is_one_error_line(tmp_path):
    write_file(tmp_path / "export" / "notes.txt", "Dear Anna,\nthe letters are in the box.\n")
    line = one_error_line(invoke("train-tagger", str(tmp_path / "export"), "--out", str(tmp_path / "out")))
    assert line.startswith(f"Error: {tmp_path / 'export' / 'notes.txt'}: format not recognised")
    assert one_error_line(invoke("train-tagger", str(tmp_path / "nowhere"))) == f"Error: {tmp_path / 'nowhere'}: no such file or folder"
    assert not (tmp_path / "out").exists()
