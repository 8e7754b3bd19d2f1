"""What every benchmark script shares: the machine description in its results, and its exit path."""

import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import flair
import torch

from flairsuite.errors import FlairsuiteError


def cpu_name() -> str:
    """The CPU's model name (Linux), else what `platform` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor()


def machine(threads: int, **extra: Any) -> dict[str, Any]:
    """CPU, cores, threads, load and library versions, plus `extra`, for a results JSON."""
    return {
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "threads": threads,
        "load_average": os.getloadavg(),
        **extra,
        "torch": torch.__version__,
        "flair": flair.__version__,
        "python": platform.python_version(),
    }


def run_main(main: Callable[[], int]) -> None:
    """Run a benchmark's `main`: a FlairsuiteError or Ctrl-C ends it with one line."""
    try:
        sys.exit(main())
    except FlairsuiteError as err:
        sys.exit(f"error: {err}")
    except KeyboardInterrupt:
        sys.exit("interrupted")


def letters(count: int, joiner: str = " ") -> list[str]:
    """Short letters: runs of 2 to 6 consecutive sentences of Sturm's test set (its tokens joined by spaces), the
    sentences joined by `joiner`."""
    from flairsuite.corpora.labeled import read_splits
    from flairsuite.corpora.registry import dataset
    from flairsuite.files.paths import corpora_dir

    sentences = [" ".join(s.tokens) for s in read_splits(dataset("sturm"), corpora_dir(), ["test"])["test"].sentences]
    found, at, size = [], 0, 2
    while len(found) < count:
        start = at % len(sentences)
        found.append(joiner.join(sentences[start : start + size]))
        at, size = at + size, size + 1 if size < 6 else 2
    return found
