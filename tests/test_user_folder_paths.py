"""Paths a user can predict (issue 75): an experiment in the user's own folder, outside the clone, with no $FLAIRSUITE_HOME.

Its relative paths resolve against the file, the released models of the clone flairsuite is installed from are found
(`charlm:de-forward`, an `adapt: init: de` pair), `tag` prints where it wrote and `results` reads that from the same folder;
a model found nowhere is one error line naming every place looked."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_file
from test_tag_grid import DEV, TEST, TRAIN, conll

from flairsuite.charlm.settings import CharlmRun
from flairsuite.embeddings import artifact_digest, artifact_path, existing_artifact
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments import load_experiment
from flairsuite.experiments.adaptation import ensure_adapted
from flairsuite.files.paths import HOME_ENV, MODELS_ENV, installed_clone, model_roots, results_folder

REPO = Path(__file__).resolve().parent.parent
FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")  # the installed console script
LETTERS = """\
name: letters
corpora:
  - {name: letters, path: data/letters/}
embeddings:
  released: [charlm:de-forward]
taggers: [map]
seeds: [1]
train: {max_epochs: 1, mini_batch_size: 4}
"""
ADAPT = "adapt: {init: de, text: data/plain/, name: letters}\n"
RUN = Path("results/letters/letters/released/map/seed-1")

pytestmark = pytest.mark.skipif(installed_clone() != REPO, reason="flairsuite is not installed from this clone (editable install)")


def user_folder(root: Path, adapt: bool = False) -> Path:
    """A user's folder: data/letters/ (a tiny own corpus), data/plain/ (unannotated text) and letters.yaml beside them."""
    folder = root / "user"
    for split, text in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        write_file(folder / "data" / "letters" / f"{split}.conll", conll(text))
    write_file(folder / "data" / "plain" / "brief.txt", "Lieber Karl, ich schreibe Ihnen aus Wien.\n" * 20)
    write_file(folder / "letters.yaml", LETTERS + (ADAPT if adapt else ""))
    return folder


def no_home(**more: str) -> dict[str, str]:
    """This process's environment without $FLAIRSUITE_HOME and $FLAIRSUITE_MODELS (conftest sets the home for every test)."""
    env = {key: value for key, value in os.environ.items() if key not in (HOME_ENV, MODELS_ENV)}
    return {**env, "OMP_NUM_THREADS": "1", **more}


def flairsuite(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([FLAIRSUITE, *args], cwd=cwd, env=no_home(**env), capture_output=True, text=True, timeout=600)


@pytest.fixture
def user_cwd(tmp_path: Path, monkeypatch) -> Path:
    """This process in a user's folder outside the clone, without $FLAIRSUITE_HOME or $FLAIRSUITE_MODELS."""
    folder = user_folder(tmp_path)
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.delenv(MODELS_ENV, raising=False)
    monkeypatch.chdir(folder)
    return folder


def test_tag_in_a_user_folder_finds_the_released_lm_and_results_reads_what_it_wrote(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    before = (REPO / "results" / "letters").exists()
    tagged = flairsuite(folder, "tag", "letters.yaml", "--threads", "1")
    assert tagged.returncode == 0, tagged.stderr[-3000:]
    assert tagged.stdout.rstrip().endswith("wrote results/letters/ (again: flairsuite results results/letters/)"), tagged.stdout[-2000:]
    metrics = json.loads((folder / RUN / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["artifact_digests"]["charlm:de-forward"] == artifact_digest("charlm:de-forward", REPO)  # the clone's released LM
    assert (REPO / "results" / "letters").exists() == before  # written in the user's folder, nothing in the clone

    table = flairsuite(folder, "results", "results/letters/")  # the README's command, from the same folder
    assert table.returncode == 0, table.stderr
    assert "| released | map |" in table.stdout and "letters" in table.stdout

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for argument in ("results/letters/", "letters", str(folder / "results" / "letters")):  # with the home set: the same runs
        again = flairsuite(elsewhere, "results", argument, **{HOME_ENV: str(folder)})
        assert again.returncode == 0 and again.stdout == table.stdout, (argument, again.stderr)


def test_relative_paths_resolve_against_the_file_not_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    folder = user_folder(tmp_path, adapt=True)
    monkeypatch.chdir(tmp_path)  # not the file's folder
    config = load_experiment(Path("user") / "letters.yaml")
    assert Path(config.corpora[0].own.folder) == (folder / "data" / "letters").resolve()
    assert config.adaptation.texts == ((folder / "data" / "plain" / "brief.txt").resolve(),)


def test_the_adapt_block_continues_the_released_pair_from_a_user_folder(user_cwd: Path) -> None:
    """`adapt: init: de` from a user's folder: the clone's charlm/de-* are found and handed to train-charlm by their path;
    the adapted pair goes below the user's folder (the home)."""
    path = Path("letters.yaml")
    write_file(path, LETTERS + ADAPT)
    calls: list[CharlmRun] = []

    def trains(run: CharlmRun):
        calls.append(run)
        for direction in ("forward", "backward"):
            write_file(Path("charlm") / f"letters-{direction}" / "best-lm.pt", "adapted")
        yield "trained"

    assert ensure_adapted(load_experiment(path).adaptation, path, Path("."), trains, lambda line: None)
    assert (calls[0].init, calls[0].name, calls[0].out_dir) == (str(REPO / "charlm" / "de"), "letters", "charlm")
    record = json.loads((user_cwd / "charlm" / "letters-forward" / "adaptation.json").read_text(encoding="utf-8"))
    released = (REPO / "charlm" / "de-forward" / "best-lm.pt").read_bytes()
    assert record["init"] == "de" and record["initial_sha256"]["forward"] == hashlib.sha256(released).hexdigest()


def test_a_model_found_nowhere_names_every_place_looked(user_cwd: Path, tmp_path: Path, monkeypatch) -> None:
    models = tmp_path / "models"
    monkeypatch.setenv(MODELS_ENV, str(models))
    assert model_roots() == (Path("."), models, REPO)
    with pytest.raises(FlairsuiteError) as raised:
        existing_artifact("charlm:xx-forward", Path("."))
    assert str(raised.value) == (
        f"charlm/xx-forward/best-lm.pt not found (nor {models}/charlm/xx-forward/best-lm.pt, {REPO}/charlm/xx-forward/best-lm.pt): "
        "run `flairsuite train-charlm --lang LANG --name xx --direction forward`"
    )
    own = write_file(models / "charlm" / "xx-forward" / "best-lm.pt", "weights")  # $FLAIRSUITE_MODELS: found there
    assert artifact_path("charlm:xx-forward", Path(".")) == own
    assert artifact_path("charlm:de-forward", Path(".")) == REPO / "charlm" / "de-forward" / "best-lm.pt"

    path = write_file(Path("letters.yaml"), LETTERS + ADAPT.replace("init: de", "init: nowhere"))
    with pytest.raises(InputError) as adapt:
        ensure_adapted(load_experiment(path).adaptation, path, Path("."), lambda args: pytest.fail("trained"), lambda line: None)
    places = [Path("nowhere"), Path("charlm/nowhere"), models / "charlm" / "nowhere", REPO / "charlm" / "nowhere"]
    looked = " nor ".join(f"{place}-{{forward,backward}}" for place in places)
    assert str(adapt.value) == f"{path}: adapt: init: --init nowhere: no model folder {looked} holds best-lm.pt"

    with pytest.raises(FlairsuiteError) as results:
        results_folder("results/nothing")
    assert str(results.value).startswith("results/nothing: no such folder nor results/results/nothing (pass the results folder")


def test_a_set_home_reads_no_model_of_the_clone(tmp_path: Path, monkeypatch) -> None:
    """$FLAIRSUITE_HOME set (as the tests and clusters set it): its models and $FLAIRSUITE_MODELS' only, never the clone's."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    monkeypatch.delenv(MODELS_ENV, raising=False)
    assert model_roots() == (tmp_path / "home",)
    with pytest.raises(FlairsuiteError, match=r"^\S+/home/charlm/de-forward/best-lm.pt not found: run"):
        existing_artifact("charlm:de-forward", tmp_path / "home")
