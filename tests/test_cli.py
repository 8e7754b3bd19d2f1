"""The `flairsuite` command line on fixture corpora: one-line errors, stats, list, help."""

import json
import os
import re

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file

from flairsuite.corpora.registry import names


def test_stats_bad_tag_is_one_error_line_with_file_and_line(sturm):
    root = sturm("Der O\nSturm B-pers\n\nHerwarth B-person\nWalden I-pers\n")
    line = one_error_line(run("corpora", "stats", "sturm", "--corpora-dir", str(root)))
    path = root / "sturm" / "train_sturm.conll"
    assert line == (
        f"Error: {path}:4: unknown entity type 'person' in tag 'B-person' (sturm types: pers place date)"
    )


@pytest.mark.parametrize(
    "train, line, message",
    [
        ("A O\nB\n", 2, "expected at least 2 whitespace-separated columns, found 1"),
        ("A O\n\n O\n", 3, "empty token"),
        (b"A O\nC\xe4sar O\n", 2, "not valid utf-8: byte 0xe4 at column 2"),
        ("A O\nB X-pers\n", 2, "ill-formed tag 'X-pers'"),
    ],
)
def test_stats_bad_input_is_one_error_line(sturm, train, line, message):
    root = sturm(train)
    error = one_error_line(run("corpora", "stats", "sturm", "--corpora-dir", str(root)))
    assert error.startswith(f"Error: {root / 'sturm' / 'train_sturm.conll'}:{line}: {message}")


def test_stats_missing_split_names_fetch_command(tmp_path):
    error = one_error_line(run("corpora", "stats", "germeval14", "--corpora-dir", str(tmp_path)))
    assert error.startswith("Error: germeval14: train split not found")
    assert "flairsuite corpora fetch germeval14" in error


def test_stats_unknown_dataset_suggests_close_match(tmp_path):
    error = one_error_line(run("corpora", "stats", "germeval", "--corpora-dir", str(tmp_path)))
    assert error == "Error: unknown dataset 'germeval'. Did you mean germeval14?"


def test_stats_unknown_dataset_without_close_match_lists_known(tmp_path):
    error = one_error_line(run("corpora", "stats", "qqqq", "--corpora-dir", str(tmp_path)))
    assert error.startswith("Error: unknown dataset 'qqqq'. Known: sturm, arendt,")


@pytest.mark.parametrize(
    "args, message",
    [
        (["sturm", "--level", "inner"], "Error: dataset 'sturm' has no option 'level' (its options: none)"),
        (["ler", "--granularity", "medium"], "Error: dataset 'ler': option granularity=medium is not one of: fine, coarse"),
        (["danish-ner", "--option", "size=5k"], "Error: dataset 'danish-ner' has no option 'size' (its options: train_size)"),
        (["danish-ner", "--option", "train_size"], "Error: option 'train_size' is not KEY=VALUE"),
    ],
)
def test_stats_unknown_option_is_one_error_line(tmp_path, args, message):
    assert one_error_line(run("corpora", "stats", *args, "--corpora-dir", str(tmp_path))) == message


def test_stats_prints_counts_and_repairs(sturm):
    root = sturm("Der O\nSturm I-pers\n\nBerlin B-place\n")
    result = run("corpora", "stats", "sturm", "--corpora-dir", str(root))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("sturm: Sturm")
    assert re.search(r"^train\s+train_sturm\.conll\s+2\s+3\s+2\s+1$", result.output, re.M)
    assert re.search(r"^dev\s+dev_sturm\.conll\s+1\s+3\s+1\s+0$", result.output, re.M)
    assert re.search(r"^pers\s+1\s+0\s+1$", result.output, re.M)
    assert "repairs made" in result.output
    assert re.search(r"^I-X after O -> B-X\s+1\s+0\s+0$", result.output, re.M)


def test_stats_without_repairs_has_no_repairs_table(sturm):
    result = run("corpora", "stats", "sturm", "--corpora-dir", str(sturm("A B-pers\n")))
    assert result.exit_code == 0, result.output
    assert "repairs made" not in result.output


def test_stats_splits_option_loads_only_those(write, tmp_path):
    write("germeval2014/NER-de-dev.tsv", "1\tBonn\tB-LOC\tO\n")
    write("germeval2014/NER-de-test.tsv", "#\tc\n1\tKöln\tB-LOC\tO\t\n\t\n1\tja\tO\tO\t\n")
    result = run("corpora", "stats", "germeval14", "--split", "dev,test", "--corpora-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "[level=outer]" in result.output.splitlines()[0]
    assert re.search(r"^test\s+NER-de-test\.tsv\s+2\s+2\s+1\s+0$", result.output, re.M)
    assert not re.search(r"^train\s", result.output, re.M)


def test_stats_option_value_reaches_the_loader(write, tmp_path):
    text = "1\tUni\tB-ORG\tO\n2\tBonn\tI-ORG\tB-LOC\n"
    for split in ("dev", "test"):
        write(f"germeval2014/NER-de-{split}.tsv", text)
    result = run("corpora", "stats", "germeval14", "--level", "inner", "--split", "dev,test", "--corpora-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "[level=inner]" in result.output
    assert re.search(r"^LOC\s+1\s+1$", result.output, re.M)
    assert re.search(r"^ORG\s+0\s+0$", result.output, re.M)


def test_list_shows_every_registry_name(tmp_path, sturm):
    root = sturm("A O\n")
    (root / "sturm" / "test_sturm.conll").unlink()
    result = run("corpora", "list", "--corpora-dir", str(root))
    assert result.exit_code == 0, result.output
    rows = result.output.splitlines()[2 : 2 + len(names())]
    first_words = [row.split()[0] for row in rows]
    assert first_words == names()
    assert {"sturm", "germeval14", "ler", "conll03-en", "dane", "cluener", "ud-en-ewt", "raw-de"} <= set(first_words)
    sturm_row = next(row for row in rows if row.split()[0] == "sturm")
    assert "train dev (missing: test)" in sturm_row
    assert result.output.splitlines()[2 + len(names()):] == [  # a fresh home: no reference tables yet, every language named
        f"reference tables in {os.environ['FLAIRSUITE_HOME']}/results (print one with `flairsuite results results/NAME`):",
        "  da: none yet", "  de: none yet", "  en: none yet", "  zh: none yet"]


def test_list_names_the_reference_tables_per_language(tmp_path, sturm, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    for experiment, corpus in (("t8", "sturm"), ("t8", "arendt"), ("en-t3", "wnut17"), ("mine", "letters")):
        write_file(home / "results" / experiment / corpus / "seed-1" / "metrics.json", json.dumps({"experiment": experiment, "corpus": corpus}))
    write_file(home / "results" / "broken" / "metrics.json", "{not json")  # one unreadable run never fails the listing
    result = run("corpora", "list", "--corpora-dir", str(sturm("A O\n")))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-5:] == [
        "  da: none yet", "  de: t8 (arendt sturm)", "  en: en-t3 (wnut17)", "  own: mine (letters)", "  zh: none yet"]
    # experiment files of a language without runs are named; one with runs, one on no registered corpus and a broken one are not
    write_file(home / "experiments" / "en-t3.yaml", "name: en-t3\ncorpora: [wnut17]\n")
    write_file(home / "experiments" / "da.yaml", "name: da-ner\ncorpora: [{name: danish-ner, dev_fraction: 0.1}]\n")
    write_file(home / "experiments" / "en-pos.yaml", "name: en-pos\ncorpora: [ud-en-ewt, {path: data/mine}]\n")
    write_file(home / "experiments" / "mine.yaml", "name: mine\ncorpora: [{path: data/letters}]\n")
    write_file(home / "experiments" / "broken.yaml", "name: [unclosed\n")
    result = run("corpora", "list", "--corpora-dir", str(sturm("A O\n")))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-5:] == [
        "  da: none yet; not run yet: experiments/da.yaml", "  de: t8 (arendt sturm)", "  en: en-t3 (wnut17); not run yet: experiments/en-pos.yaml",
        "  own: mine (letters)", "  zh: none yet"]


@pytest.mark.parametrize(
    "command, example",
    [
        ([], "flairsuite corpora list"),
        (["corpora"], "flairsuite corpora stats"),
        (["corpora", "list"], "flairsuite corpora list"),
        (["corpora", "stats"], "flairsuite corpora stats sturm"),
        (["corpora", "fetch"], "flairsuite corpora fetch sturm"),
    ],
)
def test_help_shows_an_example(command, example):
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert re.search(r"^\s*Examples?:$", result.output, re.M), result.output
    assert example in result.output


def option_names(*command: str) -> dict:
    """The options of a command by their long names."""
    import click

    from flairsuite.cli import cli

    found = cli
    for name in command:
        found = found.commands[name]
    return {long: option for option in found.params if isinstance(option, click.Option) for long in option.opts if long.startswith("--")}


COMPUTING = [("predict",), ("evaluate",), ("serve",), ("tag",), ("quickstart",), ("charlm-perplexity",), ("train-charlm",),
             ("train-fasttext",), ("train-bert",)]


@pytest.mark.parametrize("command", COMPUTING)
def test_every_computing_command_takes_threads(command):
    assert "--threads" in option_names(*command)


def test_one_spelling_for_formats_splits_and_shared_training_options():
    import click

    for command in [("corpora", "stats"), ("corpora", "check"), ("evaluate",), ("charlm-perplexity",)]:
        options = option_names(*command)
        assert "--input-format" in options and "--splits" not in options  # --format is an output format wherever it appears
    assert "--format" not in option_names("corpora", "stats") and "--split" in option_names("corpora", "stats")
    assert isinstance(option_names("corpora", "stats")["--input-format"].type, click.Choice)
    for command in [("predict",), ("evaluate",), ("results",)]:
        assert isinstance(option_names(*command)["--format"].type, click.Choice)
    charlm, bert = option_names("train-charlm"), option_names("train-bert")
    for name in set(charlm) & set(bert):
        assert type(charlm[name].type) is type(bert[name].type), name  # noqa: E721
    for name in ("--preset", "--precision"):
        assert isinstance(charlm[name].type, click.Choice) and isinstance(bert[name].type, click.Choice)
    for name in ("--objective", "--positions", "--attention"):
        assert isinstance(bert[name].type, click.Choice)
    assert isinstance(option_names("results")["--layout"].type, click.Choice)
    assert not {"--table3", "--table6", "--table8", "--table9", "--ablation"} & set(option_names("results"))


def test_a_bad_choice_names_the_choices():
    result = run("train-bert", "--lang", "de", "--objective", "mlm+xyz")
    assert result.exit_code == 2 and "Invalid value for '--objective': 'mlm+xyz' is not one of 'mlm', 'mlm+nsp', 'mlm+sop'" in result.output
    result = run("corpora", "stats", "data/letters/", "--input-format", "xml")
    assert result.exit_code == 2 and "Invalid value for '--input-format'" in result.output
