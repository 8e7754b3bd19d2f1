"""Peak memory of this process while a block runs, sampled from /proc/self/status (Linux).

`RssAnon` is the resident memory that belongs to the process alone: heap, tensors, Python objects.
Pages of memory-mapped files (the embedding cache) are `RssFile` and not counted, so a run that
streams its features from the cache shows what it really needs. The kernel keeps no peak of
`RssAnon`, so a daemon thread samples it (and `VmRSS`) every `interval` seconds; a spike shorter
than that can be missed. Elsewhere than Linux the peaks are None.
"""

import threading
from pathlib import Path
from types import TracebackType
from typing import Optional

STATUS = Path("/proc/self/status")
FIELDS = ("RssAnon", "VmRSS")


def current_mb() -> Optional[dict[str, float]]:
    """`RssAnon` and `VmRSS` now, in MiB; None where /proc/self/status is missing."""
    try:
        lines = STATUS.read_text().splitlines()
    except OSError:
        return None
    values = {}
    for line in lines:
        name, _, rest = line.partition(":")
        if name in FIELDS:
            values[name] = int(rest.split()[0]) / 1024  # kB
    return values if len(values) == len(FIELDS) else None


class PeakMemory:
    """`with PeakMemory() as peak: ...`, then `peak.anon_mb` and `peak.rss_mb` (None where unknown)."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.anon_mb: Optional[float] = None
        self.rss_mb: Optional[float] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="peak-memory", daemon=True)

    def _sample(self) -> None:
        now = current_mb()
        if now is not None:
            self.anon_mb = max(self.anon_mb or 0.0, now["RssAnon"])
            self.rss_mb = max(self.rss_mb or 0.0, now["VmRSS"])

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "PeakMemory":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def record(self) -> dict[str, Optional[float]]:
        """The peaks for a metrics file, rounded to MiB."""
        return {"peak_rss_anon_mb": None if self.anon_mb is None else round(self.anon_mb),
                "peak_rss_mb": None if self.rss_mb is None else round(self.rss_mb)}
