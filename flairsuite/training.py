"""The training loop both trainers share: the phases a trainer fills in and the one driver that runs them.

The character LM (`flairsuite.charlm.trainer.CharLMTrainer`) and the taggers
(`flairsuite.tagging.tagger_training.TaggerTraining`) subclass `TrainingLoop`. A subclass supplies:

- setup: its constructor builds model, optimizer and scheduler; `setup()` then restores the
  checkpoint when there is one that `resumable()` accepts, or calls `start()` (e.g. to seed the
  random generators) for a fresh run. A caller with its own resume policy (`train-charlm --resume`)
  calls `restore()` itself instead.
- `done()`: whether training is over (epochs run, budget spent, learning rate annealed away);
- `step()`: one unit of work (a truncated-BPTT window for the character LM, an epoch for a tagger);
- `validation_due()` and `validate()`: a validation point (dev score, annealing, the best model);
- `checkpoint_due()` and `checkpoint()`: by default `save_checkpoint()`, which writes `state()` plus
  the state of every random generator atomically (`flairsuite.files.checkpoint`), so that `restore()`
  (`load_state()`, then the generators) continues a killed run exactly.

`run()` is the loop, and the one place that decides the order of the phases:

    begin()
    while not done():
        step()
        if validation_due(): validate()
        if checkpoint_due(validated): checkpoint()
    return finish()

Data-parallel training (`torchrun`, `flairsuite.runtime.distributed`) lives in `StreamTraining`: the
decisions every rank must share, the rule that only rank 0 writes checkpoints (with every rank's
random generators and per-rank state gathered into them), and resuming on as many or on a
different number of ranks. A trainer shards its data and reduces its gradients itself.
"""

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Optional, TypeVar

import numpy as np
import torch
from tqdm import tqdm

from flairsuite.errors import FlairsuiteError
from flairsuite.files import checkpoint as checkpoints
from flairsuite.runtime.distributed import Ranks
from flairsuite.runtime.threads import recheck as recheck_threads

ProgressT = TypeVar("ProgressT")


@dataclass
class StreamProgress:
    """Counters of a run over a stream of training data (language models) that survive a resume.

    Where the run is in its data (`epoch`, `offset`), its training seconds, best validation loss and
    history; a subclass adds its step count and what it has seen (`units`: characters, tokens).
    Checkpoints hold it as a dict (`asdict`).
    """

    epoch: int = 0
    offset: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time in training (all its threads; rank 0's), summed over resumes
    best_valid_loss: float = math.inf
    history: list[dict[str, float]] = field(default_factory=list)

    @property
    def units(self) -> int:
        """How much training data the run has seen, in the unit its budget counts."""
        raise NotImplementedError


@dataclass(frozen=True)
class Budget:
    """When a stream run stops: after `max_hours` of training time, `max_cpu_hours` of CPU time (wall time x busy
    threads, so the same work whatever else runs on the machine) or `max_units` units seen, whichever first."""

    max_hours: Optional[float] = None
    max_units: Optional[int] = None
    max_cpu_hours: Optional[float] = None

    @property
    def timed(self) -> bool:
        """Whether a clock decides (rank 0's, for every rank)."""
        return self.max_hours is not None or self.max_cpu_hours is not None

    def spent(self, progress: StreamProgress) -> bool:
        over_time = self.max_hours is not None and progress.seconds >= self.max_hours * 3600
        over_cpu = self.max_cpu_hours is not None and progress.cpu_seconds >= self.max_cpu_hours * 3600
        return over_time or over_cpu or (self.max_units is not None and progress.units >= self.max_units)


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
            recheck_threads()  # the rule's thread count, looked at again once a minute (runtime.threads)
            validated = self.validation_due()
            if validated:
                self.validate()
            if self.checkpoint_due(validated):
                self.checkpoint()
        return self.finish()


def renamed_setting(state: dict[str, Any], group: str, old: str, new: str, value: Any) -> dict[str, Any]:
    """Checkpoint `state` read as if its settings `state[group]` had `new` = `value` instead of `old`.

    For checkpoints written before a setting was replaced (validation every so many minutes became
    every so many characters or tokens): such a run continues with this run's `value`. A checkpoint
    without `old` is returned as it is.
    """
    settings = state.get(group)
    if not isinstance(settings, dict) or old not in settings:
        return state
    kept = {key: setting for key, setting in settings.items() if key != old}
    return {**state, group: {**kept, new: value}}


StreamProgressT = TypeVar("StreamProgressT", bound=StreamProgress)


class StreamTraining(TrainingLoop[StreamProgressT]):
    """A `TrainingLoop` over a stream of training data: the language models' loops.

    It runs until its `Budget` is spent. Validation points come every `validate_every` units of
    training data (characters, tokens: the budget's `unit`), at the multiples of it, and when the
    budget is spent; so where the run validates, anneals and keeps its best model depends on the data
    seen only, not on the machine's speed or on a resume. Checkpoints follow each validation point,
    the end of the budget and every `checkpoint_minutes` of training time (they do not change the
    model). Training time (`progress.seconds`) is the clock since `begin` plus the seconds of the run
    before a resume; validation and checkpoint writes count as training. A progress bar counts
    `unit`s. A subclass sets `model`, `progress`, `validate_every`, `checkpoint_minutes`, `unit` and
    its `identity()`, and fills in `step()`, `validate()` (ending with `validated()`) and
    `state()`/`load_state()` (starting with `check_identity(state)`).

    Data-parallel (`ranks`, from `flairsuite.runtime.distributed`; one rank by default): every rank runs
    this loop on its share of each batch, and `progress` counts the units of all ranks, so budget and
    validation points fall where a single process with the same global batch puts them. Decisions
    taken by the clock (a time budget, checkpoint intervals) are rank 0's, broadcast. Only rank 0
    shows progress and writes checkpoints; a checkpoint holds `rank_state()` of every rank (random
    generators, a trainer's per-rank state), and `load_rank_states()` gives each rank its own back on
    resume, or, resumed on another number of ranks, what is well defined (the trainer's override).
    """

    model: Any
    unit: str
    validate_every: int
    checkpoint_minutes: float
    seed: int
    budget: Budget = Budget()
    desc: str = "train"
    ranks: Ranks = Ranks()

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match to be resumed by this trainer (settings, data, seed)."""

    def check_identity(self, state: dict[str, Any]) -> None:
        """A one-line error when checkpoint `state` was made with other settings than this trainer's."""
        mismatched = []
        for key, value in self.identity().items():
            theirs = state.get(key)
            if isinstance(value, dict) and isinstance(theirs, dict):
                mismatched += [f"{key}.{name}" for name in sorted(set(value) | set(theirs)) if value.get(name) != theirs.get(name)]
            elif theirs != value:
                mismatched.append(key)
        if mismatched:
            raise FlairsuiteError(
                f"{self.checkpoint_path} was made with other settings ({', '.join(mismatched)} differ); "
                "resume with the same options, or start over with --force"
            )

    def train(self, budget: Budget, desc: str = "train") -> StreamProgressT:
        """Train until `budget` is spent; validation points by units seen, checkpoints also on the clock."""
        self.budget, self.desc = budget, desc
        return self.run()

    def clock(self) -> float:
        """Set `progress.seconds` (and `cpu_seconds`) to the training time now; that time."""
        self.progress.seconds = time.perf_counter() - self._started
        self.progress.cpu_seconds = time.process_time() - self._cpu_started
        return self.progress.seconds

    def begin(self) -> None:
        self.model.train()
        self._last_checkpoint = self.progress.seconds
        self._next_validation = self.next_validation()
        self._spent = (-1, False)
        self.bar = tqdm(
            total=self.budget.max_units, initial=self.progress.units, unit=self.unit, unit_scale=True, desc=self.desc, disable=not self.ranks.main
        )
        self._started = time.perf_counter() - self.progress.seconds
        self._cpu_started = time.process_time() - self.progress.cpu_seconds

    def spent(self) -> bool:
        """Whether the budget is spent, once per step; a time budget is judged by rank 0's clock for all ranks."""
        units = self.progress.units
        if self._spent[0] != units:
            spent = self.budget.spent(self.progress)
            self._spent = (units, self.ranks.agree(spent) if self.budget.timed else spent)
        return self._spent[1]

    def done(self) -> bool:
        return self.spent()

    def next_validation(self) -> int:
        """The units seen at the next validation point: the next multiple of `validate_every`."""
        if self.validate_every <= 0:
            raise FlairsuiteError(f"validate every {self.validate_every} {self.unit}s: must be positive")
        return (self.progress.units // self.validate_every + 1) * self.validate_every

    def validation_due(self) -> bool:
        """At each multiple of `validate_every` units seen, and when the budget is spent."""
        return self.progress.units >= self._next_validation or self.spent()

    def validated(self) -> None:
        """The end of a validation point: the clock, and the next point at the next multiple of `validate_every`."""
        self.clock()
        self._next_validation = self.next_validation()

    def checkpoint_due(self, validated: bool) -> bool:
        """After each validation point, when the budget is spent, and every `checkpoint_minutes` of training time."""
        if validated or self.spent():
            return True
        return self.ranks.agree(self.progress.seconds - self._last_checkpoint >= self.checkpoint_minutes * 60)

    def checkpoint(self) -> None:
        self.save_checkpoint()
        self._last_checkpoint = self.clock()

    # -- ranks ------------------------------------------------------------------------------------

    def rank_state(self) -> dict[str, Any]:
        """What a checkpoint keeps of each rank: its random generators (a trainer adds its per-rank state)."""
        return {"rng": checkpoints.rng_state()}

    def save_checkpoint(self) -> None:
        """Rank 0 writes the checkpoint atomically, with the `rank_state()` of every rank (the others wait)."""
        entries = self.ranks.gather(self.rank_state())
        if self.ranks.main:
            checkpoints.save(self.checkpoint_path, {**self.state(), "rng": entries[0]["rng"], "ranks": entries})
        self.ranks.barrier()

    def restore(self, state: Optional[dict[str, Any]] = None) -> None:
        """Every rank reads the checkpoint (default: from `checkpoint_path`) and takes its part back."""
        if state is None:
            state = checkpoints.load(self.checkpoint_path)
        self.load_state(state)
        self.load_rank_states(state.get("ranks") or [{"rng": state["rng"]}])

    def load_rank_states(self, entries: list[dict[str, Any]]) -> None:
        """Each rank's random generators from a checkpoint of as many ranks; from one of another number
        of ranks they are seeded afresh per rank (the run continues, but not bit for bit)."""
        if len(entries) == self.ranks.world:
            checkpoints.set_rng_state(entries[self.ranks.rank]["rng"])
        else:
            self.seed_rank(self.progress.units)

    def seed_rank(self, salt: int = 0) -> None:
        """Seed this rank's random generators (dropout) apart from the other ranks'; rank 0 of a fresh run is left as it is."""
        if self.ranks.rank == 0 and salt == 0:
            return
        entropy = [self.seed, self.ranks.rank, salt]
        torch.manual_seed(int(np.random.SeedSequence(entropy).generate_state(1)[0]))
        np.random.seed(np.random.SeedSequence(entropy).generate_state(1)[0])

    def finish(self) -> StreamProgressT:
        self.bar.close()
        return self.progress
