"""One process per training folder: an advisory lock on the folder while it trains.

Grids split across processes with `--runs` patterns that overlap, a grid started twice by mistake,
or `train-charlm`/`train-bert --resume` typed in two terminals, would otherwise train the same run or
model at once and overwrite each other's checkpoint. The kernel drops the lock when its process
ends, killed or not, so a killed run stays resumable. The lock file (`.lock`) is git-ignored.
"""

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Optional, TextIO

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_folder, write_json
from flairsuite.runtime.distributed import Ranks

try:
    import fcntl
except ImportError:  # not POSIX (Windows): no advisory locks, a run is never shared there
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


def _lock_handle(lock_file: Path) -> Optional[TextIO]:
    """`lock_file` opened for locking (its folder created); None where the platform has no advisory locks. A folder
    that cannot be created or written is a one-line error."""
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        return open(lock_file, "a", encoding="utf-8") if fcntl is not None else None
    except OSError as err:
        raise FlairsuiteError(f"cannot write to {lock_file.parent}: {err.strerror or err}") from None


@contextmanager
def claimed(run_dir: Path) -> Iterator[bool]:
    """True while this process holds `run_dir`'s lock (created with its folder); False (nothing held) if another process
    holds it. A folder that cannot be created or written is a one-line error."""
    handle = _lock_handle(run_dir / LOCK_FILE)
    if handle is None:
        yield True
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        except OSError as err:  # e.g. ENOLCK on an NFS mount without lockd
            raise FlairsuiteError(f"cannot lock {run_dir / LOCK_FILE}: {err.strerror or err} (the file system takes no advisory locks)") from None
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def waited_for(lock_file: Path, on_wait: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Hold `lock_file`'s advisory lock for the block, waiting while another process holds it (`on_wait` is called once
    before waiting), for work that several processes may need at once and one should do, such as computing an embedding
    cache. Where the file system takes no advisory locks the block runs unlocked: at worst the work is done twice."""
    handle = _lock_handle(lock_file)
    if handle is None:
        yield
        return
    with handle:
        locked = True
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            on_wait()
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:  # e.g. ENOLCK on an NFS mount without lockd
            locked = False
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)


META_FILE = "meta.json"


def folder_built_once(folder: Path, build: Callable[[Path], dict[str, Any]], on_wait: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """The metadata of the cache folder `folder`, built on first use: `build(temp)` fills a temporary folder and returns
    the metadata, written last as `meta.json`; the folder then replaces any unfinished one. Processes needing it at once
    (an LM's two directions started side by side) wait for the first (`on_wait` once) and read what it built."""
    meta_file = folder / META_FILE
    if not meta_file.is_file():
        with waited_for(folder.with_name(folder.name + LOCK_FILE), on_wait):
            if not meta_file.is_file():
                with atomic_folder(folder, force=True) as temp:
                    write_json(temp / META_FILE, build(temp))
    return json.loads(meta_file.read_text(encoding="utf-8"))


HELD, BUSY, FAILED = 1.0, 2.0, 3.0  # what rank 0 tells the other ranks of a torchrun launch


def busy_error(folder: Path) -> FlairsuiteError:
    return FlairsuiteError(f"{folder} is being trained by another process (it holds {folder / LOCK_FILE}): wait for it to end, or stop it first")


@contextmanager
def held(folder: Path, ranks: Ranks = Ranks()) -> Iterator[None]:
    """Hold `folder`'s lock while the block trains into it; another process holding it, or a folder that cannot be created
    or locked, is a one-line error. In a torchrun launch rank 0 holds the lock and tells the other ranks whether it could,
    so that every rank stops with an error instead of waiting for rank 0 at a barrier."""
    if not ranks.main:
        state = ranks.broadcast_value(0.0)
        if state == BUSY:
            raise busy_error(folder)
        if state != HELD:
            raise FlairsuiteError(f"cannot write to or lock {folder} (rank 0's error says why)")
        yield
        return
    with ExitStack() as stack:
        try:
            mine = stack.enter_context(claimed(folder))
        except FlairsuiteError:
            ranks.broadcast_value(FAILED)
            raise
        ranks.broadcast_value(HELD if mine else BUSY)
        if not mine:
            raise busy_error(folder)
        yield


def being_trained(folder: Path) -> bool:
    """Whether another process holds `folder`'s lock now, i.e. trains into it. The probe takes a shared lock, so probes of
    processes reading the same model (grid workers) never see each other; a trainer starting in the very instant of a
    probe is told the folder is busy and can simply be started again."""
    lock_file = folder / LOCK_FILE
    if fcntl is None or not lock_file.is_file():
        return False
    try:
        with open(lock_file, encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:  # unreadable, or a file system without advisory locks: nothing to tell
        return False
    return False


def refuse_if_busy(folder: Path) -> None:
    """A one-line error now, before costly preparation, if another process holds `folder` (held() checks again when it takes it)."""
    if being_trained(folder):
        raise busy_error(folder)
