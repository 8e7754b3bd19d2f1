"""torch's thread count when a command is given no `--threads`: the cores this process may use that other processes leave free.

The rule (`choose_threads`): threads = the usable cores less the cores other processes keep busy, a core counting as free
while at most `SLACK` (0.3) of it is taken, never fewer than 1 (nor than a command's independent workers, below) nor
more than the usable cores.

- usable cores: the physical cores among the CPUs this process may run on (`os.sched_getaffinity`; hyperthread siblings
  count once, as torch's own default does), capped by a cgroup CPU quota where one is set;
- busy cores: the share of those CPUs' time that was not idle over a window (/proc/stat, `cpuN` lines), less this
  process's own CPU time over it (`os.times`). The window opens when the command starts (`prepare_for_torch`) and
  closes when torch is first imported, at least `WINDOW` (0.15 s) long: a command pays for the part of it that its
  own imports did not already fill, and a command that never loads torch (`--help`, `corpora`, `results`) pays nothing.
  Without /proc/stat (not Linux): the 1-minute load average.

Why: two torch threads meet after every small operation (a BiLSTM step is many of them). When another process holds one
of 2 cores, each meeting waits for the thread whose core is taken: `flairsuite quickstart` beside other jobs ran at 6-8 s
a batch with torch's default (2 threads) and was still in its first of three runs after 40 minutes, while `--threads 1`
beside the same jobs finished all three in 10.6 minutes. Why /proc/stat and not the load average: one read costs about
0.1 ms, and over a window it measures what the usable CPUs did just now; the load average counts the runnable tasks of
the whole host (a container's neighbours, CPUs outside the affinity mask) and follows a change with a one-minute lag.
Measured on a 2-core machine kept busy by other jobs: 0.05 s windows read 1.8-2.4 busy cores, 0.1 s 1.9-2.2,
0.2 s 1.95-2.0 (the tick is 10 ms a CPU), hence 0.15 s.

Per command shape (`workers`): a command whose torch work runs in independent workers that meet once a batch (the
fast path of predict, serve and evaluate tags with the LM pair in two threads of one intra-op thread each) gets at
least that many threads, up to the usable cores: beside other work each worker still gets its share of a core, and none
waits for another after every step. Measured on the 2-core machine under a load average of 7-8: predict of 11,972 tokens
with a BiLSTM-CRF over the quickstart's stack took 16.9 and 16.6 s with 2 threads against 20.6 and 20.3 s with 1,
while a 1-epoch `tag` of the same stack (benchmarks/contention.py) took 128 and 40 s with torch's 2 threads against 35
and 33 s with the rule's 1 (load average 8-10 and 5-6), and beside one more busy loop 258 and 139 s against 70 and 70 s.

OpenMP's wait policy: torch's CPU wheel brings GNU OpenMP (libgomp), whose threads spin for a while at each meeting
before they sleep; beside other processes that spinning takes CPU time they need. `prepare_for_torch` sets
`OMP_WAIT_POLICY=PASSIVE` (read once, when libgomp loads with torch) unless the environment already sets it.

What wins: `--threads N` (`apply`), then `OMP_NUM_THREADS` from the environment (torch reads it; the rule leaves it),
then the rule. `FLAIRSUITE_THREADS_POLICY=torch` turns the rule and the wait policy off: torch's own default, one thread
per core whatever else runs (the behaviour before; benchmarks/contention.py compares the two).

Long work looks again (`recheck`): the training loops call it after every step and batch, and where the rule chose the
count, every RECHECK (60) seconds it reads the busy cores over the time since its last look and sets torch's count anew
when the rule's count changed. A `tag` or `train-charlm` started on a quiet machine so drops to one thread when another
job starts beside it (two threads then ran a 1-epoch `tag` 3.7 times slower than one, above), and takes both cores
again when that job ends. A 60-second window reads the load far more surely than the 0.15 s one at the start, and
costs one read of /proc/stat a minute; `--threads` and the environment's choices are never changed. Seen on the 2-core
machine: a `tag` of Sturm (BiLSTM-CRF, word vectors alone) started alone took 9 s an epoch with 2 threads, 16-18 s once
two one-thread trainings started beside it, and 10 s after its next look set 1 thread ("now 1.42 cores busy").

The chosen count goes to the log at INFO (logger `flairsuite.runtime.threads`, stderr); a tagging run also records its
threads in metrics.json (the count at its start).
"""

import logging
import math
import os
import sys
import time
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any, MutableMapping, Optional, Sequence

log = logging.getLogger(__name__)

SLACK = 0.3  # a core counts as free while other processes take at most this share of it
WINDOW = 0.15  # seconds: the shortest window of /proc/stat that reads a core's load within about 0.1
RECHECK = 60.0  # seconds between two looks at the busy cores during long work (`recheck`)
POLICY_ENV = "FLAIRSUITE_THREADS_POLICY"  # "torch": leave torch's default and libgomp's wait policy alone
WAIT_POLICY = "OMP_WAIT_POLICY"
NUM_THREADS = "OMP_NUM_THREADS"
CPU_ROOT = Path("/sys/devices/system/cpu")
CGROUP_ROOT = Path("/sys/fs/cgroup")


def choose_threads(cores: int, busy: float, workers: int = 1) -> int:
    """Threads for `cores` usable cores of which other processes keep `busy` cores' worth of time: the free cores (a
    core is free while at most SLACK of it is busy), at least 1, at most `cores`; and at least `workers` (up to
    `cores`) for a command whose threads work side by side on their own and meet once a batch, not after every step."""
    free = cores - max(0.0, busy)
    return max(1, min(cores, max(workers, math.floor(free + SLACK + 1e-9))))


def affinity() -> set[int]:
    """The CPUs this process may run on (all of them where the platform cannot say)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def physical_cores(cpus: set[int], root: Path = CPU_ROOT) -> int:
    """How many physical cores `cpus` span: hyperthread siblings (one `thread_siblings_list`) count once."""
    siblings = set()
    for cpu in cpus:
        try:
            siblings.add((root / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip())
        except OSError:
            siblings.add(str(cpu))
    return max(1, len(siblings))


def cpu_quota(root: Path = CGROUP_ROOT) -> Optional[float]:
    """The cgroup's CPU quota in cores (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`), None where there is none."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    if quota in ("max", "-1") or not quota.lstrip("-").isdigit() or not period.isdigit() or int(period) <= 0:
        return None
    return int(quota) / int(period)


def usable_cores(cpus: set[int]) -> int:
    """The physical cores among `cpus`, capped by the cgroup's CPU quota (whole cores, at least 1)."""
    cores = physical_cores(cpus)
    quota = cpu_quota()
    return cores if quota is None else max(1, min(cores, math.floor(quota)))


@dataclass(frozen=True)
class Reading:
    """One look at the CPUs: their busy and total clock ticks (/proc/stat; None without it), this process's CPU seconds,
    the time."""

    busy: Optional[int]
    total: Optional[int]
    own: float
    at: float


def cpu_ticks(cpus: set[int], stat: Path = Path("/proc/stat")) -> tuple[Optional[int], Optional[int]]:
    """Busy and total ticks of `cpus` since boot (idle and iowait are not busy); (None, None) without /proc/stat."""
    busy = total = 0
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            ticks = [int(field) for field in fields[:8]]
            total += sum(ticks)
            busy += sum(ticks) - ticks[3] - ticks[4]
    return (busy, total) if total else (None, None)


def read_cpus(cpus: set[int]) -> Reading:
    """The CPUs' ticks, this process's CPU time and the clock, now."""
    busy, total = cpu_ticks(cpus)
    own = os.times()
    return Reading(busy, total, own.user + own.system, time.monotonic())


def busy_cores(start: Reading, end: Reading, cpus: int) -> float:
    """Cores' worth of time other processes took between the readings (the load average where /proc/stat is missing)."""
    if start.busy is None or end.busy is None or end.total == start.total:
        try:
            return os.getloadavg()[0]
        except OSError:
            return 0.0
    share = (end.busy - start.busy) / (end.total - start.total)
    own = (end.own - start.own) / max(end.at - start.at, 1e-3)
    return max(0.0, share * cpus - own)


@dataclass
class Choice:
    """This process's default: the window's first reading, and the count once chosen; whether the rule keeps the count
    (`ruling`: no --threads, no choice of the environment) for how many independent `workers`, and its last look."""

    start: Optional[Reading] = None
    threads: Optional[int] = None
    cores: int = 1
    busy: float = 0.0
    ruling: bool = False
    workers: int = 1
    last: Optional[Reading] = None


CHOICE = Choice()


def default_threads() -> int:
    """The rule's count for this process, chosen once: the window since `prepare_for_torch` (or from now), at least WINDOW."""
    if CHOICE.threads is None:
        cpus = affinity()
        start = CHOICE.start or read_cpus(cpus)
        time.sleep(max(0.0, WINDOW - (time.monotonic() - start.at)))
        CHOICE.busy = busy_cores(start, read_cpus(cpus), len(cpus))
        CHOICE.cores = usable_cores(cpus)
        CHOICE.threads = choose_threads(CHOICE.cores, CHOICE.busy)
        log.info("torch threads: %d (%d usable cores, %.2f busy with other processes; --threads N to set)", CHOICE.threads,
                 CHOICE.cores, CHOICE.busy)
    return CHOICE.threads


def torch_policy(environ: MutableMapping[str, str]) -> bool:
    """Whether FLAIRSUITE_THREADS_POLICY=torch asks for torch's own default (and libgomp's own wait policy)."""
    return environ.get(POLICY_ENV, "").strip().lower() == "torch"


def leaves_torch_alone(environ: MutableMapping[str, str]) -> bool:
    """Whether the environment decides instead of the rule: FLAIRSUITE_THREADS_POLICY=torch, or OMP_NUM_THREADS set."""
    return torch_policy(environ) or bool(environ.get(NUM_THREADS))


class BeforeTorch:
    """An import hook that, the first time `torch` is imported, puts the rule's count in OMP_NUM_THREADS (torch's default
    thread count) and removes itself; it imports nothing itself."""

    def __init__(self, environ: MutableMapping[str, str], meta_path: list[Any]) -> None:
        self.environ, self.meta_path = environ, meta_path

    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Optional[ModuleSpec]:
        if name == "torch":
            if self in self.meta_path:
                self.meta_path.remove(self)
            if not leaves_torch_alone(self.environ):
                try:
                    self.environ[NUM_THREADS] = str(default_threads())
                    CHOICE.ruling, CHOICE.last = True, read_cpus(affinity())  # the rule keeps the count (`recheck`)
                except Exception as err:  # noqa: BLE001  (a failed guess must not fail torch's import: torch's default then)
                    log.debug("torch threads: no choice (%s)", err)
        return None  # the ordinary finders import it


def prepare_for_torch(environ: MutableMapping[str, str] = os.environ, meta_path: Optional[list[Any]] = None) -> None:
    """At a command's start, before torch loads: libgomp's wait policy passive (unless set), the busy window opened, and
    the rule's count put in OMP_NUM_THREADS when torch is first imported (unless the environment decides). Reads
    /proc/stat once (about 0.1 ms), waits for nothing."""
    meta_path = sys.meta_path if meta_path is None else meta_path
    if torch_policy(environ):
        return
    environ.setdefault(WAIT_POLICY, "PASSIVE")
    if leaves_torch_alone(environ) or "torch" in sys.modules or any(isinstance(hook, BeforeTorch) for hook in meta_path):
        return
    CHOICE.start = CHOICE.start or read_cpus(affinity())
    meta_path.insert(0, BeforeTorch(environ, meta_path))


def apply(threads: Optional[int], workers: int = 1, environ: MutableMapping[str, str] = os.environ) -> None:
    """A command's `--threads`: torch's intra-op threads at N when given (the rule no longer looks again); else the rule's
    count for a command of `workers` independent workers, unless the environment decides (OMP_NUM_THREADS of its own, the
    torch policy)."""
    CHOICE.ruling = False
    if threads:
        import torch

        torch.set_num_threads(threads)
        log.info("torch threads: %d (--threads)", threads)
        return
    if CHOICE.threads is None and leaves_torch_alone(environ):
        return
    import torch  # where the hook is in place, it chooses (and records CHOICE.threads) on this import

    default_threads()  # chosen once, with the usable and busy cores it read
    wanted = choose_threads(CHOICE.cores, CHOICE.busy, workers)
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
        log.info("torch threads: %d (%d independent workers)", wanted, workers)
    CHOICE.ruling, CHOICE.workers, CHOICE.last = True, workers, read_cpus(affinity())


def recheck(now: Optional[float] = None) -> Optional[int]:
    """During long work: where the rule keeps torch's count and RECHECK seconds have passed since its last look, the busy
    cores over that time and torch's count set to the rule's count for them; the count where it changed, else None."""
    if not CHOICE.ruling or CHOICE.last is None:
        return None
    if (time.monotonic() if now is None else now) - CHOICE.last.at < RECHECK:
        return None
    cpus = affinity()
    reading = read_cpus(cpus)
    busy = busy_cores(CHOICE.last, reading, len(cpus))
    CHOICE.last = reading
    wanted = choose_threads(CHOICE.cores, busy, CHOICE.workers)
    import torch

    if torch.get_num_threads() == wanted:
        return None
    torch.set_num_threads(wanted)
    log.info("torch threads: %d (now %.2f cores busy with other processes)", wanted, busy)
    return wanted
