"""One process per training folder: an advisory lock on the folder while it trains.

Grids split across processes with `--runs` patterns that overlap, a grid started twice by mistake,
or `train-charlm`/`train-bert --resume` typed in two terminals, would otherwise train the same run or
model at once and overwrite each other's checkpoint. The kernel drops the lock when its process
ends, killed or not, so a killed run stays resumable. The lock file (`.lock`) is git-ignored.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flairsuite.errors import FlairsuiteError

try:
    import fcntl
except ImportError:  # not POSIX (Windows): no advisory locks, a run is never shared there
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


@contextmanager
def claimed(run_dir: Path) -> Iterator[bool]:
    """True while this process holds `run_dir`'s lock (created with its folder); False (nothing held) if another process
    holds it. A folder that cannot be created or written is a one-line error."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        handle = open(run_dir / LOCK_FILE, "a", encoding="utf-8") if fcntl is not None else None
    except OSError as err:
        raise FlairsuiteError(f"cannot write to {run_dir}: {err.strerror or err}") from None
    if handle is None:
        yield True
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def held(folder: Path) -> Iterator[None]:
    """Hold `folder`'s lock while the block trains into it; another process holding it is a one-line error."""
    with claimed(folder) as mine:
        if not mine:
            raise FlairsuiteError(f"{folder} is being trained by another process (it holds {folder / LOCK_FILE}): "
                                  "wait for it to end, or stop it first")
        yield
