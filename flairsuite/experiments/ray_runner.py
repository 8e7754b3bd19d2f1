"""`flairsuite tag EXP --ray local|auto|ADDRESS`: the pending runs of a grid as Ray tasks.

The driver (this process) plans the grid exactly as `flairsuite tag` does (`plan_experiment`), then

1. computes the frozen embeddings once: one task per (corpus, embedding spec, split) that some
   pending run needs, written to the embedding cache (`--cache-dir`, on storage every node sees);
2. submits one task per pending run with its request (`--threads` CPUs, `--gpus` GPUs); Ray
   decides where each runs, so no run lock is involved. A task trains, scores and writes the
   run's folder exactly as the single-process path does. When its worker process dies (killed,
   out of memory, node lost) Ray starts the task again (`--ray-retries`), and the run continues
   from its last epoch checkpoint; an error of the run itself (bad input) is not retried;
3. reports each run as it finishes and, at the end, the runs that failed (one line each).

`local` starts a Ray instance on this machine with its cores; `auto` joins the cluster of
$RAY_ADDRESS (or the one started on this node by `ray start`); anything else is a cluster address.
A worker's log lines (Flair's among them) reach the driver's stderr, prefixed by Ray with the task and its
process id; stdout holds the driver's report alone. Workers need flairsuite installed and the same paths: $FLAIRSUITE_HOME (LMs, word vectors, BERTs,
results), the corpora folder and the cache must be shared storage on a cluster.
"""

import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import torch
from tqdm import tqdm

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.grid import Run
from flairsuite.experiments.run_data import TRAIN_WITH_DEV, GridData
from flairsuite.experiments.runner import CHECKPOINT_FILE, GridPlan, train_and_record
from flairsuite.logs import logs_to_stderr
from flairsuite.runtime.allocator import bound_primitive_cache
from flairsuite.tagging.cache import frozen


@dataclass(frozen=True)
class RayRequest:
    """Where and with what each task runs."""

    address: str  # local, auto or a cluster address
    cpus: int = 1  # per task (torch threads)
    gpus: float = 0.0  # per run task
    retries: int = 3  # restarts of a task whose worker process died


def splits_of(run: Run) -> tuple[str, ...]:
    """The corpus splits a run reads."""
    return (TRAIN_WITH_DEV if run.train_settings["train_with_dev"] else "train", "dev", "test")


def embedding_jobs(plan: GridPlan) -> list[tuple[CorpusChoice, str, str]]:
    """(corpus, spec, split) of every frozen embedding the pending runs read, each once."""
    jobs: dict[tuple[str, str, str], tuple[CorpusChoice, str, str]] = {}
    for run, _ in plan.todo:
        for spec in run.embedding_specs:
            if frozen(spec, run.fine_tune):
                for split in splits_of(run):
                    jobs.setdefault((run.corpus.key, spec, split), (run.corpus, spec, split))
    return list(jobs.values())


def start_ray(address: str) -> Any:
    """Start or join Ray; a one-line error when it cannot be reached or is not installed."""
    try:
        import ray
    except ImportError:
        raise FlairsuiteError("--ray needs Ray: pip install 'flairsuite[ray]'") from None
    # the workers' log lines come to the driver's stderr: Flair's and the suite's are collected in the task and sent back
    # with its result (`collected_logs`; Ray's own forwarding drops what a worker writes just before shutdown), anything
    # else a worker writes is forwarded by Ray (its stdout to the driver's stdout, hence logs_to_stderr in each task);
    # their progress bars stay off, one line per refresh would flood it
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True, "configure_logging": False,
                               "runtime_env": {"env_vars": {"TQDM_DISABLE": "1"}}}
    if address not in ("local", "auto"):
        reachable(address)
    try:
        if address == "local":  # a new instance, even where $RAY_ADDRESS names a cluster
            ray.init(address="local", num_cpus=os.cpu_count() or 1, **options)
        else:  # "auto": $RAY_ADDRESS or the cluster this node belongs to; else an address
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise FlairsuiteError(f"--ray {address}: cannot start or join Ray ({str(err).splitlines()[0]})") from None
    return ray


def reachable(address: str, seconds: float = 5.0) -> None:
    """A one-line error unless HOST:PORT (a Ray cluster's GCS, `ray://` client addresses included) accepts a connection.

    Ray itself keeps retrying an unreachable address for minutes.
    """
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        raise FlairsuiteError(f"--ray {address}: not local, auto or HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as err:
        raise FlairsuiteError(f"--ray {address}: cannot start or join Ray (no answer at {host}:{port}: {err.strerror or err})") from None


def _prepare_worker(cpus: int) -> None:
    """A worker's logs to its stderr (`flairsuite.logs`), its torch threads, and oneDNN's cache bounded (allocator.py) before its
    first primitive."""
    import torch

    logs_to_stderr()
    bound_primitive_cache()
    torch.set_num_threads(max(1, int(cpus)))


LOGGERS = ("flair", "flairsuite")  # whose lines a task collects and sends back with its result
LOG_FORMAT = "%(asctime)-15s %(message)s"  # Flair's


class _Collector(logging.Handler):
    """A handler that keeps the formatted lines in a list."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.setFormatter(logging.Formatter(LOG_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def collected_logs() -> Iterator[list[str]]:
    """Flair's and the suite's log lines of a task, in a list instead of the worker's stderr, to return with its result."""
    lines: list[str] = []
    loggers = [logging.getLogger(name) for name in LOGGERS]
    saved = [(logger.handlers[:], logger.propagate) for logger in loggers]
    for logger in loggers:
        logger.handlers, logger.propagate = [_Collector(lines)], False
    try:
        yield lines
    finally:
        for logger, (handlers, propagate) in zip(loggers, saved):
            logger.handlers, logger.propagate = handlers, propagate


def embed_task(
    home: str, corpora_root: str, cache: Optional[str], corpus: CorpusChoice, spec: str, split: str, cpus: int
) -> tuple[bool, list[str]]:
    """Compute (or find) the cached vectors of one split under one spec; whether they were computed now, and the log lines."""
    _prepare_worker(cpus)
    with collected_logs() as logs:
        data = GridData(Path(home), Path(corpora_root), cache=Path(cache) if cache else None)
        data.array(corpus, spec, split)
    return data.computed > 0, logs


def run_task(
    home: str, corpora_root: str, cache: Optional[str], run: Run, run_digest: str, out: str, digests: dict[str, str], cpus: int
) -> tuple[list[str], list[str]]:
    """Train one run into its folder below `out` (resuming its checkpoint after a retry); its report lines and log lines."""
    _prepare_worker(cpus)
    with collected_logs() as logs:
        data = GridData(Path(home), Path(corpora_root), cache=Path(cache) if cache else None)
        saved = checkpoint_epoch(Path(out) / run.run_id / CHECKPOINT_FILE, run_digest)
        lines = train_and_record(run, run_digest, data, Path(out), digests)
    return ([f"{run.run_id}: continued from its checkpoint after epoch {saved}"] if saved else []) + lines, logs


def relay(label: str, logs: list[str]) -> None:
    """A task's log lines on the driver's stderr, each after the task's label."""
    for line in logs:
        tqdm.write(f"({label}) {line}", file=sys.stderr)


def checkpoint_epoch(path: Path, key: str) -> Optional[int]:
    """The epoch a run's checkpoint was saved after, when it belongs to this run (`key`: its fingerprint); else None."""
    if not path.is_file():
        return None
    try:
        import torch

        state = torch.load(path, map_location="cpu", weights_only=False)
        return int(state["progress"].epoch) if state.get("key") == key else None
    except Exception:  # a damaged checkpoint: the training reports it
        return None


def failure_line(error: Exception) -> str:
    """The one line a failed task reports: a FlairsuiteError's message, or the kind of failure."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, FlairsuiteError):
        return str(cause)
    text = str(cause if cause is not None else error).strip().splitlines()
    return f"{type(cause or error).__name__}: {text[-1] if text else ''}"


def wait_all(ray: Any, refs: dict[Any, str], desc: str, unit: str, report: Callable[[str, Any], None]) -> dict[str, str]:
    """Wait for every task of `refs` (ref -> label) with a progress bar; `report(label, result)` for each success; failures by label."""
    failed: dict[str, str] = {}
    pending = list(refs)
    with tqdm(total=len(pending), desc=desc, unit=unit) as bar:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                try:
                    report(refs[ref], ray.get(ref))
                except Exception as err:  # a task's error arrives wrapped by Ray
                    failed[refs[ref]] = failure_line(err)
                bar.update(1)
    return failed


def run_experiment_on_ray(
    plan: GridPlan, home: Path, corpora_root: Path, request: RayRequest, echo: Callable[[str], None] = print, cache: Optional[Path] = None
) -> Path:
    """Run the pending runs of `plan` as Ray tasks (module docstring); its results folder. Failed runs end in one error listing them."""
    if not plan.todo:
        echo("nothing to train: Ray not started")
        return plan.out
    if request.address == "local" and not request.gpus:  # the tasks run on this CPU: refuse what it cannot train first
        plan.refuse_untrainable_precision(torch.device("cpu"))
    ray = start_ray(request.address)
    started = time.perf_counter()
    try:
        common = (str(home), str(corpora_root), str(cache) if cache else None)
        embed = ray.remote(embed_task).options(num_cpus=request.cpus, max_retries=request.retries)
        jobs = embedding_jobs(plan)
        computed: list[str] = []
        refs = {embed.remote(*common, corpus, spec, split, request.cpus): f"{corpus.key} {split} {spec}" for corpus, spec, split in jobs}
        failed = wait_all(ray, refs, "embeddings", "split", lambda label, made: (relay(label, made[1]), made[0] and computed.append(label)))
        if failed:
            raise FlairsuiteError("embedding failed: " + "; ".join(f"{label}: {line}" for label, line in failed.items()))
        task = ray.remote(run_task).options(num_cpus=request.cpus, num_gpus=request.gpus, max_retries=request.retries)
        refs = {
            task.remote(*common, run, run_digest, str(plan.out.resolve()), plan.digests, request.cpus): run.run_id for run, run_digest in plan.todo
        }
        failed = wait_all(ray, refs, plan.config.name, "run", lambda label, done: (relay(label, done[1]), [tqdm.write(line) for line in done[0]]))
    finally:
        ray.shutdown()
    echo(f"trained {len(plan.todo) - len(failed)} runs on Ray in {time.perf_counter() - started:.0f} s; embeddings computed for "
         f"{len(computed)} (corpus split, embedding) pairs of {len(jobs)}, the rest read from the cache")
    if failed:
        for run_id, line in failed.items():
            echo(f"{run_id}: failed: {line}")
        raise FlairsuiteError(f"{len(failed)} of {len(plan.todo)} runs failed (listed above); run the command again to retry them")
    return plan.out
