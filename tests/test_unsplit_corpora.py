"""Own corpora without train/dev/test files (flairsuite/corpora/document_splits.py): a folder of documents, or a single
file, split by the suite with a fixed seed, and the split recorded, printed and kept in the runs' record.

Covers: the rule (80/10/10 of documents, at least one in each split from 3 documents on; by sentence for 1 or 2), its
determinism (names and seed only: not the order files are listed in, nor the folder), the record (`SplitRecord`, the
corpus record of the fingerprint, `corpora stats`/`check` lines), a single file read by `corpora stats` and `check` (the
installed command, in a subprocess), what stays as it was (folders that name their splits, byte for byte; `evaluate`'s
new batch, which is not split), and the errors (too few sentences, dev_fraction on an unsplit corpus).
"""

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file

from flairsuite.corpora.document_splits import SplitCorpusSpec, held_out, sentence_indices, split_documents, split_record
from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import corpus_record, own_corpus
from flairsuite.errors import FlairsuiteError

REPO = Path(__file__).resolve().parent.parent
WALKTHROUGH = REPO / "experiments" / "walkthrough" / "annotations" / "inception"
LETTERS = sorted(WALKTHROUGH.glob("*/*.tsv"))  # 34 WebAnno TSV letters, 30 sentences each
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")


def flat_letters(folder: Path, count: int = 10) -> Path:
    """`count` letters of the walkthrough export in one folder, named brief-01.tsv ... (no name holds train, dev or test)."""
    folder.mkdir(parents=True)
    for number, letter in enumerate(LETTERS[:count], 1):
        shutil.copy(letter, folder / f"brief-{number:02d}.tsv")
    return folder


def installed(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([FLAIRSUITE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_the_rule_takes_a_tenth_for_dev_and_for_test_at_least_one_each():
    assert [held_out(count) for count in (1, 3, 4, 10, 14, 15, 25, 100)] == [1, 1, 1, 1, 1, 2, 3, 10]
    for count in (3, 4, 10, 25):
        record = split_documents([f"d{i:03d}" for i in range(count)])
        sizes = {split: len(names) for split, names in record.documents.items()}
        assert sizes == {"train": count - 2 * held_out(count), "dev": held_out(count), "test": held_out(count)}
        assert sorted(name for names in record.documents.values() for name in names) == [f"d{i:03d}" for i in range(count)]
        assert all(list(names) == sorted(names) for names in record.documents.values())  # each split in name order
    indices = sentence_indices(30)
    assert [len(indices[split]) for split in ("train", "dev", "test")] == [24, 3, 3]
    assert sorted(indices["train"] + indices["dev"] + indices["test"]) == list(range(30))


def test_a_folder_without_split_files_is_split_by_document_and_the_split_is_recorded(tmp_path):
    spec = own_corpus({"path": "letters", "format": "webanno"}, flat_letters(tmp_path / "letters").parent)
    assert isinstance(spec, SplitCorpusSpec) and spec.split.unit == "document" and spec.split.seed == 1
    documents = spec.split.documents
    assert {split: len(names) for split, names in documents.items()} == {"train": 8, "dev": 1, "test": 1}
    assert documents == split_documents([f"brief-{number:02d}.tsv" for number in range(1, 11)]).documents
    assert {split: [Path(part).name for part in spec.splits[split].parts or spec.splits[split].files] for split in documents} == {
        split: list(names) for split, names in documents.items()}
    record = split_record(spec)
    assert record == {"by": "document", "seed": 1, "shares": [0.8, 0.1, 0.1], **{split: list(names) for split, names in documents.items()}}
    assert corpus_record(spec)["split"] == record  # what a run keeps: fingerprint and metrics.json
    assert spec.split.line() == (f"split: 8 train / 1 dev / 1 test documents (seed 1): dev = {documents['dev'][0]}, "
                                 f"test = {documents['test'][0]}")
    data = read_splits(spec, tmp_path)
    assert [(split, part.source, len(part.sentences)) for split, part in data.items()] == [
        ("train", "8 documents", 240), ("dev", "1 document", 30), ("test", "1 document", 30)]


def test_the_split_depends_on_names_and_seed_only(tmp_path):
    first = own_corpus({"path": "a", "format": "webanno"}, flat_letters(tmp_path / "a").parent)
    moved = tmp_path / "elsewhere" / "b"
    moved.mkdir(parents=True)
    for path in sorted((tmp_path / "a").iterdir(), reverse=True):  # written in another order, in another folder
        shutil.copy(path, moved / path.name)
    (moved / ".notes.tsv").write_text("hidden: never read\n", encoding="utf-8")
    second = own_corpus({"path": "b", "format": "webanno"}, moved.parent)
    assert first.split == second.split and corpus_record(first) == corpus_record(second)
    assert own_corpus({"path": "a", "format": "webanno"}, tmp_path).split == first.split
    (tmp_path / "a" / "brief-11.tsv").write_bytes(LETTERS[10].read_bytes())  # another document: a new split, recorded anew
    assert own_corpus({"path": "a", "format": "webanno"}, tmp_path).split.documents != first.split.documents


def test_three_documents_give_one_each_and_two_are_split_by_sentence(tmp_path):
    three = own_corpus({"path": "three", "format": "webanno"}, flat_letters(tmp_path / "three", 3).parent)
    assert [len(three.split.documents[split]) for split in ("train", "dev", "test")] == [1, 1, 1]
    two = own_corpus({"path": "two", "format": "webanno"}, flat_letters(tmp_path / "two", 2).parent)
    assert two.split.unit == "sentence" and two.split.sentences == {"train": 48, "dev": 6, "test": 6}
    assert two.split.line() == ("split: 48 train / 6 dev / 6 test sentences (seed 1) of 2 documents (brief-01.tsv, brief-02.tsv): "
                                "fewer than 3 documents are split by sentence")
    data = read_splits(two, tmp_path)
    assert [len(data[split].sentences) for split in ("train", "dev", "test")] == [48, 6, 6]
    assert data["dev"].source == "2 documents (10% of sentences)"
    every = Counter(tuple(sentence.tokens) for part in data.values() for sentence in part.sentences)
    files = sorted((tmp_path / "two").iterdir())
    assert every == Counter(tuple(sentence.tokens) for path in files for sentence in read_tagged(path, two.format, "utf-8", Counter()))


def test_a_single_file_is_one_document_split_by_sentence(tmp_path):
    letter = shutil.copy(LETTERS[0], tmp_path / "letter.tsv")
    spec = own_corpus({"path": "letter.tsv", "format": "webanno"}, tmp_path)
    assert spec.name == "letter" and spec.split.unit == "sentence" and spec.split.documents["test"] == ("letter.tsv",)
    assert corpus_record(spec)["files"]["test"] == [{"file": "letter.tsv", "sha256": spec.checksums["test"]}]
    data = read_splits(spec, tmp_path, ["test", "dev"])  # any splits, in the order asked
    assert list(data) == ["test", "dev"] and [len(part.sentences) for part in data.values()] == [3, 3]
    assert data["test"].source == "letter.tsv (10% of sentences)"
    assert {tuple(s.tokens) for s in data["test"].sentences}.isdisjoint(tuple(s.tokens) for s in data["dev"].sentences)
    tiny = write_file(tmp_path / "tiny.conll", "Anna B-PER\n\nWien B-LOC\n")
    with pytest.raises(FlairsuiteError, match="tiny.conll: 2 sentences: too few to split into train, dev and test"):
        own_corpus({"path": tiny.name}, tmp_path)
    assert letter.read_bytes() == LETTERS[0].read_bytes()  # nothing written beside it


def test_dev_fraction_applies_to_a_train_file_only(tmp_path):
    flat_letters(tmp_path / "letters", 4)
    with pytest.raises(FlairsuiteError, match="dev_fraction takes dev from a train file, and without train/dev/test files the corpus"):
        own_corpus({"path": "letters", "format": "webanno", "dev_fraction": 0.1}, tmp_path)
    with pytest.raises(FlairsuiteError, match="test is never sampled .a corpus with no train, dev or test file at all is split by document"):
        own_corpus({"path": "letters", "format": "webanno", "train": "brief-01.tsv", "dev_fraction": 0.1}, tmp_path)


def test_scoring_a_new_batch_does_not_split_it(tmp_path):
    """`evaluate` scores a folder's split files (split_unsplit=False): a new batch is read as before, not split."""
    flat_letters(tmp_path / "batch", 4)
    with pytest.raises(FlairsuiteError, match="no test file"):
        own_corpus({"path": "batch", "format": "webanno"}, tmp_path, needed=["test"], split_unsplit=False)
    spec = own_corpus({"path": "batch", "format": "webanno"}, tmp_path, needed=["test"])  # --exclude: as for training
    assert spec.split.documents["test"] == own_corpus({"path": "batch", "format": "webanno"}, tmp_path).split.documents["test"]


def test_folders_that_name_their_splits_read_as_before(tmp_path):
    spec = own_corpus({"path": str(WALKTHROUGH), "format": "webanno"}, tmp_path)
    assert not isinstance(spec, SplitCorpusSpec) and split_record(spec) is None and "split" not in corpus_record(spec)
    result = run("corpora", "stats", str(WALKTHROUGH), "--input-format", "webanno")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:6] == [  # as docs/own-data.md shows it
        "scheme: bio (auto: 0 entities start with I-, 625 with B-), read as BIO; types: date pers place",
        "                    file sentences tokens entities repairs",
        "train  train/ (24 files)       720   7955      440       0",
        "dev       dev/ (5 files)       150   1857       84       0",
        "test     test/ (5 files)       150   1830      101       0",
    ]


def test_corpora_stats_and_check_print_the_split_of_a_folder_and_take_a_single_file(tmp_path):
    flat_letters(tmp_path / "letters")
    spec = own_corpus({"path": "letters", "format": "webanno"}, tmp_path)
    line = spec.split.line()
    stats = installed("corpora", "stats", "letters/", "--input-format", "webanno", cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    lines = stats.stdout.splitlines()
    assert lines[:2] == [f"letters: own corpus in {tmp_path / 'letters'}", line]
    assert lines[3:7] == ["              file sentences tokens entities repairs", "train  8 documents       240   2921      142       0",
                          "dev     1 document        30    365       16       0", "test    1 document        30    401       27       0"]
    check = installed("corpora", "check", "letters", "--input-format", "webanno", cwd=tmp_path)
    assert check.returncode == 0 and check.stdout.splitlines()[0] == line and check.stdout.splitlines()[-1] == "ok: letters"
    shutil.copy(LETTERS[0], tmp_path / "letter.tsv")
    single = installed("corpora", "check", "letter.tsv", "--input-format", "webanno", cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    assert single.stdout.splitlines() == [
        "split: 24 train / 3 dev / 3 test sentences (seed 1) of 1 document (letter.tsv): fewer than 3 documents are split by sentence",
        "scheme: bio (auto: 0 entities start with I-, 19 with B-), read as BIO; types: date pers place",
        "train: letter.tsv (80% of sentences): 24 sentences, 229 tokens, 0 repairs",
        "dev: letter.tsv (10% of sentences): 3 sentences, 10 tokens, 0 repairs",
        "test: letter.tsv (10% of sentences): 3 sentences, 33 tokens, 0 repairs",
        "ok: letter",
    ]
    stats = installed("corpora", "stats", "letter.tsv", "--input-format", "webanno", cwd=tmp_path)
    assert stats.returncode == 0 and stats.stdout.splitlines()[0] == f"letter: own corpus in {tmp_path / 'letter.tsv'}"
    write_file(tmp_path / "two.conll", "Anna B-PER\n\nWien B-LOC\n")
    too_few = installed("corpora", "stats", "two.conll", cwd=tmp_path)
    assert too_few.returncode == 1 and too_few.stdout == ""
    assert too_few.stderr.strip().splitlines() == [f"Error: {tmp_path / 'two.conll'}: 2 sentences: too few to split into train, dev and test "
                                                   "(a corpus without train/dev/test files is split by document, or by sentence)"]


def test_an_experiment_entry_may_name_an_unsplit_folder(tmp_path):
    from flairsuite.experiments.reading import load_experiment

    flat_letters(tmp_path / "data" / "letters", 5)
    path = write_file(tmp_path / "letters.yaml", "name: letters\ncorpora: [{path: data/letters, format: webanno}]\n"
                                                 "embeddings: {char: [char]}\ntaggers: [map]\nseeds: [1]\n")
    (corpus,) = load_experiment(path).corpora
    assert corpus.own.split == split_documents([f"brief-{number:02d}.tsv" for number in range(1, 6)])
    assert one_error_line(run("corpora", "check", str(tmp_path / "data" / "letters"), "--annotator", "anna")).startswith(
        "Error: letters: annotator: applies to an INCEpTION project export")
