"""Peak memory sampling (flairsuite/runtime/memory.py): anonymous allocations count, pages of a memory-mapped file do not."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flairsuite.runtime.memory import PeakMemory, current_mb

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
MB = 2**20


ALLOCATION = """
import json, time
import numpy as np
from flairsuite.runtime.memory import PeakMemory, current_mb
before = current_mb()["RssAnon"]
with PeakMemory(interval=0.01) as peak:
    block = np.ones(300 * 2**20, dtype=np.uint8)  # touched: resident
    held = current_mb()["RssAnon"]
    waited = time.monotonic() + 5  # until the sampling thread has seen it (on a busy machine it is scheduled late)
    while (peak.anon_mb or 0) < held - 10 and time.monotonic() < waited:
        time.sleep(0.01)
    del block
print(json.dumps({"before": before, "held": held, "after": current_mb()["RssAnon"], "peak": peak.anon_mb, "rss": peak.rss_mb,
                  "record": sorted(peak.record())}))
"""


def test_an_allocation_raises_the_anonymous_peak() -> None:
    # in a fresh process: a test worker's allocator may hold freed memory of earlier tests (flairsuite.runtime.allocator keeps it)
    # and hand it out again, or free some meanwhile, so that the block neither raises nor lowers its RssAnon by its size
    done = subprocess.run([sys.executable, "-c", ALLOCATION], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["held"] - found["before"] >= 250  # the block is anonymous memory ...
    assert found["held"] - found["after"] >= 250  # ... freed at once (a large block is a mapping of its own)
    assert found["peak"] >= found["held"] - 10  # and the sampler saw it
    assert found["rss"] >= found["peak"]
    assert found["record"] == ["peak_rss_anon_mb", "peak_rss_mb"]


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
