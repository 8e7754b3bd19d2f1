"""Own corpora from annotation exports: splits of several files (a list, a glob, train/dev/test subfolders of one file per
document, as INCEpTION exports a project), their checksums in the fingerprint, `format: webanno|jsonl` through
`corpora stats/check`, and the split of sentences longer than `max_tokens` with its counts (`corpora stats`, `tag`).
"""

import hashlib
import logging
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.long_sentences import AT_PUNCTUATION, AT_TOKEN, OVER_LENGTH, cut_point, split_long
from flairsuite.corpora.own import corpus_record, own_corpus
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.corpora.stats import corpus_stats
from flairsuite.errors import FlairsuiteError
from flairsuite.tagging.data import labeled_splits

FIXTURES = Path(__file__).parent / "fixtures" / "annotation"
WALKTHROUGH = Path(__file__).resolve().parent.parent / "experiments" / "walkthrough" / "annotations"
LETTER = "Anna\tB-PER\nschrieb\tO\naus\tO\nWien\tB-LOC\n.\tO\n"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def project(root: Path) -> Path:
    """An INCEpTION-style export: train/ with two documents (one in a subfolder), dev/ and test/ with one each."""
    for name in ("train/brief-01.tsv", "train/b/brief-02.tsv", "dev/brief-03.tsv", "test/brief-04.tsv"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / "inception-letter.tsv", root / name)
    return root


# --- splits of several files ------------------------------------------------------------------


def test_subfolders_of_one_file_per_document_are_the_splits_and_each_file_is_in_the_record(tmp_path):
    root = project(tmp_path / "export")
    spec = own_corpus({"path": "export", "format": "webanno"}, tmp_path)
    assert [Path(p).relative_to(root).as_posix() for p in spec.splits["train"].parts] == ["train/b/brief-02.tsv", "train/brief-01.tsv"]
    data = read_splits(spec, root)
    assert len(data["train"].sentences) == 4 and data["train"].source == "train/ (2 files)" and data["dev"].source == "brief-03.tsv"
    assert data["train"].sentences[0].path == root / "train/b/brief-02.tsv"
    record = corpus_record(spec)
    assert record["files"]["train"] == [{"file": "train/b/brief-02.tsv", "sha256": sha(root / "train/b/brief-02.tsv")},
                                        {"file": "train/brief-01.tsv", "sha256": sha(root / "train/brief-01.tsv")}]
    assert record["files"]["dev"] == {"file": "brief-03.tsv", "sha256": sha(root / "dev/brief-03.tsv")}
    assert record["format"]["kind"] == "webanno" and record["format"]["layer"].endswith("NamedEntity") and "max_tokens" not in record
    write_file(root / "train/brief-01.tsv", (FIXTURES / "inception-letter.tsv").read_text(encoding="utf-8").replace("LOC|ORG", "ORG|LOC"))
    changed = corpus_record(own_corpus({"path": "export", "format": "webanno"}, tmp_path))
    assert changed["files"]["train"][1]["sha256"] != record["files"]["train"][1]["sha256"] and changed["labels"] == record["labels"]


def test_a_split_named_by_a_list_a_glob_or_a_folder(tmp_path):
    for name in ("a-1.tsv", "a-2.tsv", "b.tsv", "more/c.tsv", "d.tsv"):
        write_file(tmp_path / "c" / name, LETTER)
    spec = own_corpus({"path": "c", "train": ["a-*.tsv", "more"], "dev": "b.tsv", "test": ["d.tsv"]}, tmp_path)
    assert [Path(p).name for p in spec.splits["train"].parts] == ["a-1.tsv", "a-2.tsv", "c.tsv"]
    assert spec.splits["test"].parts == () and Path(spec.splits["test"].files[0]).name == "d.tsv"
    assert len(read_splits(spec, tmp_path / "c")["train"].sentences) == 3
    with pytest.raises(FlairsuiteError, match=re.escape(f"{tmp_path / 'c' / 'x-*.tsv'}: no train file matches")):
        own_corpus({"path": "c", "train": "x-*.tsv", "dev": "b.tsv", "test": "d.tsv"}, tmp_path)
    with pytest.raises(FlairsuiteError, match=re.escape(f"{tmp_path / 'c' / 'b.tsv'}: both the train and the dev file")):
        own_corpus({"path": "c", "train": "*.tsv", "dev": "b.tsv", "test": "d.tsv"}, tmp_path)


def test_a_split_file_beside_a_split_folder_is_ambiguous(tmp_path):
    root = project(tmp_path / "export")
    shutil.copy(FIXTURES / "inception-letter.tsv", root / "train.tsv")
    with pytest.raises(FlairsuiteError, match=re.escape(f"{root}: 2 files could be the train split (train.tsv, train/)")):
        own_corpus({"path": "export", "format": "webanno"}, tmp_path)


def test_corpora_stats_and_check_on_an_inception_export(tmp_path):
    root = project(tmp_path / "export")
    result = run("corpora", "stats", str(root), "--input-format", "webanno")
    assert result.exit_code == 0, result.output
    assert re.search(r"^train\s+train/ \(2 files\)\s+4\s+54\s+12\s+12$", result.output, re.M), result.output
    assert re.search(r"^overlapping span dropped\s+4\s+2\s+2$", result.output, re.M) and "token split at a span edge" in result.output
    assert run("corpora", "check", str(root), "--input-format", "webanno").output.splitlines()[-1] == "ok: export"
    write_file(root / "dev" / "brief-03.tsv", "#Text=Anna\n1-1\t0-4\tAnna\t*\tPER\n")
    assert one_error_line(run("corpora", "check", str(root), "--input-format", "webanno")) == (
        f"Error: {root / 'dev' / 'brief-03.tsv'}:1: no '#FORMAT=WebAnno TSV 3.x' line: not a WebAnno TSV 3 file (INCEpTION: export as WebAnno TSV v3.3)"
    )


def test_a_doccano_export_beside_a_label_studio_one(tmp_path):
    root = tmp_path / "tools"
    root.mkdir()
    for split, name in (("train", "doccano.jsonl"), ("dev", "doccano-entities.jsonl"), ("test", "label-studio.json")):
        shutil.copy(FIXTURES / name, root / f"{split}.jsonl")
    stats = corpus_stats(own_corpus({"path": "tools", "format": "jsonl"}, tmp_path), root)
    assert stats.summary["sentences"].to_dict() == {"train": 4, "dev": 2, "test": 2}
    assert stats.repairs.loc["task without annotation skipped", "test"] == 1 and stats.repairs.loc["record without text skipped", "train"] == 1


def test_the_walkthrough_sample_reads_in_both_formats():
    for folder, fmt in (("inception", "webanno"), ("doccano", "jsonl")):
        result = run("corpora", "check", str(WALKTHROUGH / folder), "--input-format", fmt)
        assert result.exit_code == 0 and result.output.splitlines()[-1] == f"ok: {folder}", result.output


# --- long sentences ---------------------------------------------------------------------------


def sentence(tokens: list[str], tags: list[str]) -> TaggedSentence:
    return TaggedSentence(tokens, tags, list(range(1, len(tokens) + 1)), [True] * len(tokens))


@pytest.mark.parametrize(
    "tokens, tags, cut",
    [
        ("a b . c d e f".split(), ["O"] * 7, (3, AT_PUNCTUATION)),
        ("a b . c d e f".split(), ["O", "O", "O", "B-X", "I-X", "O", "O"], (3, AT_PUNCTUATION)),
        ("a b . c d e f".split(), ["O", "B-X", "I-X", "I-X", "I-X", "O", "O"], (5, AT_TOKEN)),  # the period is inside an entity
        ("a b c d e f g".split(), ["O", "O", "O", "O", "B-X", "I-X", "O"], (4, AT_TOKEN)),  # nearest 5 outside the entity
        ("a b c d e f g".split(), ["B-X", "I-X", "I-X", "I-X", "I-X", "I-X", "O"], (6, OVER_LENGTH)),
    ],
)
def test_cut_point_prefers_punctuation_and_never_cuts_an_entity(tokens, tags, cut):
    assert cut_point(tokens, tags, 5) == cut


def test_split_long_counts_and_keeps_every_token():
    tokens = [f"w{i}" if i % 7 else "." for i in range(1, 31)]  # a period at 6, 13, 20, 27
    tags = ["O"] * 30
    tags[12:16] = ["B-X", "I-X", "I-X", "I-X"]  # the period at 13 is inside an entity
    repairs = Counter()
    pieces = split_long(sentence(tokens, tags), 10, repairs)
    assert [len(p.tokens) for p in pieces] == [7, 10, 4, 9]
    assert [t for p in pieces for t in p.tokens] == tokens and [p.lines[0] for p in pieces] == [1, 8, 18, 22]
    assert repairs == {"sentence over max_tokens split": 1, AT_PUNCTUATION: 2, AT_TOKEN: 1}


def long_folder(root: Path) -> Path:
    """Documents of 60 five-token sentences with no blank line between them."""
    document = "".join(f"Anna\tB-PER\nschrieb\tO\n{n}\tO\naus\tO\n.\tO\n" for n in range(60))
    for split in ("train", "dev", "test"):
        write_file(root / f"{split}.tsv", document + "\n" + document)
    return root


def test_an_own_corpus_splits_long_sentences_by_default_and_counts_it(tmp_path):
    root = long_folder(tmp_path / "long")
    spec = own_corpus({"path": "long"}, tmp_path)
    assert spec.max_tokens == 250 and spec.long_sentences == 6 and corpus_record(spec)["max_tokens"] == 250
    stats = corpus_stats(spec, root)
    assert stats.summary.loc["train", "sentences"] == 4 and stats.summary.loc["train", "tokens"] == 600
    assert stats.repairs.loc["sentence over max_tokens split", "train"] == 2
    assert stats.repairs.loc[AT_PUNCTUATION, "train"] == 2 and stats.types.loc["PER", "train"] == 120
    whole = own_corpus({"path": "long", "max_tokens": None}, tmp_path)
    assert corpus_stats(whole, root).summary.loc["train", "sentences"] == 2 and "max_tokens" not in corpus_record(whole)
    assert corpus_stats(own_corpus({"path": "long", "max_tokens": 100}, tmp_path), root).summary.loc["train", "sentences"] == 6
    with pytest.raises(FlairsuiteError, match="max_tokens: 0 is not a number of tokens"):
        own_corpus({"path": "long", "max_tokens": 0}, tmp_path)


def test_tag_says_when_it_split_long_sentences(tmp_path, caplog):
    spec = own_corpus({"path": "long"}, long_folder(tmp_path / "long").parent)
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        splits = labeled_splits(spec, None, tmp_path)
    assert len(splits["train"]) == 4
    assert "long: 6 sentences longer than 250 tokens split into 12 pieces (never inside an entity; `max_tokens: null` keeps them whole)" in caplog.text


def test_cli_max_tokens_null(tmp_path):
    root = long_folder(tmp_path / "long")
    result = run("corpora", "check", str(root), "--option", "max_tokens=null")
    assert result.exit_code == 0 and "train: train.tsv: 2 sentences, 600 tokens, 0 repairs" in result.output, result.output
