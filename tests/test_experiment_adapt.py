"""An experiment's `adapt:` block: `flairsuite tag` adapts a tiny LM pair to the file's own text before the runs, reuses it
while its fingerprint holds, trains it again when the text changes (and the runs with it); bad values are one-line errors."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import train_tiny_embeddings, write_file
from test_tag_grid import DEV, write_sturm

from flairsuite.charlm.settings import CharlmRun
from flairsuite.embeddings import artifact_digest
from flairsuite.errors import InputError
from flairsuite.experiments import load_experiment
from flairsuite.experiments.adaptation import ensure_adapted

FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")  # the installed console script
SPECS = "[charlm:de-own-forward, charlm:de-own-backward]"
DEV_SENTENCE = DEV.splitlines()[1].replace("/B-pers", "").replace("/I-pers", "").replace("/B-place", "")  # a Sturm dev sentence


def own_text(lines: int = 120) -> str:
    """A few KB of other letters' text, with one sentence of the labeled corpus's dev split inside."""
    names, places = ["Herwarth", "Nell", "Else", "Franz"], ["Berlin", "Wien", "Paris"]
    text = [f"Lieber {names[i % 4]}, ich schreibe Ihnen aus {places[i % 3]} und danke Ihnen sehr." for i in range(lines)]
    text[5] = f"{text[5]} {DEV_SENTENCE} {text[5]}"
    return "\n".join(text) + "\n"


def experiment(folder: Path, adapt: str, stacks: str = f"own: {SPECS}") -> Path:
    lines = ["name: adapted", "corpora: [sturm]", f"adapt: {adapt}", "embeddings:", f"  {stacks}", "taggers: [map]", "seeds: [1]",
             "train: {max_epochs: 1}", ""]
    return write_file(folder / "adapt.yaml", "\n".join(lines))


ADAPT = "{init: de, text: texts/own.txt, name: de-own, max_chars: 4000, heldout_fraction: 0.2}"


def with_own_letters(folder: Path, suffix: str, content: str, reading: str) -> Path:
    """An experiment in `folder` that adapts by `ADAPT` to texts/own.txt, with the corpora Sturm and `letters/` (an own
    corpus: `content` in each of train, dev and test.<suffix>, read with the entry's keys `reading`); its file."""
    write_file(folder / "texts" / "own.txt", own_text())
    for split in ("train", "dev", "test"):
        write_file(folder / "letters" / f"{split}.{suffix}", content)
    lines = ["name: adapted", f"corpora: [sturm, {{name: letters, path: letters/, {reading}}}]", f"adapt: {ADAPT}", "embeddings:",
             f"  own: {SPECS}", "taggers: [map]", "seeds: [1]", ""]
    return write_file(folder / "adapt.yaml", "\n".join(lines))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tag(home: Path, corpora: Path, path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1"}
    return subprocess.run([FLAIRSUITE, "tag", str(path), "--corpora-dir", str(corpora), "--threads", "1", *extra],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with a tiny pair charlm/de-forward, charlm/de-backward (hidden 16), the fake Sturm below tmp_path."""
    write_sturm(tmp_path)
    return train_tiny_embeddings(tmp_path, "both")


def test_tag_adapts_once_and_again_when_the_text_changes(tmp_path: Path, home: Path) -> None:
    text = write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", ADAPT)
    first = tag(home, tmp_path, path)
    assert first.returncode == 0, first.stderr
    assert "adapt: training charlm/de-own-forward and -backward from de" in first.stdout
    adapted = {d: home / "charlm" / f"de-own-{d}" / "best-lm.pt" for d in ("forward", "backward")}
    for direction, model in adapted.items():
        summary = json.loads((model.parent / "summary.json").read_text(encoding="utf-8"))
        assert summary["init"]["sha256"] == sha256(home / "charlm" / f"de-{direction}" / "best-lm.pt")
        assert summary["chars_seen"] >= 4000
        assert [source["sentences_removed"] for source in summary["corpus"]["sources"].values()] == [1]  # Sturm's dev sentence cut out
    metrics = json.loads((home / "results" / "adapted" / "sturm" / "own" / "map" / "seed-1" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["artifact_digests"]["charlm:de-own-forward"] == artifact_digest("charlm:de-own-forward", home)
    before, first_digest = {d: sha256(model) for d, model in adapted.items()}, metrics["artifact_digests"]["charlm:de-own-forward"]

    second = tag(home, tmp_path, path)  # nothing changed: neither the pair nor the run is trained again
    assert second.returncode == 0, second.stderr
    assert "adapt: charlm/de-own-forward and -backward are current" in second.stdout
    assert "1 finished before, 0 to train" in second.stdout
    assert {d: sha256(model) for d, model in adapted.items()} == before

    write_file(text, own_text(150))  # other text: a new fingerprint, the pair and then the run trained again
    third = tag(home, tmp_path, path, "--force")
    assert third.returncode == 0, third.stderr
    assert "adapt: training" in third.stdout and "0 finished before, 1 to train" in third.stdout
    after = {d: sha256(model) for d, model in adapted.items()}
    assert after["forward"] != before["forward"] and after["backward"] != before["backward"]
    metrics = json.loads((home / "results" / "adapted" / "sturm" / "own" / "map" / "seed-1" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["artifact_digests"]["charlm:de-own-forward"] == artifact_digest("charlm:de-own-forward", home)
    assert metrics["artifact_digests"]["charlm:de-own-forward"] != first_digest


def test_a_missing_initial_pair_is_one_line(tmp_path: Path) -> None:
    write_sturm(tmp_path)
    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", ADAPT.replace("init: de", "init: nowhere"))
    result = tag(tmp_path / "home", tmp_path, path)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: adapt: init: --init nowhere: no model folder"), result.stderr


@pytest.mark.parametrize(("adapt", "message"), [
    ("{init: de, text: texts/none.txt, name: x}", "adapt: text: texts/none.txt is not a file or folder"),
    ("{init: de, text: empty/, name: x}", "adapt: text: empty/: "),
    ("{init: de, text: texts/own.txt, name: x, max_chars: 0}", "adapt: max_chars must be a positive integer, or null for five passes over the text (found 0)"),
    ("{init: de, text: texts/own.txt, name: x, heldout_fraction: 0.7}", "adapt: heldout_fraction must be a number in (0, 0.5)"),
    ("{init: de, text: texts/own.txt, name: x, exclude: [ler]}", 'adapt: exclude: "ler" is not a corpus of the experiment (sturm)'),
    ("{init: de, text: texts/own.txt, name: 'a b'}", 'adapt: name: "a b" is not a usable folder name'),
    ("{init: de, text: texts/own.txt, name: x, lr: 1}", "adapt: unknown key 'lr'"),
    ("{init: de, name: x}", "adapt: missing key 'text'"),
    ("[de]", "adapt must be a mapping"),
    ("{init: '', text: texts/own.txt, name: x}", "adapt: init must be the name or path prefix of a trained pair"),
    ("{init: de, text: texts/own.txt, name: de}", 'adapt: name: "de" is the initial pair\'s'),
    ("{fasttext: de, text: texts/own.txt, name: de}", "adapt: name: \"de\" is the initial vectors': give the adapted vectors a name"),
    ("{text: texts/own.txt, name: x}", "adapt: missing key 'init' (the char-LM pair to continue) or 'fasttext' (the vectors to continue)"),
    ("{fasttext: de, text: texts/own.txt, name: x, epochs: 0}", "adapt: epochs must be a positive integer"),
    ("{init: de, text: texts/own.txt, name: x, noise: smlm:0.9}", "adapt: noise must be none, smlm[:P] or smlm-denoise[:P]"),
])
def test_bad_values_name_the_file(tmp_path: Path, adapt: str, message: str) -> None:
    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    (tmp_path / "exp" / "empty").mkdir()
    path = experiment(tmp_path / "exp", adapt)
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(raised.value).startswith(f"{path}: {message}"), str(raised.value)


def test_noise_reaches_train_charlm_and_the_fingerprint_only_where_set(tmp_path: Path) -> None:
    from flairsuite.experiments.adaptation import charlm_run

    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    plain = load_experiment(experiment(tmp_path / "exp", "{init: de, text: texts/own.txt, name: de-own}")).adaptation
    noisy = load_experiment(experiment(tmp_path / "exp", "{init: de, text: texts/own.txt, name: de-own, noise: smlm:0.2}")).adaptation
    assert charlm_run(plain, tmp_path, False, None, None).hyper == {} and "noise" not in plain.settings()
    assert charlm_run(noisy, tmp_path, False, None, None).hyper == {"noise": "smlm:0.2"}
    assert noisy.settings() == {**plain.settings(), "noise": "smlm:0.2"}


def test_the_block_is_read_relative_to_the_file(tmp_path: Path) -> None:
    text = write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    adaptation = load_experiment(experiment(tmp_path / "exp", "{init: de, text: [texts/own.txt], name: de-own}")).adaptation
    assert adaptation.texts == (text.resolve(),) and adaptation.exclude == ("sturm",) and adaptation.max_chars is None
    assert adaptation.specs() == ("charlm:de-own-forward", "charlm:de-own-backward")
    both = load_experiment(experiment(tmp_path / "exp", "{init: de, fasttext: de, text: texts/own.txt, name: de-own}")).adaptation
    assert both.specs() == ("charlm:de-own-forward", "charlm:de-own-backward", "fasttext:de-own")
    alone = load_experiment(experiment(tmp_path / "exp", "{fasttext: de, text: texts/own.txt, name: de-own}")).adaptation
    assert alone.specs() == ("fasttext:de-own",) and alone.init is None


def test_a_folder_of_plain_letters_is_read_as_its_text_files(tmp_path: Path) -> None:
    """`text: plain/` names every .txt / .txt.gz file below the folder (as train-charlm --corpus reads it), each
    digested into the fingerprint, so a letter added later makes the block train again; other files are not text."""
    letters = [write_file(tmp_path / "exp" / "plain" / name, own_text()) for name in ("b.txt", "a.txt", "sub/c.txt")]
    write_file(tmp_path / "exp" / "plain" / "a.xml", "<TEI/>")
    read = load_experiment(experiment(tmp_path / "exp", "{init: de, text: [plain/, plain/a.txt], name: de-own}")).adaptation
    assert read.texts == tuple(sorted(p.resolve() for p in letters))


def test_a_killed_adaptation_resumes_and_a_changed_one_starts_over(tmp_path: Path) -> None:
    """The train-charlm run `ensure_adapted` asks for: --force for a new fingerprint, --resume after a kill of the same one."""
    home = tmp_path / "home"
    for direction in ("forward", "backward"):
        write_file(home / "charlm" / f"de-{direction}" / "best-lm.pt", f"initial {direction}")  # digested, never loaded here
    text = write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", ADAPT)
    adaptation = load_experiment(path).adaptation
    calls: list[CharlmRun] = []

    def killed(run: CharlmRun):
        calls.append(run)
        raise KeyboardInterrupt

    def trains(run: CharlmRun):
        calls.append(run)
        for direction in ("forward", "backward"):
            write_file(home / "charlm" / f"de-own-{direction}" / "best-lm.pt", "adapted")
        yield "trained"

    with pytest.raises(KeyboardInterrupt):
        ensure_adapted(adaptation, path, home, killed, lambda line: None)
    assert ensure_adapted(adaptation, path, home, trains, lambda line: None)
    assert not ensure_adapted(adaptation, path, home, trains, lambda line: None)  # current: train is not called
    write_file(text, own_text(150))
    changed = load_experiment(path).adaptation
    assert ensure_adapted(changed, path, home, trains, lambda line: None)
    assert [(run.force, run.resume) for run in calls] == [(True, False), (False, True), (True, False)]
    assert (calls[0].init, calls[0].name, calls[0].out_dir) == ("de", "de-own", str(home / "charlm"))
    assert calls[0].exclude == ("sturm",) and calls[0].max_chars == 4000 and calls[0].heldout_fraction == 0.2
    assert calls[0].corpus == (str(text.resolve()),) and calls[0].direction == "both" and calls[0].hyper == {}


def test_the_initial_pair_is_never_overwritten(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for direction in ("forward", "backward"):
        write_file(home / "charlm" / f"de-{direction}" / "best-lm.pt", f"initial {direction}")
    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", f"{{init: {home / 'charlm' / 'de'}, text: texts/own.txt, name: de}}")
    with pytest.raises(InputError) as raised:  # the same folders by a path prefix: refused before any training
        ensure_adapted(load_experiment(path).adaptation, path, home, lambda args: pytest.fail("trained"), lambda line: None)
    assert str(raised.value).startswith(f"{path}: adapt: name: de would overwrite the initial model"), str(raised.value)
    assert (home / "charlm" / "de-forward" / "best-lm.pt").read_text(encoding="utf-8") == "initial forward"


def test_an_own_corpus_in_another_format_is_excluded_by_its_entry(tmp_path: Path) -> None:
    """A doccano export among the corpora: `exclude` passes its reading keys to train-charlm --exclude as a mapping
    (read back by the same reader), a column corpus with the defaults by its folder, a registered set by name."""
    from flairsuite.rawtext.exclusion import own_entry

    path = with_own_letters(tmp_path / "exp", "jsonl", '{"text": "Lieber Karl", "label": [[7, 11, "PER"]]}\n', "format: jsonl")
    sturm, letters = load_experiment(path).adaptation.exclude
    assert sturm == "sturm"
    assert own_entry(letters) == {"format": "jsonl", "path": str((tmp_path / "exp" / "letters").resolve())}
    write_file(path, path.read_text(encoding="utf-8").replace("heldout_fraction: 0.2}", "heldout_fraction: 0.2, exclude: []}"))
    assert load_experiment(path).adaptation.exclude == ()


def test_tag_adapts_fasttext_once_and_runs_on_the_adapted_vectors(tmp_path: Path) -> None:
    """`fasttext:` in the block: train-fasttext --init continues the tiny vectors (their full model) on the own text, with
    Sturm's dev sentence cut out; the runs digest the adapted vectors; a second `tag` finds them current."""
    write_sturm(tmp_path)
    home = train_tiny_embeddings(tmp_path, "forward", fasttext=True)
    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", "{fasttext: de, text: texts/own.txt, name: de-own, epochs: 1, heldout_fraction: 0.2}",
                      "own: [fasttext:de-own]")
    first = tag(home, tmp_path, path)
    assert first.returncode == 0, first.stderr
    assert "adapt: training wordvectors/de-own-fasttext from de on 1 text file(s)" in first.stdout
    vectors = home / "wordvectors" / "de-own-fasttext"
    summary = json.loads((vectors / "summary.json").read_text(encoding="utf-8"))
    assert summary["init"]["sha256"] == artifact_digest("fasttext:de", home) and summary["config"]["epochs"] == 1
    assert summary["init"]["words_added"] > 0 and (vectors / "model" / "fasttext.model").is_file()
    assert [source["sentences_removed"] for source in summary["corpus"]["sources"].values()] == [1]  # Sturm's dev sentence cut out
    metrics = json.loads((home / "results" / "adapted" / "sturm" / "own" / "map" / "seed-1" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["artifact_digests"]["fasttext:de-own"] == artifact_digest("fasttext:de-own", home)
    assert not (home / "charlm" / "de-own-forward").exists()

    second = tag(home, tmp_path, path)
    assert second.returncode == 0, second.stderr
    assert "adapt: wordvectors/de-own-fasttext is current" in second.stdout and "1 finished before, 0 to train" in second.stdout
    assert json.loads((vectors / "summary.json").read_text(encoding="utf-8")) == summary


def test_fasttext_without_its_model_is_one_line(tmp_path: Path) -> None:
    write_sturm(tmp_path)
    write_file(tmp_path / "home" / "wordvectors" / "de-fasttext" / "vectors.kv", "plain vectors")  # never loaded here
    write_file(tmp_path / "exp" / "texts" / "own.txt", own_text())
    path = experiment(tmp_path / "exp", "{fasttext: de, text: texts/own.txt, name: de-own}", "own: [fasttext:de-own]")
    with pytest.raises(InputError) as raised:
        ensure_adapted(load_experiment(path).adaptation, path, tmp_path / "home", lambda args: pytest.fail("trained"), lambda line: None,
                       train_vectors=lambda args: pytest.fail("trained"))
    assert str(raised.value) == (
        f"{path}: adapt: fasttext: --init de: {tmp_path / 'home' / 'wordvectors' / 'de-fasttext'} was trained without its full model "
        "(model/ is missing); train it again with `flairsuite train-fasttext` (without --no-model) to continue it"
    )


def test_a_moved_clone_finds_its_adaptation_current_and_an_absolute_path_marker_is_adopted(tmp_path: Path) -> None:
    """The fingerprint names the texts and an own corpus's folder relative to the experiment file: the same experiment
    folder copied elsewhere (a clone moved, a worktree) trains nothing; a marker written with absolute paths, as before,
    is rewritten, not retrained."""
    import shutil

    from flairsuite.experiments.adaptation import MARKER, adaptation_record, portable_record
    from flairsuite.experiments.identity import digest

    home = tmp_path / "home"
    for direction in ("forward", "backward"):
        write_file(home / "charlm" / f"de-{direction}" / "best-lm.pt", f"initial {direction}")
    first = with_own_letters(tmp_path / "one", "tsv", "Karl\tB-PER\n", "sep: tab")
    trained: list[CharlmRun] = []

    def trains(run: CharlmRun):
        trained.append(run)
        for direction in ("forward", "backward"):
            write_file(home / "charlm" / f"de-own-{direction}" / "best-lm.pt", "adapted")
        yield "trained"

    adaptation = load_experiment(first).adaptation
    assert ensure_adapted(adaptation, first, home, trains, lambda line: None) and len(trained) == 1
    marker = json.loads((home / "charlm" / "de-own-forward" / MARKER).read_text(encoding="utf-8"))
    assert list(marker["texts"]) == ["texts/own.txt"] and marker["exclude"] == ["sturm", '{"path": "letters", "sep": "tab"}']
    assert str(tmp_path) not in json.dumps(marker)
    moved = tmp_path / "two"
    shutil.copytree(tmp_path / "one", moved)
    second = moved / "adapt.yaml"
    assert not ensure_adapted(load_experiment(second).adaptation, second, home, trains, lambda line: None)  # current where it moved

    legacy = adaptation_record(adaptation, home, first)  # as markers were written before: absolute paths
    assert str(tmp_path) in json.dumps(legacy) and digest(legacy) != digest(portable_record(legacy, first))
    for direction in ("forward", "backward"):
        write_file(home / "charlm" / f"de-own-{direction}" / MARKER, json.dumps({"fingerprint": digest(legacy), "finished": True, **legacy}))
    assert not ensure_adapted(adaptation, first, home, trains, lambda line: None) and len(trained) == 1  # adopted, not retrained
    rewritten = json.loads((home / "charlm" / "de-own-backward" / MARKER).read_text(encoding="utf-8"))
    assert rewritten["fingerprint"] == digest(portable_record(legacy, first))
