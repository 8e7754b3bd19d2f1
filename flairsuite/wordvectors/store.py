"""Where word vectors live, and writing their folder atomically (it appears complete or not at all)."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flairsuite.errors import FlairsuiteError

VECTORS_FILE = "vectors.kv"  # gensim KeyedVectors.save; big arrays go to side files `vectors.kv.*.npy`


def vectors_folder(out: Path, name: str) -> Path:
    """The folder of the vectors named `name` (a language) below `out`: `<out>/<name>-fasttext`."""
    return out / f"{name}-fasttext"


def vectors_files(folder: Path) -> list[Path]:
    """The vectors file and its gensim side files, sorted."""
    return sorted(p for p in folder.glob(f"{VECTORS_FILE}*") if p.is_file())


@contextmanager
def atomic_folder(target: Path, force: bool) -> Iterator[Path]:
    """A temporary folder next to `target` that replaces `target` only if the block succeeds.

    An existing `target` is an error unless `force`; the error comes before any work is done.
    """
    if target.exists() and not force:
        raise FlairsuiteError(f"{target} exists: pass --force to replace it")
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
