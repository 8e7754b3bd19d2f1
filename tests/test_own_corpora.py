"""Own corpora (flairsuite/corpora/own.py): a folder of files used exactly as a registered dataset.

Covers: column files with any whitespace (tab-separated BIOES), IOB1, CoNLL-U with `misc:NE`,
CLUENER-style JSON spans; the scheme rule of `scheme: auto`; files found by name or given; the
missing-splits rule (dev from `dev_fraction`, fixed and seeded, before any subsample; no test: an
error); bad lines as one-line `file:line` errors; the same tokens and spans as Flair's
`ColumnCorpus`; `corpora stats` / `corpora check` on a folder; one `flairsuite tag` run whose
metrics.json and fingerprint hold the files' checksums, label set, scheme and dev_fraction.
"""

import hashlib
import json
import logging
import re
from pathlib import Path

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file
from flair.datasets import ColumnCorpus

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import flair_corpus
from flairsuite.corpora.own import own_corpus
from flairsuite.corpora.stats import corpus_stats
from flairsuite.corpora.tags import SchemeEvidence
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.identity import fingerprint
from flairsuite.experiments.reading import load_experiment
from flairsuite.tagging.data import labeled_splits

# token TAB part of speech TAB BIOES tag: the tag is the last column (the default `label: -1`)
BIOES_TRAIN = """\
Herwarth\tNE\tB-pers
Walden\tNE\tE-pers
schrieb\tVVFIN\tO
aus\tAPPR\tO
Berlin\tNE\tS-place
.\t$.\tO

Am\tAPPR\tO
12.\tADJA\tB-date
März\tNN\tI-date
1914\tCARD\tE-date
"""
BIOES_DEV = "Else\tNE\tS-pers\nkam\tVVFIN\tO\n"
BIOES_TEST = "Nell\tNE\tS-pers\nin\tAPPR\tO\nParis\tNE\tS-place\n"
CONLLU = """\
# text = Anna wohnt in Wien.
1\tAnna\tAnna\tPROPN\tNE\t_\t2\tnsubj\t_\tNE=B-PER
2\twohnt\twohnen\tVERB\tVVFIN\t_\t0\troot\t_\tNE=O
3\tin\tin\tADP\tAPPR\t_\t4\tcase\t_\tNE=O
4\tWien\tWien\tPROPN\tNE\t_\t2\tobl\t_\tNE=B-LOC|SpaceAfter=No
5\t.\t.\tPUNCT\t$.\t_\t2\tpunct\t_\tNE=O

"""






def folder(root: Path, files: dict[str, str]) -> Path:
    """A corpus folder `root` holding `files` (name -> content)."""
    for name, content in files.items():
        write_file(root / name, content)
    return root


def bioes_folder(root: Path, **replace: str) -> Path:
    """The tab-separated BIOES folder: train.tsv, dev.tsv, test.tsv (any replaced by name=content)."""
    files = {"train.tsv": BIOES_TRAIN, "dev.tsv": BIOES_DEV, "test.tsv": BIOES_TEST}
    return folder(root, {**files, **{f"{name}.tsv": text for name, text in replace.items()}})


def tagged(data) -> list[tuple[list[str], list[str]]]:
    return [(s.tokens, s.tags) for s in data.sentences]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- formats and schemes -----------------------------------------------------------------------


def test_tab_separated_bioes_folder_is_read_as_bio(tmp_path):
    spec = own_corpus({"name": "letters", "path": "letters"}, bioes_folder(tmp_path / "letters").parent)
    assert (spec.name, spec.format.kind, spec.format.sep, spec.format.text, spec.format.label) == ("letters", "column", "whitespace", 0, -1)
    assert spec.format.scheme == "bioes" and spec.scheme_rule == "auto: 6 E-/S- tags"
    assert spec.types == ("date", "pers", "place")
    data = read_splits(spec, tmp_path)
    assert list(data) == ["train", "dev", "test"]
    assert tagged(data["train"]) == [
        (["Herwarth", "Walden", "schrieb", "aus", "Berlin", "."], ["B-pers", "I-pers", "O", "O", "B-place", "O"]),
        (["Am", "12.", "März", "1914"], ["O", "B-date", "I-date", "I-date"]),
    ]
    assert tagged(data["test"]) == [(["Nell", "in", "Paris"], ["B-pers", "O", "B-place"])]
    assert not any(part.repairs for part in data.values())


def test_iob1_is_detected_and_converted_without_repairs(tmp_path):
    text = "Anna I-PER\nKarl B-PER\nsah O\nWien I-LOC\n"
    root = folder(tmp_path / "c", {"c_train.txt": text, "c_dev.txt": "Otto I-PER\n", "c_test.txt": "Else I-PER\nin O\nRom I-LOC\n"})
    spec = own_corpus({"path": str(root)}, tmp_path)
    assert spec.name == "c" and spec.format.scheme == "iob1"
    assert spec.scheme_rule == "auto: 5 entities start with I-, 1 with B-"
    data = read_splits(spec, tmp_path)
    assert tagged(data["train"]) == [(["Anna", "Karl", "sah", "Wien"], ["B-PER", "B-PER", "O", "B-LOC"])]
    assert sum(sum(part.repairs.values()) for part in data.values()) == 0


def test_bio_with_stray_i_is_detected_as_bio_and_repaired_by_the_rule(tmp_path):
    root = folder(tmp_path / "c", {"train": "A B-x\nB I-x\nC O\nD I-x\n", "dev": "E B-y\n", "test": "F B-x\nG B-y\n"})
    spec = own_corpus({"path": "c"}, tmp_path)
    assert spec.format.scheme == "bio" and spec.scheme_rule == "auto: 1 entities start with I-, 4 with B-"
    train = read_splits(spec, root)["train"]
    assert train.sentences[0].tags == ["B-x", "I-x", "O", "B-x"]
    assert dict(train.repairs) == {"I-X after O -> B-X": 1}


@pytest.mark.parametrize(
    "sentences, scheme",
    [
        ([["B-a", "E-a"]], "bioes"),
        ([["S-a"], ["O", "B-a", "I-a"]], "bioes"),
        ([["I-a", "I-a", "B-a"], ["I-b"]], "iob1"),
        ([["B-a", "I-a"], ["I-b"]], "bio"),
        ([["I-a"], ["B-a"]], "bio"),  # a tie is BIO
        ([["O", "O"]], "bio"),
    ],
)
def test_scheme_rule(sentences, scheme):
    evidence = SchemeEvidence()
    for tags in sentences:
        evidence.add(tags)
    assert evidence.scheme()[0] == scheme


def test_given_scheme_overrides_detection(tmp_path):
    root = folder(tmp_path / "c", {"train": "A I-x\nB I-x\n\nC I-x\n", "dev": "D I-x\n", "test": "E I-x\n"})
    detected = read_splits(own_corpus({"path": "c"}, tmp_path), root)["train"]
    given = read_splits(own_corpus({"path": "c", "scheme": "bio"}, tmp_path), root)["train"]
    assert detected.sentences[0].tags == given.sentences[0].tags == ["B-x", "I-x"]
    assert sum(detected.repairs.values()) == 0 and dict(given.repairs) == {"I-X after start -> B-X": 2}


def test_conllu_with_misc_ne(tmp_path):
    root = folder(tmp_path / "ud", {f"de-ud-{split}.conllu": CONLLU for split in ("train", "dev", "test")})
    spec = own_corpus({"path": "ud", "format": "conllu", "label": "misc:NE"}, tmp_path)
    assert spec.types == ("LOC", "PER") and spec.format.scheme == "bio"
    (sentence,) = read_splits(spec, root)["dev"].sentences
    assert (sentence.tokens, sentence.tags) == (["Anna", "wohnt", "in", "Wien", "."], ["B-PER", "O", "O", "B-LOC", "O"])
    assert sentence.whitespace_after == [True, True, True, False, True]
    with pytest.raises(InputError, match=re.escape(f"{root / 'de-ud-train.conllu'}:2: ill-formed tag 'NE'")):
        own_corpus({"path": "ud", "format": "conllu", "label": 4}, tmp_path)  # a column by number: XPOS tags are no BIO tags


def test_conllu_needs_a_label_and_a_misc_key_some_token_has(tmp_path):
    folder(tmp_path / "ud", {f"{split}.conllu": CONLLU for split in ("train", "dev", "test")})
    with pytest.raises(FlairsuiteError, match="label: format conllu needs the tag column"):
        own_corpus({"path": "ud", "format": "conllu"}, tmp_path)
    with pytest.raises(FlairsuiteError, match=re.escape("train.conllu, dev.conllu, test.conllu: no entity tag at all, only O; tags are read "
                                                        "from column misc:NER")):  # no token has NER=: each is O, so none is an entity
        own_corpus({"path": "ud", "format": "conllu", "label": "misc:NER"}, tmp_path)


def test_json_spans(tmp_path):
    line = json.dumps({"text": "Anna in Wien", "label": {"PER": {"Anna": [[0, 3]]}, "LOC": {"Wien": [[8, 11]]}}}, ensure_ascii=False)
    root = folder(tmp_path / "zh", {name: line + "\n" for name in ("train.json", "valid.json", "test.json")})
    spec = own_corpus({"path": "zh", "format": "spans_json"}, tmp_path)
    assert spec.types == ("LOC", "PER") and spec.format.scheme == "bio"
    data = read_splits(spec, root)
    assert data["dev"].path.name == "valid.json"
    (sentence,) = data["test"].sentences
    assert "".join(sentence.tokens) == "AnnainWien"
    assert sentence.tags == ["B-PER", "I-PER", "I-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "I-LOC", "I-LOC"]


# --- files and splits ----------------------------------------------------------------------------


def test_files_can_be_named_and_a_separator_given(tmp_path):
    root = folder(tmp_path / "c", {"a.txt": "A;x;B-p\n", "b.txt": "B;x;B-p\n", "c.txt": "C;x;O\nD;x;B-q\n"})
    entry = {"path": "c", "train": "a.txt", "dev": "b.txt", "test": "c.txt", "sep": "tab"}
    with pytest.raises(InputError, match=re.escape(f"{root / 'a.txt'}:1: expected at least 2 tab-separated columns, found 1")):
        own_corpus(entry, tmp_path)
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text((root / name).read_text().replace(";", "\t"))
    spec = own_corpus(entry, tmp_path)
    assert {split: Path(file.files[0]).name for split, file in spec.splits.items()} == {"train": "a.txt", "dev": "b.txt", "test": "c.txt"}
    assert read_splits(spec, root)["test"].sentences[0].tags == ["O", "B-q"]


@pytest.mark.parametrize(
    "files, entry, message",
    [
        ({"train.tsv": "A B-x\n", "dev.tsv": "A B-x\n"}, {}, "no test file (no file name holds 'test'): add one or name it with `test: FILE`"),
        ({"train.tsv": "A B-x\n", "dev.tsv": "A B-x\n"}, {"dev_fraction": 0.1}, "no test file"),
        ({"train.tsv": "A B-x\n", "test.tsv": "A B-x\n"}, {}, "no dev file (no file name holds 'dev' or 'valid'): add one, name it with "
         "`dev: FILE`, or take a fixed share of train with `dev_fraction: 0.1`"),
        ({"dev.tsv": "A B-x\n", "test.tsv": "A B-x\n"}, {}, "no train file"),
        ({"train.tsv": "A B-x\n", "dev.tsv": "A B-x\n", "test.tsv": "A B-x\n"}, {"dev_fraction": 0.1},
         "dev_fraction takes dev from train, but dev.tsv is a dev file: drop one of the two"),
        ({"train.tsv": "A B-x\n", "train.old": "A B-x\n", "dev.tsv": "A B-x\n", "test.tsv": "A B-x\n"}, {},
         "2 files could be the train split (train.old, train.tsv): name one with `train: FILE`"),
        ({"train.tsv": "A O\n", "dev.tsv": "A O\n", "test.tsv": "A O\n"}, {}, "no entity tag at all, only O; tags are read from column -1"),
    ],
)
def test_missing_or_ambiguous_splits_are_errors(tmp_path, files, entry, message):
    folder(tmp_path / "c", files)
    with pytest.raises(FlairsuiteError, match=re.escape(message)):
        own_corpus({"path": "c", **entry}, tmp_path)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"fromat": "column"}, "unknown key 'fromat'. Did you mean format?"),
        ({"scheme": "bilou"}, 'c: scheme: "bilou" is not one of auto, bio, iob1, bioes'),
        ({"label": "last"}, "train.tsv:1: label: no column named 'last' in the header line (its cells: Herwarth NE B-pers)"),
        ({"label": 2.5}, "c: label: 2.5 is not a column number (0 is the first, -1 the last) nor a header's column name"),
        ({"text": 1, "label": 1}, "c: text and label are the same column (1)"),
        ({"format": "spans_json", "sep": "tab"}, "c: sep: applies to format column only, not to spans_json"),
        ({"dev_fraction": 1}, "c: dev_fraction must be a share of train in (0, 1), e.g. 0.1 (found 1)"),
        ({"name": "sturm"}, "name: 'sturm' is a registered dataset"),
        ({"path": "nowhere"}, "nowhere: no such folder"),
    ],
)
def test_bad_entries_are_one_line_errors(tmp_path, entry, message):
    bioes_folder(tmp_path / "c")
    with pytest.raises(FlairsuiteError, match=re.escape(message)):
        own_corpus({"path": "c", **entry}, tmp_path)


def test_dev_fraction_is_a_fixed_seeded_share_of_train_taken_before_subsample(tmp_path):
    train = "\n".join(f"Wort{i} B-x\nund O\n" for i in range(20))
    root = folder(tmp_path / "c", {"train.tsv": train, "test.tsv": "A B-x\n"})
    spec = own_corpus({"path": "c", "dev_fraction": 0.25}, tmp_path)
    first, again = read_splits(spec, root), read_splits(own_corpus({"path": "c", "dev_fraction": 0.25}, tmp_path), root)
    words = {split: [s.tokens[0] for s in first[split].sentences] for split in ("train", "dev")}
    assert len(words["dev"]) == 5 and len(words["train"]) == 15
    assert sorted(words["dev"] + words["train"], key=lambda w: int(w[4:])) == [f"Wort{i}" for i in range(20)]
    assert words == {split: [s.tokens[0] for s in again[split].sentences] for split in ("train", "dev")}
    assert words["dev"] != [f"Wort{i}" for i in range(5)]  # a sample, not the head of the file
    assert first["dev"].source == "train.tsv (25% sample, seed 1)"
    # the subsample is taken from what dev left: dev stays the same, train shrinks
    subsampled = labeled_splits(spec, 0.4, tmp_path)
    assert [texts[0] for texts in subsampled["dev"].texts] == words["dev"]
    assert len(subsampled["train"]) == 6 and {texts[0] for texts in subsampled["train"].texts} <= set(words["train"])
    assert list(read_splits(spec, root, ["dev"])) == ["dev"]


# --- bad lines ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "replace, line, message",
    [
        ({"train": "A\tO\nB\tX-pers\n"}, 2, "ill-formed tag 'X-pers' (expected O, B-TYPE, I-TYPE, E-TYPE or S-TYPE); tags are read from column -1 (`label:`)"),
        ({"dev": "A\tO\nB\n"}, 2, "expected at least 2 whitespace-separated columns, found 1"),
        ({"test": "A\tO\n\tO\n"}, 2, "empty token"),
        ({"train": b"A O\nC\xe4sar O\n"}, 2, "not valid utf-8: byte 0xe4 at column 2"),
    ],
)
def test_bad_lines_are_one_line_file_line_errors(tmp_path, replace, line, message):
    root = bioes_folder(tmp_path / "c", **{split: text for split, text in replace.items() if isinstance(text, str)})
    for split, content in replace.items():
        if isinstance(content, bytes):
            (root / f"{split}.tsv").write_bytes(content)
    split = next(iter(replace))
    for command in ("check", "stats"):
        error = one_error_line(run("corpora", command, str(root)))
        assert error == f"Error: {root / f'{split}.tsv'}:{line}: {message}"


def test_given_scheme_that_the_tags_break_is_an_error_at_the_line(tmp_path):
    root = bioes_folder(tmp_path / "c")
    error = one_error_line(run("corpora", "check", str(root), "--scheme", "bio"))
    assert error == f"Error: {root / 'train.tsv'}:2: tag 'E-pers' is BIOES, but the corpus says scheme: bio: use scheme: bioes or auto"


# --- Flair's ColumnCorpus -----------------------------------------------------------------------


def test_same_tokens_and_spans_as_flairs_column_corpus_on_bio_files(tmp_path):
    files = {
        "train.txt": "Herwarth\tNE\tB-pers\nWalden\tNE\tI-pers\nin  APPR O\nBerlin NE\tB-place\n\n"
                     "Am APPR O\n12.\tADJA I-date\nMärz NN I-date\nFranz NE I-pers\n\nnichts PIS O\n",
        "dev.txt": "Marc NE B-pers\nMarc NE B-pers\nKöln NE I-place\n",
        "test.txt": "Else NE B-pers\nLasker-Schüler NE I-pers\n,\t$,\tO\n\nWien NE B-place\n",
    }
    root = folder(tmp_path / "c", files)
    ours = flair_corpus(own_corpus({"path": "c"}, tmp_path), tmp_path)
    flairs = ColumnCorpus(root, {0: "text", 2: "ner"}, train_file="train.txt", dev_file="dev.txt", test_file="test.txt",
                          sample_missing_splits=False)

    def view(dataset):
        return [([t.text for t in s], [(sp.tokens[0].idx, sp.tokens[-1].idx, sp.get_label("ner").value) for sp in s.get_spans("ner")])
                for s in dataset]

    for split in ("train", "dev", "test"):
        assert view(getattr(ours, split)) == view(getattr(flairs, split)), split
    assert view(ours.train)[1][1] == [(2, 3, "date"), (4, 4, "pers")]  # stray I- start entities, as in Flair


# --- the command line ---------------------------------------------------------------------------


def test_stats_on_a_folder_prints_the_scheme_and_the_tables(tmp_path):
    root = bioes_folder(tmp_path / "letters")
    result = run("corpora", "stats", str(root))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"letters: own corpus in {root}"
    assert lines[1] == "scheme: bioes (auto: 6 E-/S- tags), read as BIO; types: date pers place"
    assert re.search(r"^train\s+train\.tsv\s+2\s+10\s+3\s+0$", result.output, re.M)
    assert re.search(r"^test\s+test\.tsv\s+1\s+3\s+2\s+0$", result.output, re.M)
    assert re.search(r"^pers\s+1\s+1\s+1$", result.output, re.M)
    (root / "dev.tsv").unlink()
    sampled = run("corpora", "stats", str(root), "--dev-fraction", "0.5", "--option", "name=briefe")
    assert sampled.exit_code == 0, sampled.output
    assert sampled.output.splitlines()[1].endswith("; dev: 50% of train")
    assert re.search(r"^dev\s+train\.tsv \(50% sample, seed 1\)\s+1\s", sampled.output, re.M)


def test_check_on_a_folder_and_on_a_registered_name(tmp_path, sturm):
    root = bioes_folder(tmp_path / "letters")
    result = run("corpora", "check", str(root), "--sep", "tab", "--label", "2")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-2:] == ["test: test.tsv: 1 sentences, 3 tokens, 0 repairs", "ok: letters"]
    corpora = sturm("A B-pers\n")
    registered = run("corpora", "check", "sturm", "--corpora-dir", str(corpora))
    assert registered.exit_code == 0 and registered.output.splitlines()[-1] == "ok: sturm", registered.output


def test_check_stops_at_an_empty_split_and_warns_of_types_train_lacks(tmp_path):
    """An empty file is an error (a tagger can neither learn nor be scored on it); a type only dev or test holds is a
    warning naming its first line (legal, but no tagger can learn it: often a typo)."""
    empty = bioes_folder(tmp_path / "empty", train="# only a comment line\n\n")
    assert one_error_line(run("corpora", "check", str(empty), "--option", "comment=#")) == (
        f"Error: {empty / 'train.tsv'}: the train split of empty holds no sentences")
    odd = bioes_folder(tmp_path / "odd", test="Nell\tNE\tS-pers\n\nParis\tNE\tS-plcae\n")
    result = run("corpora", "check", str(odd))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-2:] == [
        f"warning: {odd / 'test.tsv'}:3: type 'plcae' of test never occurs in train: no tagger can learn it", "ok: odd"]
    assert "warning" not in run("corpora", "check", str(bioes_folder(tmp_path / "fine"))).output


def test_tag_data_warns_of_types_train_lacks(tmp_path, caplog):
    """The data a tagger trains on gives the same warning as `corpora check`, so `flairsuite tag` does not train on a typo unsaid."""
    odd = bioes_folder(tmp_path / "odd", test="Nell\tNE\tS-pers\n\nParis\tNE\tS-plcae\n")
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        labeled_splits(own_corpus({"path": "odd"}, tmp_path), None, tmp_path)
    assert [r.getMessage() for r in caplog.records] == [
        f"{odd / 'test.tsv'}:3: type 'plcae' of test never occurs in train: no tagger can learn it"]
    caplog.clear()
    bioes_folder(tmp_path / "fine")
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        labeled_splits(own_corpus({"path": "fine"}, tmp_path), None, tmp_path)
    assert caplog.records == []


def test_a_single_file_too_short_to_split_by_sentence_is_one_error_line(tmp_path, monkeypatch):
    write_file(tmp_path / "letters.tsv", BIOES_TRAIN)  # 2 sentences: a single file is split by sentence, and needs 3
    monkeypatch.chdir(tmp_path)
    message = (f"Error: {tmp_path / 'letters.tsv'}: 2 sentences: too few to split into train, dev and test (a corpus without "
               "train/dev/test files is split by document, or by sentence)")
    assert one_error_line(run("corpora", "check", "letters.tsv")) == message
    assert one_error_line(run("corpora", "check", "./letters.tsv")) == message


def test_folder_options_and_registry_options_do_not_mix(tmp_path):
    root = bioes_folder(tmp_path / "letters")
    assert one_error_line(run("corpora", "stats", "sturm", "--input-format", "conllu")) == (
        "Error: --input-format is for a corpus folder, and 'sturm' is a registered dataset (for a folder of that name: ./sturm)"
    )
    assert one_error_line(run("corpora", "check", str(root), "--level", "inner")) == (
        f"Error: --level is an option of registered datasets; {root} is a corpus folder"
    )


# --- experiments and `flairsuite tag` -------------------------------------------------------------


def letters_corpus(root: Path) -> Path:
    """A tab-separated BIOES folder without dev file: 16 train and 4 test sentences."""
    names, places = ("Anna", "Karl", "Marie", "Otto"), ("Berlin", "Wien", "Köln", "Paris")
    sentences = [f"{n}\tS-pers\nschrieb\tO\naus\tO\n{p}\tS-place\n.\tO\n" for n in names for p in places]
    write_file(root / "train.tsv", "\n".join(sentences))
    write_file(root / "test.tsv", "\n".join(["Herwarth\tB-pers\nWalden\tE-pers\nin\tO\nBerlin\tS-place\n"] * 4))
    return root


def experiment(path: Path, corpus: str) -> Path:
    return write_file(path, f"name: letters\ncorpora: [{corpus}]\nembeddings: {{char: [char]}}\ntaggers: [map]\nseeds: [1]\n"
                            "train: {max_epochs: 1, mini_batch_size: 4}\n")


def test_experiment_fingerprint_follows_the_files_and_paths_resolve_from_the_experiment_file(tmp_path, monkeypatch):
    letters_corpus(tmp_path / "data" / "letters")
    path = experiment(tmp_path / "letters.yaml", "{name: letters, path: data/letters/, dev_fraction: 0.25}")
    monkeypatch.chdir(tmp_path / "data")  # elsewhere: the path is the experiment file's
    config = load_experiment(path)
    (corpus,) = config.corpora
    assert (corpus.name, corpus.key, corpus.label, corpus.options) == ("letters", "letters", "letters", {})
    before = fingerprint(config)
    assert fingerprint(load_experiment(path)) == before
    write_file(tmp_path / "data" / "letters" / "test.tsv", "Else\tS-pers\n")
    changed_file = fingerprint(load_experiment(path))
    experiment(path, "{name: letters, path: data/letters/, dev_fraction: 0.5}")
    changed_fraction = fingerprint(load_experiment(path))
    assert len({before, changed_file, changed_fraction}) == 3



def test_an_experiment_names_the_train_file_by_a_string_and_sets_training_by_a_mapping(tmp_path):
    """In an own corpus's entry `train: FILE` names the train file, as `dev:` and `test:` do; `train: {...}` stays the
    corpus's training overrides, as for a registered set."""
    root = letters_corpus(tmp_path / "letters")
    write_file(root / "older.tsv", "Else\tS-pers\n")  # another file in the folder: not read
    (root / "train.tsv").rename(root / "letters-2024.tsv")
    path = experiment(tmp_path / "x.yaml", "{path: letters, train: letters-2024.tsv, dev_fraction: 0.25}")
    (corpus,) = load_experiment(path).corpora
    assert Path(corpus.own.splits["train"].files[0]).name == "letters-2024.tsv" and corpus.train == {}
    experiment(path, "{path: letters, train: {max_epochs: 3}, dev_fraction: 0.25}")
    with pytest.raises(FlairsuiteError, match="no train file"):  # found by name only: none holds 'train' now
        load_experiment(path)
    (root / "letters-2024.tsv").rename(root / "train.tsv")
    (corpus,) = load_experiment(path).corpora
    assert Path(corpus.own.splits["train"].files[0]).name == "train.tsv" and corpus.train == {"max_epochs": 3}


@pytest.mark.parametrize(
    "corpora, first, second",
    [
        ("{path: letters, name: x, subsample: 0.5, dev_fraction: 0.25}, {path: letters, name: x-50pct, dev_fraction: 0.25}",
         "x (50% train)", "x-50pct"),
        ("{name: sturm, subsample: 0.5}, {path: letters, name: sturm-50pct, dev_fraction: 0.25}", "sturm (50% train)", "sturm-50pct"),
    ],
)
def test_two_corpora_that_would_share_a_run_folder_are_an_error(tmp_path, corpora, first, second):
    letters_corpus(tmp_path / "letters")
    path = experiment(tmp_path / "x.yaml", corpora)
    with pytest.raises(FlairsuiteError) as info:
        load_experiment(path)
    assert str(info.value) == (
        f"{path}: corpora: '{first}' and '{second}' would share the run folder '{second}': give the own corpus another name"
    )


def test_experiment_errors_name_the_experiment_file_or_the_bad_line(tmp_path):
    root = letters_corpus(tmp_path / "letters")
    path = experiment(tmp_path / "x.yaml", "{path: letters}")
    with pytest.raises(FlairsuiteError) as missing_dev:
        load_experiment(path)
    assert str(missing_dev.value).startswith(f"{path}: corpora: {root}: no dev file")
    write_file(root / "dev.tsv", "A\tS-pers\nB\tQ-pers\n")
    with pytest.raises(InputError) as bad_line:
        load_experiment(path)
    assert str(bad_line.value).startswith(f"{root / 'dev.tsv'}:2: ill-formed tag 'Q-pers'")


def test_tag_runs_an_experiment_on_an_own_corpus(tmp_path, monkeypatch):
    home, root = tmp_path / "home", letters_corpus(tmp_path / "data" / "letters")
    path = experiment(tmp_path / "letters.yaml", "{name: letters, path: data/letters/, dev_fraction: 0.25}")
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    result = run("tag", str(path), "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "letters: 1 runs, 0 finished before, 1 to train" in result.output
    assert re.search(r"^\| char\s+\| map\s+\|\s*(\*\*)?\d+\.\d\d ± – \(1\)(\*\*)?\s*\|$", result.output, re.M), result.output
    assert re.search(r"\|\s*letters\s*\|", result.output)

    metrics = json.loads((home / "results" / "letters" / "letters" / "char" / "map" / "seed-1" / "metrics.json").read_text())
    assert metrics["corpus"] == "letters" and metrics["corpus_label"] == "letters" and metrics["corpus_folder"] == str(root)
    assert metrics["corpus_files"] == {
        "format": {"kind": "column", "sep": "whitespace", "text": 0, "label": -1, "comment": None, "docstart": "-DOCSTART-"},
        "encoding": "utf-8",
        "scheme": "bioes",
        "labels": ["pers", "place"],
        "files": {split: {"file": f"{split}.tsv", "sha256": sha256(root / f"{split}.tsv")} for split in ("train", "test")},
        "dev_fraction": 0.25,
    }
    assert {name: s["support"] for name, s in metrics["test"]["per_type"].items()} == {"pers": 4, "place": 4} and metrics["epochs"] == 1

    # the same files: finished; a changed file: the run is stale, as for a changed setting
    assert "1 finished before, 0 to train" in run("tag", str(path), "--threads", "1").output
    write_file(root / "test.tsv", "Else\tS-pers\n")
    assert one_error_line(run("tag", str(path), "--threads", "1")) == (
        f"Error: {home / 'results' / 'letters'} holds runs of a different 'letters' config: pass --force to retrain what changed, or choose a new name"
    )


def test_corpus_stats_counts_an_own_corpus_as_a_registered_one(tmp_path):
    root = bioes_folder(tmp_path / "c")
    stats = corpus_stats(own_corpus({"path": "c"}, tmp_path), root)
    assert stats.summary.loc["train", "entities"] == 3 and stats.summary.loc["dev", "tokens"] == 2
    assert stats.types.to_dict() == {"train": {"date": 1, "pers": 1, "place": 1}, "dev": {"date": 0, "pers": 1, "place": 0},
                                      "test": {"date": 0, "pers": 1, "place": 1}}
