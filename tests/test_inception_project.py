"""INCEpTION project exports read as they come (flairsuite/corpora/inception_project.py): the ZIP of "Export backup
archive" and its unpacked folder, built here in INCEpTION's layout from the WebAnno fixtures.

Covers: detection by layout (also inside the one folder a re-zipped download adds); the curated version read by
default, documents without one skipped and listed; `annotator` (`--annotator`, an experiment entry's key) choosing an
annotator's version; INITIAL_CAS and an unknown annotator refused, naming the annotators; the split by document of the
documents read, recorded and printed; a ZIP read without writing to the working folder (its copy removed when the
process ends), the same corpus as its folder; and one-line errors (the installed command, in a subprocess) for an unsafe
member, an export without TSV or in several formats, a file that is no ZIP.
"""

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file

from flairsuite.corpora.document_splits import SplitCorpusSpec, split_documents
from flairsuite.corpora.inception_project import is_export, read_export
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import corpus_record, own_corpus
from flairsuite.errors import FlairsuiteError

REPO = Path(__file__).resolve().parent.parent
LETTERS = sorted((REPO / "experiments" / "walkthrough" / "annotations" / "inception").glob("*/*.tsv"))  # types date pers place
LETTER = REPO / "tests" / "fixtures" / "annotation" / "inception-letter.tsv"  # types PER, LOC, DATE, ...
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")
DOCUMENTS = [f"brief-{number:02d}.txt" for number in range(1, 11)]


def export_folder(root: Path, curated: int = 8, ben: int = 3) -> Path:
    """An export of 10 documents: the first `curated` curated (a walkthrough letter each); anna annotated all 10 (the
    fixture letter), ben the first `ben` (the walkthrough letters); INITIAL_CAS of each; INCEpTION's own files beside."""
    write_file(root / "exportedproject17.json", json.dumps({"name": "letters", "source_documents": DOCUMENTS}))
    for number, document in enumerate(DOCUMENTS):
        write_file(root / "source" / document, "Lieber Herwarth Walden ...\n")
        write_file(root / "annotation" / document / "INITIAL_CAS.tsv", "#FORMAT=WebAnno TSV 3.3\n")
        write_file(root / "annotation" / document / "anna.tsv", LETTER.read_bytes())
        write_file(root / "annotation_ser" / document / "anna.ser", b"\xac\xed\x00\x05 a CAS")
        if number < ben:
            write_file(root / "annotation" / document / "ben.tsv", LETTERS[number].read_bytes())
        if number < curated:
            write_file(root / "curation" / document / "CURATION_USER.tsv", LETTERS[number].read_bytes())
            write_file(root / "curation_ser" / document / "CURATION_USER.ser", b"\xac\xed\x00\x05 a CAS")
    write_file(root / "log" / "17.log", "exported\n")
    return root


def zipped(folder: Path, archive: Path, wrap: str = "") -> Path:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, wrap + path.relative_to(folder).as_posix())
    return archive


def installed(*args: str, cwd: Path, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([FLAIRSUITE, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=env)


def test_an_export_is_known_by_its_layout(tmp_path):
    folder = export_folder(tmp_path / "export")
    assert is_export(folder) and is_export(zipped(folder, tmp_path / "export.zip"))
    assert not is_export(folder / "curation") and not is_export(LETTERS[0].parent.parent)
    write_file(tmp_path / "plain" / "curation" / "a" / "CURATION_USER.tsv", LETTERS[0].read_bytes())
    assert not is_export(tmp_path / "plain")  # curation/ alone, without source/, INCEpTION's files or the project's .json


def test_the_curated_version_is_read_by_default_and_the_others_are_skipped_and_listed(tmp_path):
    spec = own_corpus({"path": "export"}, export_folder(tmp_path / "export").parent)
    assert isinstance(spec, SplitCorpusSpec) and spec.format.kind == "webanno" and spec.name == "export"
    assert spec.types == ("date", "pers", "place")  # the walkthrough letters, not anna's fixture letter
    reading = spec.export
    assert reading.annotator is None and reading.annotators == ("anna", "ben") and reading.skipped == ("brief-09.txt", "brief-10.txt")
    assert {document: path.relative_to(tmp_path / "export").as_posix() for document, path in reading.documents.items()} == {
        document: f"curation/{document}/CURATION_USER.tsv" for document in DOCUMENTS[:8]}
    assert reading.lines() == ["read: the curated version of 8 documents (curation/DOCUMENT/CURATION_USER.tsv); 2 without one skipped: "
                               "brief-09.txt, brief-10.txt (--annotator NAME reads an annotator's version; annotators: anna, ben)"]
    assert spec.split == split_documents(DOCUMENTS[:8])
    record = corpus_record(spec)
    assert record["split"]["export"] == {"version": "curation", "documents": DOCUMENTS[:8], "skipped": ["brief-09.txt", "brief-10.txt"]}
    assert record["files"]["dev"] == [{"file": f"curation/{spec.split.documents['dev'][0]}/CURATION_USER.tsv",
                                       "sha256": record["files"]["dev"][0]["sha256"]}]


def test_an_annotator_picks_that_version(tmp_path):
    export_folder(tmp_path / "export")
    anna = own_corpus({"path": "export", "annotator": "anna"}, tmp_path)
    assert "PER" in anna.types and anna.export.annotator == "anna" and anna.export.skipped == ()
    assert all(path.name == "anna.tsv" for path in anna.export.documents.values()) and len(anna.export.documents) == 10
    assert anna.export.lines() == ["read: annotator anna's version of 10 documents (annotation/DOCUMENT/anna.tsv)"]
    ben = own_corpus({"path": "export", "annotator": "ben"}, tmp_path)
    assert ben.split.documents == {"train": ("brief-01.txt",), "dev": ("brief-02.txt",), "test": ("brief-03.txt",)}
    assert ben.export.skipped == tuple(DOCUMENTS[3:]) and ben.export.lines()[0].startswith(
        "read: annotator ben's version of 3 documents (annotation/DOCUMENT/ben.tsv); 7 without one skipped: brief-04.txt, ")
    with pytest.raises(FlairsuiteError, match="annotator 'carl' has no document in the export; its annotators: anna, ben$"):
        own_corpus({"path": "export", "annotator": "carl"}, tmp_path)
    with pytest.raises(FlairsuiteError, match="INITIAL_CAS is the document as imported, before any annotation, not an annotator"):
        own_corpus({"path": "export", "annotator": "INITIAL_CAS"}, tmp_path)
    with pytest.raises(FlairsuiteError, match="export: format: an INCEpTION project export is read as webanno"):
        own_corpus({"path": "export", "format": "conllu", "label": "misc:NE"}, tmp_path)


def test_an_export_without_curation_needs_an_annotator(tmp_path):
    export_folder(tmp_path / "export", curated=0)
    with pytest.raises(FlairsuiteError, match="no curated document .curation/ holds none.: read an annotator's version with --annotator NAME "
                                              ".`annotator:` in an experiment file.; its annotators: anna, ben"):
        own_corpus({"path": "export"}, tmp_path)


def test_a_zip_is_the_same_corpus_as_its_folder_and_nothing_is_unpacked_into_the_working_folder(tmp_path, monkeypatch):
    folder = export_folder(tmp_path / "unpacked")
    archive = zipped(folder, tmp_path / "work" / "letters.zip")
    wrapped = zipped(folder, tmp_path / "work" / "download.zip", wrap="letters-2024-05-01/")  # re-zipped after a browser unpacked it
    monkeypatch.chdir(tmp_path / "work")
    from_folder = own_corpus({"path": str(folder), "name": "letters"}, tmp_path)
    for path in (archive, wrapped):
        spec = own_corpus({"path": path.name, "name": "letters"}, tmp_path / "work")
        assert spec.title == f"INCEpTION project export in {path}" and spec.folder == str(path)
        assert corpus_record(spec) == corpus_record(from_folder)  # the same files: the same fingerprint
        assert [len(part.sentences) for part in read_splits(spec, tmp_path).values()] == [180, 30, 30]
        copy = next(iter(spec.export.documents.values()))
        assert copy.parts[-4:] == (path.name, "curation", "brief-01.txt", "CURATION_USER.tsv") and tmp_path not in copy.parents
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["download.zip", "letters.zip"]


@pytest.mark.parametrize("member, why", [
    ("../evil.tsv", "a path with '..' that leads outside the archive"),
    ("/etc/evil.tsv", "an absolute path"),
    ("curation\\brief-01.txt\\CURATION_USER.tsv", "a path with a backslash"),
    ("C:/evil.tsv", "an absolute path"),
    ("curation/brief-01.txt/CURATION_USER.tsv", "a symbolic link"),
])
def test_an_unsafe_member_refuses_the_archive(tmp_path, member, why):
    archive = zipped(export_folder(tmp_path / "export", curated=0), tmp_path / "work" / "export.zip")
    with zipfile.ZipFile(archive, "a") as out:
        info = zipfile.ZipInfo(member)
        if why == "a symbolic link":
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
        out.writestr(info, "/etc/passwd" if why == "a symbolic link" else "#FORMAT=WebAnno TSV 3.3\n")
    result = installed("corpora", "check", "export.zip", cwd=tmp_path / "work")
    assert result.returncode == 1 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"Error: {archive}: member '{member}' is {why}: an unsafe archive, refused (nothing was read)"]
    assert sorted(p.name for p in tmp_path.rglob("*evil*")) == [] and os.listdir(tmp_path / "work") == ["export.zip"]


def test_exports_that_are_not_all_webanno_tsv_are_one_line_errors(tmp_path):
    folder = export_folder(tmp_path / "several")
    write_file(folder / "annotation" / DOCUMENTS[0] / "anna.xmi", "<xmi/>")
    (folder / "annotation" / DOCUMENTS[0] / "anna.tsv").unlink()
    assert one_error_line(run("corpora", "stats", str(folder))) == (
        f"Error: {folder}: its documents are in several formats (30 .tsv, 1 .xmi): "
        'export the project again with the secondary format "WebAnno TSV v3.3", not AUTO')
    other = tmp_path / "xmi"
    for path in sorted(export_folder(tmp_path / "xmi").rglob("*.tsv")):
        path.rename(path.with_suffix(".xmi"))
    assert one_error_line(run("corpora", "stats", str(other))) == (
        f"Error: {other}: no WebAnno TSV files, its annotation files are 31 .xmi: "
        'export the project again with the secondary format "WebAnno TSV v3.3"')
    bare = export_folder(tmp_path / "bare")
    for path in sorted(bare.rglob("*.tsv")):
        path.unlink()
    archive = zipped(bare, tmp_path / "bare.zip")
    result = installed("corpora", "check", str(archive), cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"Error: {archive}: no annotation files in annotation/ or curation/ (exported without a secondary format): "
        'export the project again with the secondary format "WebAnno TSV v3.3"']
    write_file(tmp_path / "notes.zip", "not a zip")
    assert one_error_line(run("corpora", "check", str(tmp_path / "notes.zip"))).startswith(
        f"Error: {tmp_path / 'notes.zip'}: not a readable ZIP archive (")
    plain = zipfile.ZipFile(tmp_path / "plain.zip", "w")
    plain.writestr("brief-01.tsv", LETTERS[0].read_bytes())
    plain.close()
    assert one_error_line(run("corpora", "check", str(tmp_path / "plain.zip"))) == (
        f"Error: {tmp_path / 'plain.zip'}: a ZIP archive, but no INCEpTION project export: no annotation/ or curation/ folder "
        "beside source/ or the project's .json at its top (INCEpTION: Export backup archive)")


def test_the_installed_command_prints_the_versions_read_and_the_split(tmp_path):
    archive = zipped(export_folder(tmp_path / "export"), tmp_path / "work" / "letters.zip")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    spec = own_corpus({"path": str(archive)}, tmp_path)
    stats = installed("corpora", "stats", "letters.zip", cwd=tmp_path / "work", env=env)
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.splitlines()[:7] == [
        f"letters: INCEpTION project export in {archive}",
        "read: the curated version of 8 documents (curation/DOCUMENT/CURATION_USER.tsv); 2 without one skipped: brief-09.txt, "
        "brief-10.txt (--annotator NAME reads an annotator's version; annotators: anna, ben)",
        f"split: 6 train / 1 dev / 1 test documents (seed 1): dev = {spec.split.documents['dev'][0]}, test = {spec.split.documents['test'][0]}",
        "scheme: bio (auto: 0 entities start with I-, 139 with B-), read as BIO; types: date pers place",
        "              file sentences tokens entities repairs",
        "train  6 documents       180   2115      113       0",
        "dev     1 document        30    423       10       0",
    ]
    check = installed("corpora", "check", "letters.zip", "--annotator", "ben", cwd=tmp_path / "work", env=env)
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines()[:2] == [
        "read: annotator ben's version of 3 documents (annotation/DOCUMENT/ben.tsv); 7 without one skipped: brief-04.txt, brief-05.txt, "
        "brief-06.txt, brief-07.txt, brief-08.txt, brief-09.txt, brief-10.txt (annotators: anna, ben)",
        "split: 1 train / 1 dev / 1 test documents (seed 1): dev = brief-02.txt, test = brief-03.txt",
    ]
    assert check.stdout.splitlines()[-1] == "ok: letters"
    assert list(temporary.iterdir()) == [] and sorted(os.listdir(tmp_path / "work")) == ["letters.zip"]  # the copy is gone
    unknown = installed("corpora", "stats", "letters.zip", "--annotator", "carl", cwd=tmp_path / "work", env=env)
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.strip().splitlines() == [f"Error: {archive}: annotator 'carl' has no document in the export; its annotators: anna, ben"]


def test_reading_an_export_loads_no_heavy_library(tmp_path):
    archive = zipped(export_folder(tmp_path / "export"), tmp_path / "letters.zip")
    probe = ("import sys\nfrom flairsuite.cli import cli\n"
             "for args in (['corpora', 'stats', sys.argv[1]], ['corpora', 'check', sys.argv[1], '--annotator', 'ben']):\n"
             "    cli.main(args, standalone_mode=False)\n"
             "print(sorted(name for name in ('torch', 'flair', 'transformers') if name in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(archive)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_an_experiment_entry_takes_the_annotator(tmp_path):
    from flairsuite.experiments.reading import load_experiment

    zipped(export_folder(tmp_path / "export"), tmp_path / "data" / "letters.zip")
    path = write_file(tmp_path / "letters.yaml", "name: letters\ncorpora: [{path: data/letters.zip, annotator: ben}]\n"
                                                 "embeddings: {char: [char]}\ntaggers: [map]\nseeds: [1]\n")
    (corpus,) = load_experiment(path).corpora
    assert corpus.name == "letters" and corpus.own.export.annotator == "ben" and corpus.own_entry["annotator"] == "ben"
    assert corpus.own_entry["path"] == str(tmp_path / "data" / "letters.zip")  # read again from the archive, not its copy
    write_file(path, "name: letters\ncorpora: [{path: data/letters.zip, annotator: [ben]}]\nembeddings: {char: [char]}\n"
                     "taggers: [map]\nseeds: [1]\n")
    with pytest.raises(FlairsuiteError, match=r"letters: annotator: \[\"ben\"\] is not an annotator's user name, e.g. annotator: anna"):
        load_experiment(path)
    assert read_export(tmp_path / "export", "ben").documents == {
        document: tmp_path / "export" / "annotation" / document / "ben.tsv" for document in DOCUMENTS[:3]}


def test_evaluate_reads_an_export_split_as_for_training(tmp_path, monkeypatch):
    """`evaluate MODEL export.zip --split test` scores the test documents of the split a tagger trained on the export saw."""
    from flairsuite.cli.corpora import corpus_spec

    archive = zipped(export_folder(tmp_path / "export"), tmp_path / "letters.zip")
    monkeypatch.chdir(tmp_path)
    scored = corpus_spec("letters.zip", None, None, (), needed=["test"])
    assert scored.split == own_corpus({"path": str(archive)}, tmp_path).split
    assert [len(part.sentences) for part in read_splits(scored, tmp_path, ["test"]).values()] == [30]
