"""train-charlm and train-fasttext take one typed request each (`CharlmRun`, `FastTextRun`): the commands build it from
their parsed options, an experiment's `adapt:` block builds it directly (no command line, no click context), and a bad
value is a one-line error naming its option."""

import re
from pathlib import Path

import pytest
from conftest import invoke, one_error_line

from flairsuite.charlm.settings import CharlmRun, Hyper
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.adaptation import charlm_run, fasttext_run
from flairsuite.experiments.adaptation_settings import Adaptation
from flairsuite.wordvectors.settings import FastTextRun

PACKAGE = Path(__file__).resolve().parent.parent / "flairsuite"
WHERE = {"out_dir": None, "force": False, "threads": None, "corpora_dir": None}  # the values without a default


def test_no_package_code_builds_a_click_context() -> None:
    """Library code takes requests, and the CLI calls it with them: no `make_context` to turn arguments into options."""
    callers = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if "make_context" in path.read_text(encoding="utf-8")]
    assert callers == []


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("values", "message"), [
    ({"direction": "sideways"}, '--direction must be one of: forward, backward, both (found "sideways")'),
    ({"threads": "2"}, '--threads must be a positive integer, or null for the cores other processes leave free (found "2")'),
    ({"resume": 1}, "--resume must be true or false (found 1)"),
    ({"corpus": ["a.txt"]}, '--corpus must be a list of file paths (found ["a.txt"])'),
    ({"heldout_fraction": 0.5}, "--heldout-fraction must be a share in (0, 0.5): valid and test take it each (found 0.5)"),
    ({"hyper": {"nlayers": 0}}, "--layers must be a positive integer (found 0)"),
    ({"hyper": {"hiden_size": 8}}, "unknown hyper-parameter 'hiden_size'. Did you mean hidden_size, batch_size?"),
])
def test_a_bad_charlm_run_is_one_line(values: dict, message: str) -> None:
    with pytest.raises(FlairsuiteError) as raised:
        CharlmRun(**{**WHERE, "resume": False, **values})
    assert one_line(raised) == message


@pytest.mark.parametrize(("values", "message"), [
    ({"keep_model": "yes"}, '--model must be true or false (found "yes")'),
    ({"lang": 3}, "--lang must be a string, or null for the --init vectors' (found 3)"),
    ({"config": {"dim": 0}}, "--dim must be a positive integer (found 0)"),
    ({"config": {"window": 3}}, "unknown fastText option 'window'. Known: dim, epochs, min_count, buckets."),
])
def test_a_bad_fasttext_run_is_one_line(values: dict, message: str) -> None:
    with pytest.raises(FlairsuiteError) as raised:
        FastTextRun(**{**WHERE, **values})
    assert one_line(raised) == message


def test_unknown_and_missing_options_are_one_line() -> None:
    with pytest.raises(FlairsuiteError) as raised:
        CharlmRun.from_options({**WHERE, "resume": False, "hiden_size": 8})
    assert one_line(raised).startswith("train-charlm: unknown option 'hiden_size'.")
    with pytest.raises(FlairsuiteError) as raised:
        FastTextRun.from_options({"force": False, "threads": None, "corpora_dir": None})
    assert one_line(raised) == "train-fasttext: missing key 'out_dir'"
    with pytest.raises(TypeError):  # keywords only: a run says what each value is
        CharlmRun(None, False, False, None, None)  # type: ignore[misc]


def parsed(command, args: list[str]) -> dict:
    """The options `command` parses from `args` (as click hands them to the command)."""
    return command.make_context(command.name, args).params


def test_the_adapt_block_asks_for_the_run_its_command_line_would_give(tmp_path: Path) -> None:
    """What `ensure_adapted` hands the trainers equals what the command line of before parsed into: the block's texts,
    excluded corpora, held-out share, budget, noise and passes, --resume or --force, threads and the datasets folder."""
    from flairsuite.cli.embedding_training import train_charlm, train_fasttext

    block = Adaptation(init="de", fasttext="de", texts=(tmp_path / "a.txt", tmp_path / "b.txt"), name="own", max_chars=4000, epochs=2,
                       heldout_fraction=0.2, exclude=("sturm",), noise="smlm:0.2")
    shared = ["--corpus", str(tmp_path / "a.txt"), "--corpus", str(tmp_path / "b.txt"), "--exclude", "sturm", "--heldout-fraction", "0.2",
              "--threads", "3", "--corpora-dir", "/corpora"]
    charlm = parsed(train_charlm, ["--init", "de", "--name", "own", "--out", str(tmp_path / "charlm"), "--resume", "--max-chars", "4000",
                                   "--noise", "smlm:0.2", *shared])
    given = CharlmRun.from_options(charlm)
    assert given.hyper == {"noise": "smlm:0.2", "noise_alphabet": ()}  # the option's default counts as given: Hyper's own
    expected = CharlmRun(**{**{key: getattr(given, key) for key in CharlmRun.keys()}, "hyper": {"noise": "smlm:0.2"}})
    assert charlm_run(block, tmp_path, True, 3, "/corpora") == expected and Hyper.noise_alphabet == ()
    vectors = parsed(train_fasttext, ["--init", "de", "--name", "own", "--out", str(tmp_path / "wordvectors"), "--force", "--epochs", "2",
                                      *shared])
    assert fasttext_run(block, tmp_path, 3, "/corpora") == FastTextRun.from_options(vectors)


def test_a_run_error_of_the_command_is_still_one_line(tmp_path: Path) -> None:
    assert one_error_line(invoke("train-charlm", "--out", str(tmp_path))) == "Error: --lang is needed (or --init with a model of train-charlm)"
    refused = invoke("train-fasttext", "--init", "de", "--name", "x", "--out", str(tmp_path))
    assert one_error_line(refused) == "Error: --init de needs --corpus: the text to continue the vectors on"
    assert re.search(r"--direction \[forward\|backward\|both\]\s+\[default: both\]", invoke("train-charlm", "--help").output)
