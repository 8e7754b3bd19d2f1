"""The training-loop seam (`flairsuite/training.py`): phase order, setup (resume or fresh start), checkpoints
with random-generator state; and the old pickled name of the tagger's progress."""

import pickle
import random
from pathlib import Path
from typing import Any

import torch

from flairsuite.files import checkpoint
from flairsuite.tagging import tagger_training as tagger_train
from flairsuite.training import TrainingLoop


class Counting(TrainingLoop[dict]):
    """A toy trainer: each step draws a random number; validation every 2nd step, a checkpoint every 3rd."""

    def __init__(self, path: Path, steps: int, key: str = "a") -> None:
        self.checkpoint_path, self.steps, self.key = path, steps, key
        self.progress: dict[str, Any] = {"step": 0, "draws": [], "validated": []}
        self.calls: list[str] = []

    def resumable(self, state: dict[str, Any]) -> bool:
        return state["key"] == self.key

    def start(self) -> None:
        self.calls.append("start")
        torch.manual_seed(3)

    def state(self) -> dict[str, Any]:
        return {"progress": dict(self.progress, draws=list(self.progress["draws"]), validated=list(self.progress["validated"])),
                "key": self.key}

    def load_state(self, state: dict[str, Any]) -> None:
        self.calls.append("load_state")
        self.progress = state["progress"]

    def begin(self) -> None:
        self.calls.append("begin")

    def done(self) -> bool:
        return self.progress["step"] >= self.steps

    def step(self) -> None:
        self.calls.append("step")
        self.progress["step"] += 1
        self.progress["draws"].append(torch.rand(()).item())

    def validation_due(self) -> bool:
        return self.progress["step"] % 2 == 0

    def validate(self) -> None:
        self.calls.append("validate")
        self.progress["validated"].append(self.progress["step"])

    def checkpoint_due(self, validated: bool) -> bool:
        return self.progress["step"] % 3 == 0

    def checkpoint(self) -> None:
        self.calls.append("checkpoint")
        super().checkpoint()

    def finish(self) -> dict:
        self.calls.append("finish")
        return self.progress


def test_run_calls_the_phases_in_order(tmp_path):
    loop = Counting(tmp_path / "c.pt", 4)
    assert loop.setup() is False
    progress = loop.run()
    assert loop.calls == ["start", "begin", "step", "step", "validate", "step", "checkpoint", "step", "validate", "finish"]
    assert progress["validated"] == [2, 4]
    saved = checkpoint.load(tmp_path / "c.pt")
    assert set(saved) == {"progress", "key", "rng"} and saved["progress"]["step"] == 3


def test_resume_continues_exactly_and_a_foreign_checkpoint_starts_over(tmp_path):
    whole = Counting(tmp_path / "whole.pt", 7)
    whole.setup()
    expected = whole.run()

    first = Counting(tmp_path / "split.pt", 4)  # the checkpoint of step 3, as if killed during step 4
    first.setup()
    first.run()
    torch.manual_seed(99)
    random.seed(99)  # other generator states: restore() must replace them
    resumed = Counting(tmp_path / "split.pt", 7)
    assert resumed.setup() is True
    assert resumed.run() == expected
    assert resumed.calls[:2] == ["load_state", "begin"]

    foreign = Counting(tmp_path / "split.pt", 7, key="b")
    assert foreign.setup() is False
    assert foreign.run() == expected and foreign.calls[0] == "start"


def test_restore_without_state_reads_the_checkpoint(tmp_path):
    loop = Counting(tmp_path / "c.pt", 3)
    loop.setup()
    loop.run()
    again = Counting(tmp_path / "c.pt", 3)
    again.restore()
    assert again.progress["step"] == 3 and again.done()


def test_checkpoints_of_the_old_progress_name_still_load():
    """Tagger checkpoints before the rename pickled `flairsuite.tagging.tagger_training.Progress`."""
    progress = tagger_train.TaggerProgress(epoch=2, best_score=0.5, best_epoch=1, history=[{"epoch": 1}], seconds=3.0)
    data = pickle.dumps(progress, protocol=2)
    old = data.replace(b"TaggerProgress", b"Progress")
    assert b"flairsuite.tagging.tagger_training" in old and b"TaggerProgress" not in old
    assert pickle.loads(old) == progress


def test_bucketed_batches_group_similar_lengths_and_keep_every_sentence_once():
    torch.manual_seed(0)
    lengths = [random.Random(i).randint(1, 80) for i in range(1000)]
    order = torch.randperm(1000).tolist()
    plain = tagger_train.bucketed_batches(order, lengths, 16, None)
    pooled = tagger_train.bucketed_batches(order, lengths, 16, 10)
    for batches in (plain, pooled):
        assert sorted(i for batch in batches for i in batch) == list(range(1000))
        assert all(len(batch) <= 16 for batch in batches)
    assert plain == [order[i : i + 16] for i in range(0, 1000, 16)]

    def padded(batches):
        return sum(max(lengths[i] for i in batch) * len(batch) for batch in batches) / sum(lengths)

    assert padded(plain) > 1.5 and padded(pooled) < 1.1  # random batches pad a lot, pooled ones hardly
    pools = [set(order[start : start + 160]) for start in range(0, 1000, 160)]
    assert all(any(set(batch) <= pool for pool in pools) for batch in pooled)  # each batch from one random stretch
    in_pool_order = [sorted(pool_order, key=lambda i: -lengths[i]) for pool_order in (order[s : s + 160] for s in range(0, 1000, 160))]
    unshuffled = [chunk[i : i + 16] for chunk in in_pool_order for i in range(0, len(chunk), 16)]
    assert sorted(map(tuple, pooled)) == sorted(map(tuple, unshuffled)) and pooled != unshuffled  # the same batches, shuffled
    for sentences in (1000, 160, 161, 15, 1):
        expected = len(tagger_train.bucketed_batches(list(range(sentences)), [1] * sentences, 16, 10))
        assert tagger_train.batch_count(sentences, 16, 10) == expected
        assert tagger_train.batch_count(sentences, 16, None) == len(tagger_train.bucketed_batches(list(range(sentences)), [1] * sentences, 16, None))
