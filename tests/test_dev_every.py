"""`dev_every`: with the linear schedule dev is scored only after every n-th epoch and the last, the trained weights are
those of scoring it after every epoch, and the setting stays out of run fingerprints; with the plateau schedule
(which anneals on every epoch's dev score) it is refused with one line."""

import pytest
import torch
from flair.data import Dictionary
from flair.embeddings import CharacterEmbeddings
from test_precision import split

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import runs
from flairsuite.experiments.identity import fingerprint, run_record
from flairsuite.experiments.reading import load_experiment
from flairsuite.models.registry import build_tagger
from flairsuite.models.settings import TrainSettings
from flairsuite.tagging.tagger_training import train_tagger

LINEAR = {"schedule": "linear", "optimizer": "adamw", "learning_rate": 1e-2, "max_epochs": 7, "mini_batch_size": 8}


def tagger():
    """A Map-CRF on 16-wide rows (the character embeddings only set the width: training reads the rows of `split`)."""
    characters = Dictionary()
    characters.add_item("w")
    labels = Dictionary(add_unk=False)
    labels.add_item("PER")
    labels.span_labels = True
    torch.manual_seed(1)  # the same initial weights for both trainings
    return build_tagger("map-crf", CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=8), labels, "ner")


def trained(tmp_path, name: str, settings: dict):
    train, dev = split(60, 1, 16), split(20, 2, 16)
    model = tagger()
    progress = train_tagger(model, train, dev, settings, seed=3, checkpoint_path=tmp_path / f"{name}.pt")
    return model.state_dict(), progress


def test_dev_every_scores_fewer_epochs_and_trains_the_same_weights(tmp_path):
    every, every_one = trained(tmp_path, "three", {**LINEAR, "dev_every": 3}), trained(tmp_path, "one", LINEAR)
    scored = [point["epoch"] for point in every[1].history if point["dev_f1"] is not None]
    assert scored == [3, 6, 7]  # every third epoch and the last
    assert [point["epoch"] for point in every_one[1].history if point["dev_f1"] is not None] == list(range(1, 8))
    assert every[0].keys() == every_one[0].keys()
    assert all(torch.equal(every[0][key], every_one[0][key]) for key in every[0])
    assert every[1].history[-1]["dev_f1"] == every_one[1].history[-1]["dev_f1"] > 0.5  # it learned; the same last score
    assert [p["loss"] for p in every[1].history] == [p["loss"] for p in every_one[1].history]


def test_dev_every_needs_the_linear_schedule_and_a_positive_integer():
    with pytest.raises(FlairsuiteError, match=r"^dev_every: 2 needs schedule: linear \(schedule plateau anneals"):
        TrainSettings.from_mapping("train", {"dev_every": 2})
    with pytest.raises(FlairsuiteError, match=r"^fine_tune_train.dev_every must be a positive integer \(found 0\)$"):
        TrainSettings.check_overrides("fine_tune_train", {"dev_every": 0})
    assert "dev_every" not in TrainSettings().record()
    assert TrainSettings.from_mapping("x", {**LINEAR, "dev_every": 4}).record()["dev_every"] == 4


def test_dev_every_leaves_fingerprints_as_they_were(tmp_path):
    text = """name: t
corpora: [sturm]
embeddings: {b: [bert:de-cpu]}
taggers: [map]
seeds: [1]
fine_tune: true
fine_tune_train: {max_epochs: 3%s}
"""
    paths = []
    for name, extra in (("plain", ""), ("every", ", dev_every: 2")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text % extra, encoding="utf-8")
        paths.append(path)
    plain, every = (load_experiment(path) for path in paths)
    assert runs(every)[0].train_settings["dev_every"] == 2  # reaches the trainer
    assert run_record(runs(plain)[0]) == run_record(runs(every)[0])
    assert fingerprint(plain) == fingerprint(every)
