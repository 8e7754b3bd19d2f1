"""Active learning: the uncertainty measures against brute force, the near-duplicate rule, the `active_learning:` block,
and `flairsuite tag` simulating rounds on a fake Sturm (installed command in a subprocess), killed and resumed to the
uninterrupted result."""

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import LETTERS_DEV, LETTERS_TEST, LETTERS_TRAIN, tagged_conll, train_tiny_embeddings, write_file
from flair.data import Dictionary
from flair.models.sequence_tagger_utils.crf import START_TAG, STOP_TAG

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments import load_experiment
from flairsuite.models.selection import pick, ranked, word_set
from flairsuite.models.uncertainty import Scores, scores_from_emissions


class TinyTagger:
    """What `scores_from_emissions` reads of a SequenceTagger: the CRF flag, its transitions, the label dictionary."""

    def __init__(self, transitions: torch.Tensor, use_crf: bool = True) -> None:
        self.use_crf = use_crf
        self.label_dictionary = Dictionary(add_unk=False)
        for tag in ("O", "B-x", "I-x", START_TAG, STOP_TAG):
            self.label_dictionary.add_item(tag)
        self.crf = type("CRF", (), {"transitions": transitions})()


def brute_force(emitted: torch.Tensor, transitions: torch.Tensor, length: int) -> tuple[float, float]:
    """log p of the best path and the summed entropy of the tag marginals, by enumerating every path."""
    start, stop, tags = 3, 4, range(3)
    paths, scores = list(itertools.product(tags, repeat=length)), []
    for path in paths:
        score = transitions[path[0], start] + emitted[0, path[0]] + transitions[stop, path[-1]]
        score += sum(transitions[path[t], path[t - 1]] + emitted[t, path[t]] for t in range(1, length))
        scores.append(float(score))
    log_z = math.log(sum(math.exp(s) for s in scores))
    marginals = torch.zeros(length, 5, dtype=torch.float64)
    for path, score in zip(paths, scores):
        for t, tag in enumerate(path):
            marginals[t, tag] += math.exp(score - log_z)
    entropy = float(-(marginals[:, :3] * torch.log(marginals[:, :3])).sum())
    return max(scores) - log_z, entropy


def test_crf_measures_match_brute_force():
    torch.manual_seed(3)
    transitions = torch.randn(5, 5)
    transitions[3, :] = -10000.0  # into <START>
    transitions[:, 4] = -10000.0  # out of <STOP>
    emitted = torch.randn(2, 4, 5)
    emitted[..., 3:] = -10000.0
    lengths = torch.tensor([4, 3])
    found = scores_from_emissions(TinyTagger(transitions), emitted, lengths)
    for i, length in enumerate(lengths.tolist()):
        best, entropy = brute_force(emitted[i], transitions, length)
        assert found[i].best_log_probability == pytest.approx(best, abs=1e-6)
        assert found[i].uncertainty == pytest.approx(1 - math.exp(best / length), abs=1e-6)
        assert found[i].entropy == pytest.approx(entropy / length, abs=1e-6)
        assert found[i].tokens == length and len(found[i].tags) == length
    # a document: 1 - exp(sum log p / sum n)
    document = Scores.combined(found)
    assert document.uncertainty == pytest.approx(1 - math.exp((found[0].best_log_probability + found[1].best_log_probability) / 7))


def test_softmax_head_uncertainty_is_mean_token_entropy():
    emitted = torch.tensor([[[2.0, 0.0, 0.0, 0, 0], [0.0, 0.0, 0.0, 0, 0]]])
    found = scores_from_emissions(TinyTagger(torch.zeros(5, 5), use_crf=False), emitted, torch.tensor([2]))[0]
    first = torch.softmax(emitted[0, 0], 0)
    expected = (float(-(first * first.log()).sum()) + math.log(5)) / 2
    assert found.best_log_probability is None
    assert found.uncertainty == pytest.approx(expected) and found.entropy == pytest.approx(expected)
    assert found.tags[0][0] == "O"


def test_near_duplicates_are_kept_apart():
    sentences = [["Lieber", "Herwarth", "Walden", "!"], ["lieber", "Herwarth", "Walden", "."], ["Der", "Brief", "kam", "."], ["!"]]
    assert word_set(sentences[0]) == word_set(sentences[1]) == {"lieber", "herwarth", "walden"}
    assert word_set(sentences[3]) == {"!"}
    order = ranked([0.9, 0.8, 0.1, 0.5])
    assert order == [0, 1, 3, 2]
    assert pick(order, sentences, 2) == [0, 3]  # 1 is a near-duplicate of 0
    assert pick(order, sentences, 4) == [0, 3, 2, 1]  # too few others: the skipped one fills in


def block(tmp_path: Path, body: str, taggers: str = "[map-crf]") -> Path:
    return write_file(tmp_path / "al.yaml", f"name: al\ncorpora: [sturm]\nembeddings: {{e: [charlm:de-forward]}}\ntaggers: {taggers}\n"
                                            f"seeds: [1]\nactive_learning: {body}\n")


def test_block_is_validated(tmp_path):
    config = load_experiment(block(tmp_path, "{seed_size: 5, batch_size: 2, rounds: 3, strategies: [random, entropy]}"))
    assert config.active_learning.budget == 11 and config.active_learning.strategies == ("random", "entropy")
    assert config.active_learning.full_reference
    for body, taggers, message in [
        ("{seed_size: 5, batch_size: 2, rounds: 3, strategies: [random, margin]}", "[map-crf]", 'unknown name "margin"'),
        ("{seed_size: 0, batch_size: 2, rounds: 3, strategies: [random]}", "[map-crf]", "seed_size must be a positive integer"),
        ("{seed_size: 5, batch_size: 2, rounds: 3, strategies: [random], budget: 3}", "[map-crf]", "unknown key 'budget'"),
        ("{seed_size: 5, batch_size: 2, rounds: 3, strategies: [random]}", "[cse]", "tagger cse has no per-token tag distribution"),
    ]:
        with pytest.raises(FlairsuiteError, match=message) as error:
            load_experiment(block(tmp_path, body, taggers))
        assert str(error.value).startswith(str(tmp_path / "al.yaml")) and "\n" not in str(error.value)


@pytest.fixture(scope="module")
def lm_home(tmp_path_factory) -> Path:
    return train_tiny_embeddings(tmp_path_factory.mktemp("lms"), "both")


def simulate(home: Path, corpora: Path, experiment: Path, stderr: Path) -> subprocess.Popen:
    """`flairsuite tag EXPERIMENT` (the installed command) on one thread, in the background."""
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1"}
    command = [str(Path(sys.executable).with_name("flairsuite")), "tag", str(experiment), "--corpora-dir", str(corpora), "--threads", "1"]
    with stderr.open("wb") as err:
        return subprocess.Popen(command, env=env, stdout=(stderr.with_suffix(".out")).open("wb"), stderr=err)


def results(home: Path) -> dict[str, object]:
    """Every simulation file's content without timings."""
    found = {}
    for path in sorted((home / "results" / "sim").rglob("*.json")):
        data = json.loads(path.read_text())
        found[str(path.relative_to(home))] = {k: v for k, v in data.items() if k not in ("seconds", "config")}
    return found


def test_simulation_resumes_to_the_uninterrupted_result(lm_home, tmp_path):
    import shutil

    corpora = tmp_path / "corpora"
    write_file(corpora / "sturm" / "train_sturm.conll", tagged_conll(LETTERS_TRAIN * 12))
    write_file(corpora / "sturm" / "dev_sturm.conll", tagged_conll(LETTERS_DEV))
    write_file(corpora / "sturm" / "test_sturm.conll", tagged_conll(LETTERS_TEST))
    experiment = write_file(tmp_path / "sim.yaml", "name: sim\ncorpora: [sturm]\nembeddings: {both: [charlm:de-forward, charlm:de-backward]}\n"
                            "taggers: [map-crf]\nseeds: [1]\ntrain: {max_epochs: 3, mini_batch_size: 4}\nactive_learning:\n"
                            "  seed_size: 6\n  batch_size: 5\n  rounds: 3\n  strategies: [random, uncertainty, entropy]\n")
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    shutil.copytree(lm_home, clean)
    shutil.copytree(lm_home, killed)

    child = simulate(killed, corpora, experiment, tmp_path / "killed.err")
    first = killed / "results" / "sim" / "sturm" / "both" / "map-crf" / "random" / "seed-1" / "round-00.json"
    deadline = time.monotonic() + 300
    while not first.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, (tmp_path / "killed.err").read_text()[-3000:]
    rounds_before = len(list((killed / "results" / "sim").rglob("round-*.json")))
    assert 1 <= rounds_before < 12
    selection = json.loads((first.parent / "selection.json").read_text())["rounds"]
    assert [entry["round"] for entry in selection][:2] == [0, 1] and len(selection[0]["indices"]) == 6

    for home in (killed, clean):
        child = simulate(home, corpora, experiment, tmp_path / f"{home.name}.err")
        assert child.wait() == 0, (tmp_path / f"{home.name}.err").read_text()[-3000:]
    output = (tmp_path / "killed.out").read_text()
    assert "test F1 (%) after each round" in output and "sentences to reach random's final F1" in output

    resumed, expected = results(killed), results(clean)
    assert resumed == expected
    out = killed / "results" / "sim"
    for strategy in ("random", "uncertainty", "entropy"):
        folder = out / "sturm" / "both" / "map-crf" / strategy / "seed-1"
        rounds = json.loads((folder / "selection.json").read_text())["rounds"]
        chosen = [i for entry in rounds for i in entry["indices"]]
        assert len(rounds) == 4 and len(chosen) == len(set(chosen)) == 6 + 3 * 5
        assert [json.loads((folder / f"round-{k:02d}.json").read_text())["sentences"] for k in range(4)] == [6, 11, 16, 21]
        if strategy != "random":
            measures = [m for entry in rounds[1:] for m in entry["measures"]]
            assert len(measures) == 15 and all(0 <= m for m in measures)
        assert not (folder / "checkpoint.pt").exists()
    assert rounds[0]["indices"] == json.loads((out / "sturm/both/map-crf/random/seed-1/selection.json").read_text())["rounds"][0]["indices"]
    assert (out / "sturm" / "both" / "map-crf" / "full" / "seed-1.json").is_file()
    assert (out / "active-learning.png").stat().st_size > 1000 and (out / "rounds.csv").read_text().count("\n") == 13

    # a final check added to the finished simulation trains only the checks: every round stays as it was
    experiment.write_text(experiment.read_text() + "  final_check: [bilstm-crf]\n")
    child = simulate(clean, corpora, experiment, tmp_path / "check.err")
    assert child.wait() == 0, (tmp_path / "check.err").read_text()[-3000:]
    checked = results(clean)
    finals = {path: record for path, record in checked.items() if path.endswith("final-bilstm-crf.json")}
    assert {path: record for path, record in checked.items() if path not in finals} == expected
    assert sorted(Path(path).parent.parent.name for path in finals) == ["entropy", "random", "uncertainty"]
    assert all(record["sentences"] == 21 and 0 <= record["test"] <= 1 for record in finals.values())
    assert "final check" in (tmp_path / "check.out").read_text()
