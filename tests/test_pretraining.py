"""The pre-training glue both `train-charlm` and `train-bert` use (flairsuite/pretraining.py): one resume policy, one
budget rule, one learning-curve plot."""

import logging
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_bert_training import bert_args, raw  # noqa: F401  (raw: the fixture text)
from test_charlm import corpus_root, fixture_text, train_args  # noqa: F401  (corpus_root: the fixture corpora)

from flairsuite.bert.train_bert import bert_folder
from flairsuite.charlm.run import lm_folder
from flairsuite.errors import FlairsuiteError
from flairsuite.pretraining import DEFAULT_HOURS, Panel, budget_from, plot_curve, start_or_resume
from flairsuite.training import Budget


def fake_trainer(out: Path, units: int = 0) -> SimpleNamespace:
    """What the policy touches of a trainer, recording what it was asked to do."""
    calls: list[str] = []
    trainer = SimpleNamespace(
        out=out, checkpoint_path=out / "checkpoint.pt", model_path=out / "best-lm.pt", calls=calls,
        ranks=SimpleNamespace(barrier=lambda: None, main=True), progress=SimpleNamespace(units=units),
        start=lambda: calls.append("start"), restore=lambda: calls.append("restore"),
        warm_start=lambda summary: calls.append(f"warm_start {summary['chars_seen']}"),
    )
    return trainer


FOLDERS = {"charlm": lm_folder, "bert": bert_folder}
MODEL_FILES = {"charlm": "best-lm.pt", "bert": "config.json"}


@pytest.mark.parametrize("kind", FOLDERS)
def test_resume_without_a_checkpoint_or_model_warns_and_starts_a_new_run_for_both_trainers(kind, tmp_path, caplog) -> None:
    trainer = fake_trainer(tmp_path / "model")
    trainer.out.mkdir()
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        start_or_resume(trainer, FOLDERS[kind](trainer), resume=True, force=False)
    assert trainer.calls == ["start"]
    assert [record.getMessage() for record in caplog.records] == [f"no checkpoint in {trainer.out}: starting a new run"]
    caplog.clear()
    again = fake_trainer(tmp_path / "other")
    again.out.mkdir()
    start_or_resume(again, FOLDERS[kind](again), resume=False, force=False)  # a plain new run: nothing to say
    assert again.calls == ["start"] and not caplog.records


@pytest.mark.parametrize("kind", FOLDERS)
def test_a_checkpoint_is_continued_only_with_resume_for_both_trainers(kind, tmp_path) -> None:
    trainer = fake_trainer(tmp_path / "model", units=1234)
    trainer.out.mkdir()
    trainer.checkpoint_path.write_text("old", encoding="utf-8")
    with pytest.raises(FlairsuiteError, match=r"holds the checkpoint of an earlier run: pass --resume to continue it or --force to start over$"):
        start_or_resume(trainer, FOLDERS[kind](trainer), resume=False, force=False)
    assert trainer.calls == []
    start_or_resume(trainer, FOLDERS[kind](trainer), resume=True, force=False)
    assert trainer.calls == ["restore"]


def test_a_trained_model_without_checkpoint_is_continued_where_the_trainer_can(tmp_path) -> None:
    """An LM's best-lm.pt continues from its summary.json; without the summary, or for a BERT folder, a one-line error."""
    lm = fake_trainer(tmp_path / "lm")
    lm.out.mkdir()
    lm.model_path.write_text("weights", encoding="utf-8")
    with pytest.raises(FlairsuiteError, match=r"holds a trained model and no checkpoint to continue it from: pass --force to start over$"):
        start_or_resume(lm, lm_folder(lm), resume=True, force=False)
    (lm.out / "summary.json").write_text('{"chars_seen": 5, "steps": 1, "hours": 0.1, "valid_ppl": 3.0}', encoding="utf-8")
    start_or_resume(lm, lm_folder(lm), resume=True, force=False)
    assert lm.calls == ["warm_start 5"]
    bert = fake_trainer(tmp_path / "bert")
    bert.out.mkdir()
    (bert.out / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(FlairsuiteError, match=r"holds a trained model and no checkpoint to continue it from: pass --force to start over$"):
        start_or_resume(bert, bert_folder(bert), resume=True, force=False)
    with pytest.raises(FlairsuiteError, match=r"holds a trained model: pass --force to replace it$"):
        start_or_resume(bert, bert_folder(bert), resume=False, force=False)
    assert bert.calls == []


def test_the_budget_rule_is_one_for_both_commands() -> None:
    assert budget_from(None, None, "--max-tokens") == Budget(DEFAULT_HOURS, None)
    assert budget_from(None, 500, "--max-chars", 2.0) == Budget(None, 500, 2.0)
    assert budget_from(0.5, None, "--max-tokens") == Budget(0.5, None)
    for args, message in [((0, None, "--max-tokens"), "--max-hours must be a positive number (found 0)"),
                          ((None, -3, "--max-chars"), "--max-chars must be a positive integer (found -3)"),
                          ((None, 2.5, "--max-tokens"), "--max-tokens must be a positive integer (found 2.5)"),
                          ((None, True, "--max-chars"), "--max-chars must be a positive integer (found true)"),
                          ((None, None, "--max-chars", float("inf")), "--max-cpu-hours must be a positive number (found Infinity)")]:
        with pytest.raises(FlairsuiteError) as error:
            budget_from(*args)
        assert str(error.value) == message


def test_the_learning_curve_has_a_panel_per_measure(tmp_path) -> None:
    from PIL import Image

    history = [{"tokens": 1e6 * step, "train_loss": 3.0 / step, "valid_loss": 3.2 / step, "train_accuracy": 0.1 * step,
                "valid_accuracy": 0.09 * step} for step in (1, 2, 3)]
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    plot_curve(history, "one panel", one, "tokens", "tokens", (Panel("loss", "loss"),))
    plot_curve(history, "two panels", two, "tokens", "tokens", (Panel("loss", "loss"), Panel("accuracy", "accuracy")))
    (width_one, height_one), (width_two, height_two) = Image.open(one).size, Image.open(two).size
    assert height_one == height_two and width_two > width_one * 1.4


def run_separately(*args: str) -> subprocess.CompletedProcess:
    """The command line in a child process, stdout and stderr apart."""
    code = "import sys; from flairsuite.cli import main; sys.argv = ['flairsuite', *sys.argv[1:]]; main()"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=env, text=True, timeout=300)


def test_resume_of_an_empty_folder_warns_on_stderr_for_train_charlm_and_train_bert(raw, corpus_root, tmp_path) -> None:  # noqa: F811
    text = tmp_path / "lm.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    lm = run_separately(*train_args(text, corpus_root, tmp_path / "lm", 1000), "--resume")
    bert = run_separately(*bert_args(raw, tmp_path / "bert", 1000), "--resume")
    for result, folder in ((lm, tmp_path / "lm" / "de-forward"), (bert, tmp_path / "bert" / "tiny")):
        assert result.returncode == 0, result.stderr
        assert f"WARNING flairsuite: no checkpoint in {folder}: starting a new run" in result.stderr.splitlines()
        assert "no checkpoint" not in result.stdout
