"""Shared helpers for the unit tests: tiny fixture files written into tmp_path."""

import gzip
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, Union

import pytest
from click.testing import CliRunner

XDIST_ONE_THREAD = bool(os.environ.get("PYTEST_XDIST_WORKER")) and os.environ.get("FLAIRSUITE_TEST_THREADS") != "torch"


def one_torch_thread() -> None:
    """One torch thread in this process where pytest-xdist runs two workers side by side.

    Two torch threads meet after every small operation; with the other worker busy on the other core, each meeting
    waits for the thread whose core is taken (the reason for the suite's thread rule, flairsuite/runtime/threads.py).
    Set before each module's fixtures and before each test, since a command invoked in this process (CliRunner) applies
    the rule and keeps its count. A test that wants another count sets it itself; commands in a subprocess apply the
    rule as a user's do.
    """
    if XDIST_ONE_THREAD:
        import torch

        from flairsuite.runtime import threads

        torch.set_num_threads(1)
        threads.CHOICE.ruling = False  # nor does the rule look again later in this process (`threads.recheck`)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread_for_module_fixtures() -> None:
    one_torch_thread()


@pytest.fixture(autouse=True)
def one_torch_thread_for_each_test() -> None:
    one_torch_thread()


@pytest.fixture(autouse=True)
def separate_home(tmp_path_factory, monkeypatch) -> None:
    """Every test (and every process it starts) gets its own $FLAIRSUITE_HOME: nothing lands in the checkout."""
    monkeypatch.setenv("FLAIRSUITE_HOME", str(tmp_path_factory.mktemp("home")))


def write_file(path: Path, content: Union[str, bytes], compress: bool = False) -> Path:
    """Write `content` (str as UTF-8, or raw bytes) to `path`, gzip-compressed if asked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """`write("sturm/train_sturm.conll", "A O\\n")` -> the path of that file below tmp_path."""

    def _write(relative: str, content: Union[str, bytes], compress: bool = False) -> Path:
        return write_file(tmp_path / relative, content, compress)

    return _write


STURM_DEV = "Berlin B-place\nist O\nschön O\n"
STURM_TEST = "Walden B-pers\nschrieb O\n"


@pytest.fixture
def sturm(tmp_path: Path, write: Callable[..., Path]) -> Callable[..., Path]:
    """Lay out a `sturm` folder; `sturm(train="...")` gives that train file and small dev/test files."""

    def _sturm(train: Union[str, bytes], dev: Union[str, bytes] = STURM_DEV, test: Union[str, bytes] = STURM_TEST) -> Path:
        write("sturm/train_sturm.conll", train)
        write("sturm/dev_sturm.conll", dev)
        write("sturm/test_sturm.conll", test)
        return tmp_path

    return _sturm


NAMES = ("Anna", "Karl", "Marie", "Otto", "Else")
PLACES = ("Berlin", "München", "Hamburg", "Wien", "Köln")
VERBS = ("besuchte", "verließ", "erreichte", "liebte")
DAYS = ("Montag", "Dienstag", "Freitag", "Sonntag")


def german_text(documents: int = 300) -> str:
    """`documents` short German sentences from one template, one per line (every word in every split)."""
    lines = []
    for i in range(documents):
        day, verb, name, place = DAYS[i % 4], VERBS[i // 4 % 4], NAMES[i % 5], PLACES[i // 5 % 5]
        lines.append(f"Am {day} {verb} {name} die Stadt {place}, sagte der König vor Gericht.")
    return "\n".join(lines) + "\n"


# a tiny corpus of letters, a sentence per string, a tagged word as `word/TAG` (`tagged_conll` writes it): active learning,
# self-training
LETTERS_TRAIN = [
    "Am Montag/B-date kam Anna/B-pers nach Berlin/B-place .",
    "Karl/B-pers schrieb aus Wien/B-place .",
    "Lieber Herwarth/B-pers Walden/I-pers , herzlichen Dank !",
    "Der Brief blieb liegen .",
    "Am Freitag/B-date reiste Marie/B-pers nach Hamburg/B-place .",
    "Otto/B-pers wohnte in München/B-place .",
    "Liebe Else/B-pers Lasker-Schüler/I-pers , ich danke Ihnen sehr .",
    "Die Ausstellung ist geschlossen .",
]
LETTERS_DEV = ["Am Montag/B-date kam Else/B-pers nach Paris/B-place .", "Lieber Otto/B-pers , herzlichen Dank !"]
LETTERS_TEST = ["Am Sonntag/B-date kam Karl/B-pers nach Hamburg/B-place .", "Das Heft blieb in Wien/B-place ."]


def tagged_conll(lines: list[str]) -> str:
    """Sentences written `word/TAG` for a tagged word (`Karl/B-pers schrieb .`) as a two-column CoNLL file, the other words `O`."""
    return "\n\n".join("\n".join(" ".join(w.rsplit("/", 1)) if "/" in w[1:] else f"{w} O" for w in line.split()) for line in lines) + "\n"


TINY_CHARLM = ["--hidden-size", "16", "--batch-size", "10", "--sequence-length", "50", "--max-chars", "5000", "--valid-chars", "2000"]
TINY_FASTTEXT = ["--dim", "16", "--epochs", "1", "--min-count", "1", "--buckets", "1000", "--threads", "1"]


def train_tiny_embeddings(root: Path, charlm_direction: str = "forward", fasttext: bool = False) -> Path:
    """Train tiny character LMs (`charlm/de-<direction>`, direction forward, backward or both; hidden size 16)
    and optionally tiny fastText vectors (`wordvectors/de-fasttext`, dim 16) by the CLI on `german_text()`;
    returns the home folder `root/home` that holds them (a few seconds on one core)."""
    from flairsuite.cli import cli

    corpus = str(write_file(root / "corpus.txt", german_text()))
    common = ["--lang", "de", "--corpus", corpus, "--heldout-fraction", "0.2", "--corpora-dir", str(root)]
    commands = [["train-charlm", "--direction", charlm_direction, *TINY_CHARLM]] + ([["train-fasttext", *TINY_FASTTEXT]] if fasttext else [])
    for command in commands:
        result = CliRunner().invoke(cli, command + common, env={"FLAIRSUITE_HOME": str(root / "home")}, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return root / "home"


def invoke(*args: str):
    """Run the `flairsuite` command line in-process (click's runner); exceptions propagate."""
    from flairsuite.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def one_error_line(result) -> str:
    """The single `Error: ...` line of a failed command (exit status 1, nothing else, no traceback)."""
    lines = result.output.strip("\n").splitlines()
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert lines[0].startswith("Error: ") and "Traceback" not in result.output
    return lines[0]


REPO = Path(__file__).resolve().parent.parent
# own corpora and texts that committed experiments derive from the shared datasets: path below the repository -> the build
# script and its arguments, run in the repository's root
DERIVED_CORPORA = {
    "corpora/ler-courts-ordered": ["experiments/ler_courts_ordered.py"],
    "corpora/ajmc-de-train.txt": ["experiments/ajmc_train_text.py"],
    "corpora/sturm-train.txt": ["experiments/train_text.py", "sturm", "corpora/sturm-train.txt"],
}


def provide_derived_corpora(experiment: Path) -> None:
    """Build the derived corpora `experiment` names (DERIVED_CORPORA) from $FLAIRSUITE_CORPORA, once, under a lock
    (xdist workers); skip the test with the reason where the datasets are not there."""
    import fcntl
    import os
    import subprocess
    import sys

    text = experiment.read_text(encoding="utf-8")
    for folder, (script, *arguments) in DERIVED_CORPORA.items():
        if Path(folder).name not in text:
            continue
        target = REPO / folder
        if not os.environ.get("FLAIRSUITE_CORPORA"):
            pytest.skip(f"{experiment.name} needs {folder}, built by {script} from $FLAIRSUITE_CORPORA (not set)")
        target.parent.mkdir(exist_ok=True)
        with open(target.parent / f".{target.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (target.is_file() or (target / "test.conll").is_file()):
                subprocess.run([sys.executable, str(REPO / script), *arguments], check=True, capture_output=True, cwd=REPO)


def well_formed(document: str) -> ET.Element:
    """The parsed document (xml.etree, and lxml too where it is installed)."""
    try:
        from lxml import etree
    except ImportError:
        pass
    else:
        etree.fromstring(document.encode("utf-8"))
    return ET.fromstring(document.removeprefix("\ufeff"))
