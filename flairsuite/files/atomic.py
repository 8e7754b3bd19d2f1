"""Atomic writes: a file gets its final name only once it is complete (temp file + os.replace)."""

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flairsuite.errors import FlairsuiteError


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(target: Path) -> Iterator[Path]:
    """A temporary file next to `target` that becomes `target` only if the block succeeds."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as err:
        raise FlairsuiteError(f"cannot write {target}: {err.strerror or err}") from None
    os.close(handle)
    temp = Path(name)
    temp.chmod(0o666 & ~current_umask())
    try:
        yield temp
        try:
            os.replace(temp, target)
        except OSError as err:
            raise FlairsuiteError(f"cannot write {target}: {err.strerror or err}") from None
    finally:
        temp.unlink(missing_ok=True)


def write_text(target: Path, text: str) -> None:
    """Write `text` (UTF-8) to `target` atomically."""
    with atomic_file(target) as temp:
        temp.write_text(text, encoding="utf-8")


def write_json(target: Path, data: Any) -> None:
    """Write `data` as indented JSON to `target` atomically."""
    write_text(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def remove_stale_parts(target: Path) -> None:
    """Delete the temporary folders of `target` that a killed process left (`.NAME.PID.part` whose PID runs no more):
    a kill cannot run `atomic_folder`'s cleanup, and a folder may hold gigabytes (a fastText model)."""
    for part in target.parent.glob(f".{target.name}.*.part"):
        pid = part.name[len(target.name) + 2 : -len(".part")]
        if pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(part, ignore_errors=True)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def atomic_folder(target: Path, force: bool) -> Iterator[Path]:
    """A temporary folder next to `target` that replaces `target` only if the block succeeds.

    An existing `target` is an error unless `force`; the error comes before any work is done.
    """
    if target.exists() and not force:
        raise FlairsuiteError(f"{target} exists: pass --force to replace it")
    remove_stale_parts(target)
    temp = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir(parents=True)
    except OSError as err:
        raise FlairsuiteError(f"cannot write to {target.parent}: {err.strerror or err}") from None
    try:
        yield temp
        old = target.with_name(f".{target.name}.{os.getpid()}.old")
        if target.exists():
            os.replace(target, old)
        os.replace(temp, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
