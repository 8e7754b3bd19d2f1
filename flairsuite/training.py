"""The training loop both trainers share: the phases a trainer fills in and the one driver that runs them.

The character LM (`flairsuite.charlm.trainer.CharLMTrainer`) and the taggers
(`flairsuite.tagging.train.TaggerTraining`) subclass `TrainingLoop`. A subclass supplies:

- setup: its constructor builds model, optimizer and scheduler; `setup()` then restores the
  checkpoint when there is one that `resumable()` accepts, or calls `start()` (e.g. to seed the
  random generators) for a fresh run. A caller with its own resume policy (`train-charlm --resume`)
  calls `restore()` itself instead.
- `done()`: whether training is over (epochs run, budget spent, learning rate annealed away);
- `step()`: one unit of work (a truncated-BPTT window for the character LM, an epoch for a tagger);
- `validation_due()` and `validate()`: a validation point (dev score, annealing, the best model);
- `checkpoint_due()` and `checkpoint()`: by default `save_checkpoint()`, which writes `state()` plus
  the state of every random generator atomically (`flairsuite.checkpoint`), so that `restore()`
  (`load_state()`, then the generators) continues a killed run exactly.

`run()` is the loop, and the one place that decides the order of the phases:

    begin()
    while not done():
        step()
        if validation_due(): validate()
        if checkpoint_due(validated): checkpoint()
    return finish()

Distributed training belongs here too: the ranks, the all-reduce after `step()`, and the rule that
only rank 0 writes checkpoints go into this class, not into each trainer.
"""

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Generic, Optional, TypeVar

from flairsuite import checkpoint as checkpoints

ProgressT = TypeVar("ProgressT")


class TrainingLoop(ABC, Generic[ProgressT]):
    """One training run, checkpointed and exactly resumable; subclasses fill in the phases (module docstring)."""

    checkpoint_path: Path
    progress: ProgressT

    # -- setup ------------------------------------------------------------------------------------

    def setup(self) -> bool:
        """Continue from the checkpoint if there is a resumable one, else start fresh; whether it continued."""
        state = checkpoints.load(self.checkpoint_path) if self.checkpoint_path.is_file() else None
        if state is not None and self.resumable(state):
            self.restore(state)
            return True
        self.start()
        return False

    def resumable(self, state: dict[str, Any]) -> bool:
        """Whether checkpoint `state`, found by `setup()`, belongs to this run (else it starts over)."""
        return True

    def start(self) -> None:
        """What a fresh run does before its first step (e.g. seed the random generators); nothing by default."""

    # -- checkpoint -------------------------------------------------------------------------------

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Everything a checkpoint holds besides the random generators (those are added as `rng`)."""

    @abstractmethod
    def load_state(self, state: dict[str, Any]) -> None:
        """Take over a checkpoint's `state` (raise a FlairsuiteError if it cannot be continued)."""

    def save_checkpoint(self) -> None:
        """Write the checkpoint atomically: the trainer's state and the state of every random generator."""
        checkpoints.save(self.checkpoint_path, {**self.state(), "rng": checkpoints.rng_state()})

    def restore(self, state: Optional[dict[str, Any]] = None) -> None:
        """Continue from checkpoint `state` (default: read from `checkpoint_path`), random generators included."""
        if state is None:
            state = checkpoints.load(self.checkpoint_path)
        self.load_state(state)
        checkpoints.set_rng_state(state["rng"])

    # -- the loop ---------------------------------------------------------------------------------

    def begin(self) -> None:
        """Before the first step of `run()` (training mode, clocks, progress bar); nothing by default."""

    @abstractmethod
    def done(self) -> bool:
        """Whether training is over."""

    @abstractmethod
    def step(self) -> None:
        """One unit of work."""

    def validation_due(self) -> bool:
        """Whether a validation point follows the step just done; after every step by default."""
        return True

    @abstractmethod
    def validate(self) -> None:
        """A validation point."""

    def checkpoint_due(self, validated: bool) -> bool:
        """Whether a checkpoint follows (`validated`: a validation point just ran); after every step by default."""
        return True

    def checkpoint(self) -> None:
        """The checkpoint phase: `save_checkpoint()`."""
        self.save_checkpoint()

    def finish(self) -> ProgressT:
        """After the last step; the progress by default."""
        return self.progress

    def run(self) -> ProgressT:
        """Train until `done()`: step, validate when due, checkpoint when due."""
        self.begin()
        while not self.done():
            self.step()
            validated = self.validation_due()
            if validated:
                self.validate()
            if self.checkpoint_due(validated):
                self.checkpoint()
        return self.finish()
