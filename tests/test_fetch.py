"""Tests of `flairsuite corpora fetch`: downloads from file:// URLs, verification, derivations."""

import gzip
import hashlib
import os
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from flairsuite.cli import cli
from flairsuite.corpora.fetch import (
    court_text_records,
    fetch,
    fetch_spec,
    ler_train_records,
    read_sentences,
    subtract_sentences,
    write_gzip,
)
from flairsuite.corpora.registry import DatasetSpec, dataset
from flairsuite.errors import FlairsuiteError

COURTS = ("bag", "bfh", "bgh", "bpatg", "bsg", "bverfg", "bverwg")
LER_TRAIN_SHA256 = "db8a1774179632c343055d86646a2861ff0bb294429871dd339df4445dee9b92"
COURT_TEXT_SHA256 = "bd2022db3df8d2726c41704911ab711ae6c6debd48c5aa0a79a725f4168b72c4"
CONTENT = b"Der B-pers\nSturm O\n\n"


def sturm_with(train_url: str, content: bytes = CONTENT) -> DatasetSpec:
    """The sturm entry with only a train split, fetched from `train_url` and checked against `content`."""
    spec = dataset("sturm")
    train = replace(
        spec.splits["train"], url=train_url, bytes=len(content), sha256=hashlib.sha256(content).hexdigest()
    )
    return replace(spec, splits={"train": train})


def upstream_file(folder: Path, content: bytes = CONTENT) -> str:
    """A file:// URL serving `content`."""
    path = folder / "upstream" / "train_sturm.conll"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path.as_uri()


def test_download_is_verified_and_installed(tmp_path: Path) -> None:
    spec = sturm_with(upstream_file(tmp_path))
    lines = list(fetch_spec(spec, tmp_path / "corpora"))
    target = tmp_path / "corpora" / "sturm" / "train_sturm.conll"
    assert target.read_bytes() == CONTENT
    assert lines == [f"sturm train: downloaded 20 bytes -> {target} (size, sha256 verified)"]


def test_git_blob_is_verified(tmp_path: Path) -> None:
    blob = hashlib.sha1(b"blob %d\0" % len(CONTENT) + CONTENT).hexdigest()
    spec = sturm_with(upstream_file(tmp_path))
    spec = replace(spec, splits={"train": replace(spec.splits["train"], bytes=None, sha256=None, git_blob=blob)})
    assert list(fetch_spec(spec, tmp_path / "corpora"))[0].endswith("(git blob verified)")


def test_checksum_mismatch_leaves_no_file(tmp_path: Path) -> None:
    spec = sturm_with(upstream_file(tmp_path, b"tampered\n"))
    with pytest.raises(FlairsuiteError, match="checksum mismatch .*expected size 20, got 9") as caught:
        list(fetch_spec(spec, tmp_path / "corpora"))
    assert "file://" in str(caught.value)
    assert list((tmp_path / "corpora" / "sturm").iterdir()) == []


def test_unreachable_url_is_one_line_error(tmp_path: Path) -> None:
    url = (tmp_path / "missing" / "train_sturm.conll").as_uri()
    with pytest.raises(FlairsuiteError) as caught:
        list(fetch_spec(sturm_with(url), tmp_path / "corpora"))
    message = str(caught.value)
    assert "\n" not in message
    assert url in message and str(tmp_path / "corpora" / "sturm" / "train_sturm.conll") in message
    assert not (tmp_path / "corpora" / "sturm" / "train_sturm.conll").exists()


def test_present_split_is_a_no_op(tmp_path: Path) -> None:
    target = tmp_path / "corpora" / "sturm" / "train_sturm.conll.gz"
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress(CONTENT))
    url = (tmp_path / "never-read").as_uri()
    assert list(fetch_spec(sturm_with(url), tmp_path / "corpora")) == [f"sturm train: present ({target})"]


def test_zip_members_are_extracted_from_one_download(tmp_path: Path) -> None:
    archive = tmp_path / "ddt.zip"
    members = {f"ddt.{split}.conllu": f"# {split}\n".encode() for split in ("train", "dev", "test")}
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, content in members.items():
            zipped.writestr(name, content)
    dane = dataset("dane")
    splits = {name: replace(entry, url=archive.as_uri()) for name, entry in dane.splits.items()}
    lines = list(fetch_spec(replace(dane, splits=splits), tmp_path / "corpora"))
    assert len(lines) == 3 and all("downloaded" in line for line in lines)
    for name, content in members.items():
        assert (tmp_path / "corpora" / "dane" / name).read_bytes() == content


def test_missing_zip_member_is_an_error(tmp_path: Path) -> None:
    archive = tmp_path / "ddt.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("other.conllu", "x\n")
    dane = dataset("dane")
    spec = replace(dane, splits={"train": replace(dane.splits["train"], url=archive.as_uri())})
    with pytest.raises(FlairsuiteError, match="has no member 'ddt.train.conllu'"):
        list(fetch_spec(spec, tmp_path / "corpora"))


def test_user_supplied_names_homepage_and_files(tmp_path: Path) -> None:
    with pytest.raises(FlairsuiteError) as caught:
        list(fetch("conll03-de", tmp_path))
    message = str(caught.value)
    assert "not redistributable" in message and "https://www.clips.uantwerpen.be/conll2003/ner/" in message
    assert "deu.train (train), deu.testa (dev), deu.testb (test)" in message
    assert str(tmp_path / "conll03-de") in message


def test_raw_sources_without_recipe_name_their_provenance(tmp_path: Path) -> None:
    with pytest.raises(FlairsuiteError, match=r"raw-en: cannot rebuild automatically: 'eltec' .*raw_en_eltec/PROVENANCE.md"):
        list(fetch("raw-en", tmp_path))


def test_cli_user_supplied_is_one_error_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["corpora", "fetch", "conll03-en", "--corpora-dir", str(tmp_path)])
    assert result.exit_code != 0
    output = result.output.strip().splitlines()
    assert len(output) == 1 and output[0].startswith("Error: ") and "not redistributable" in output[0]


def test_subtract_sentences_is_a_multiset_difference() -> None:
    a, b, c = ((("A",), ("O",)), (("B",), ("O",)), (("B",), ("B-PER",)))
    assert list(subtract_sentences([a, b, a, c, a], [a, a, c, c])) == [b, a]


def conll_file(path: Path, sentences: list[list[str]]) -> str:
    """A `token tag` file of one-token sentences; its file:// URL."""
    path.write_text("".join(f"{token} O\n\n" for sentence in sentences for token in sentence))
    return path.as_uri()


def test_ler_train_falls_back_to_rebuilding(tmp_path: Path) -> None:
    court = conll_file(tmp_path / "court.conll", [["a", "b", "a", "c"]])
    minus = conll_file(tmp_path / "dev.conll", [["a", "c"]])
    ler = dataset("ler")
    train = replace(
        ler.splits["train"],
        url=(tmp_path / "gone.conll").as_uri(),
        derive_sources={"courts": [court], "minus": [minus]},
        derived_sha256=hashlib.sha256(b"b O\n\na O\n\n").hexdigest(),
    )
    [line] = fetch_spec(replace(ler, splits={"train": train}), tmp_path / "corpora")
    target = tmp_path / "corpora" / "ler" / "ler_train.reconstructed.conll.gz"
    assert line.startswith(f"ler train: rebuilt 2 sentences -> {target} (sha256 verified)")
    assert gzip.decompress(target.read_bytes()) == b"b O\n\na O\n\n"


@pytest.fixture(scope="module")
def ler_folder() -> Path:
    """The shared LER folder, or a skip when $FLAIRSUITE_CORPORA is unset."""
    if not os.environ.get("FLAIRSUITE_CORPORA"):
        pytest.skip("FLAIRSUITE_CORPORA is not set (the real LER court files are needed)")
    return Path(os.environ["FLAIRSUITE_CORPORA"]) / "ler"


@pytest.fixture(scope="module")
def ler_inputs(ler_folder: Path) -> tuple[list, list]:
    """All court sentences (in court order) and the official dev + test sentences."""
    courts = [s for court in COURTS for s in read_sentences(ler_folder / "courts" / f"{court}.conll.gz")]
    minus = [s for name in ("ler_dev.conll", "ler_test.conll") for s in read_sentences(ler_folder / name)]
    return courts, minus


def test_ler_train_reconstruction_on_real_files(ler_inputs: tuple[list, list], tmp_path: Path) -> None:
    records = ler_train_records(*ler_inputs)
    assert len(records) == 53_984
    assert write_gzip(records, tmp_path / "train.conll.gz") == LER_TRAIN_SHA256


def test_court_text_on_real_files(ler_inputs: tuple[list, list], tmp_path: Path) -> None:
    records = court_text_records(*ler_inputs)
    assert len(records) == 51_029
    assert write_gzip(records, tmp_path / "courts.txt.gz") == COURT_TEXT_SHA256
