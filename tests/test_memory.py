"""Peak memory sampling (flairsuite/memory.py): anonymous allocations count, pages of a memory-mapped file do not."""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

from flairsuite.memory import PeakMemory, current_mb

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
MB = 2**20


def test_an_allocation_raises_the_anonymous_peak() -> None:
    # measured against the process's own reading while the block is held, not against a baseline taken before: a busy
    # worker may free memory of earlier tests meanwhile (CI: a 300 MiB block once read as +246 MiB over "before")
    with PeakMemory(interval=0.01) as peak:
        block = np.ones(300 * MB, dtype=np.uint8)  # touched: resident
        held = current_mb()["RssAnon"]
        waited = time.monotonic() + 5  # held until the sampling thread has seen it (on a busy machine it is scheduled late)
        while (peak.anon_mb or 0) < held - 10 and time.monotonic() < waited:
            time.sleep(0.01)
        del block  # a large block is its own mapping: freed at once
    freed = held - current_mb()["RssAnon"]
    assert freed >= 250  # the block was anonymous memory
    assert peak.anon_mb >= held - 10  # and the sampler saw it
    assert peak.rss_mb >= peak.anon_mb
    assert set(peak.record()) == {"peak_rss_anon_mb", "peak_rss_mb"}


def test_reading_a_memory_map_is_not_anonymous(tmp_path: Path) -> None:
    path = tmp_path / "cache.npy"
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(150 * MB // 2,))
    array[:] = 1
    array.flush()
    del array
    mapped = np.load(path, mmap_mode="r")
    before = current_mb()
    with PeakMemory(interval=0.01) as peak:
        total = sum(float(mapped[start : start + MB].sum(dtype=np.float32)) for start in range(0, len(mapped), MB))
    assert total == len(mapped)
    assert peak.rss_mb - before["VmRSS"] >= 100  # the file's pages became resident ...
    assert peak.anon_mb - before["RssAnon"] < 30  # ... but not as the process's own memory
