"""One process per run: an advisory lock on the run folder while it trains.

Grids split across processes with `--runs` patterns that overlap, or a grid started twice by
mistake, would otherwise train the same run at once and overwrite each other's checkpoint. The
kernel drops the lock when its process ends, killed or not, so a killed run stays resumable.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX (Windows): no advisory locks, a run is never shared there
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


@contextmanager
def claimed(run_dir: Path) -> Iterator[bool]:
    """True while this process holds `run_dir`'s lock; False (nothing held) if another process holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield True
        return
    with open(run_dir / LOCK_FILE, "a", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
