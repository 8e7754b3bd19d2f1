"""Which way `flairsuite tag` runs an experiment, decided in one place: its active-learning simulation, its self-training
studies, its grid as Ray tasks, or its grid in this process. The experiment comes read once (`reading.read_experiment`); the command's options
come as one `TagRequest`."""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.reading import Experiment
from flairsuite.runtime.threads import apply as apply_threads


@dataclass(frozen=True)
class TagRequest:
    """What `flairsuite tag` was asked besides the file: where things are, which runs, and how to run them."""

    home: Path
    corpora_root: Path
    force: bool = False
    keep_finished: bool = False
    patterns: tuple[str, ...] = ()
    cache: Optional[Path] = None
    threads: Optional[int] = None
    ray_address: Optional[str] = None
    gpus: float = 0
    ray_retries: int = 3

    def __post_init__(self) -> None:
        if self.gpus and not self.ray_address:
            raise FlairsuiteError("--gpus is the request of each Ray task: use it with --ray")


def run_tag(experiment: Experiment, request: TagRequest, echo: Callable[[str], None] = print) -> Path:
    """Run the experiment as `request` says; its results folder."""
    if experiment.config.active_learning is not None:
        if request.ray_address:
            raise FlairsuiteError(f"{experiment.path}: an active_learning simulation runs its rounds in one process: leave out --ray")
        from flairsuite.experiments.simulation import run_simulation

        set_threads(request.threads)
        return run_simulation(experiment, request.home, request.corpora_root, request.force, echo, request.cache, request.patterns)
    if experiment.config.self_training is not None:
        if request.ray_address:
            raise FlairsuiteError(f"{experiment.path}: self-training runs its rounds in one process: leave out --ray "
                                  "(--runs gives a second process other studies)")
        from flairsuite.experiments.self_training import run_self_training

        set_threads(request.threads)
        return run_self_training(experiment, request.home, request.corpora_root, request.force, echo, request.cache, request.patterns)
    if request.ray_address:
        from flairsuite.experiments.ray_runner import RayRequest, run_experiment_on_ray
        from flairsuite.experiments.runner import plan_experiment

        plan = plan_experiment(experiment, request.home, request.force, echo, request.patterns, request.keep_finished, request.corpora_root)
        ray = RayRequest(request.ray_address, request.threads or 1, request.gpus, request.ray_retries)
        cache = request.cache.resolve() if request.cache else None
        return run_experiment_on_ray(plan, request.home.resolve(), request.corpora_root.resolve(), ray, echo, cache)
    from flairsuite.experiments.runner import run_experiment

    set_threads(request.threads)
    return run_experiment(experiment, request.home, request.corpora_root, request.force, echo, request.patterns, request.cache,
                          request.keep_finished)


def set_threads(threads: Optional[int]) -> None:
    """torch's intra-op threads, where given (else the count the thread rule chose as torch loaded: `runtime.threads`)."""
    if threads:
        apply_threads(threads)
