"""`POST /train` in the background: one run at a time, and the served model replaced only by a better-or-equal one, atomically.

`Retrainer.start(documents)` takes the labelled sentences of each document (`flairsuite.serve.cas`),
holds a share out for dev (`fit.held_out`) and trains in a daemon thread (`fit.fit`) on a fresh copy
of the served model loaded from its file (the copy that tags requests is never touched). A second
start while a run is going raises `Running` (the protocol's 429). When the run ends, and only if the
new tagger's dev F1 is not below the served tagger's on the same dev set, it replaces the served
model: saved to a temporary file next to it (`flairsuite.atomic.atomic_file`), loaded from there as
the tagger to serve, the old file hard-linked (or copied) to `<name>.before-<UTC time><suffix>`, then
renamed over the served path (`os.replace`), and only then handed to `swap` (the application switches
its batcher to it between two batches). A kill at any point leaves the served file whole: before the
rename it is the old model, after it the new one, and the old one stays on disk under its new name.
`status()` tells what runs and how the last run ended.
"""

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, Optional, TypeVar

from flairsuite.atomic import atomic_file
from flairsuite.errors import FlairsuiteError
from flairsuite.predict import load_tagger
from flairsuite.serve.fit import Labeled, fit, held_out

EPOCHS = 20  # epochs of one run at most (--train-epochs of create_app)
log = logging.getLogger(__name__)
Served = TypeVar("Served")


class Running(Exception):
    """A training run is going: the request is refused (HTTP 429)."""


def now() -> str:
    """The UTC time now, ISO 8601 to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def backup_path(target: Path) -> Path:
    """A free name next to `target` for the model it replaces: `<stem>.before-<UTC time><suffix>`."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = target.with_name(f"{target.stem}.before-{stamp}{target.suffix}"), 1
    while candidate.exists():
        n += 1
        candidate = target.with_name(f"{target.stem}.before-{stamp}-{n}{target.suffix}")
    return candidate


def keep_old(target: Path, backup: Path) -> None:
    """The served file also under `backup` (a hard link, or a copy where links are not possible)."""
    try:
        os.link(target, backup)
    except OSError:
        shutil.copy2(target, backup)


class Retrainer(Generic[Served]):
    """Background training runs for the model at `model_path`; `load(path)` makes a servable tagger, `swap(it)` serves it."""

    def __init__(self, model_path: Path, load: Callable[[Path], Served], swap: Callable[[Served], None], epochs: int = EPOCHS) -> None:
        self.model_path, self.load, self.swap, self.epochs = model_path, load, swap, epochs
        self.lock = threading.Lock()
        self.running: Optional[dict[str, Any]] = None
        self.last: Optional[dict[str, Any]] = None
        self.thread: Optional[threading.Thread] = None

    def status(self) -> dict[str, Any]:
        """What runs now (None: nothing) and how the last run ended (None: none yet)."""
        with self.lock:
            return {"model": self.model_path.name, "training": dict(self.running) if self.running else None,
                    "last": dict(self.last) if self.last else None}  # fmt: skip

    def start(self, documents: Sequence[list[Labeled]], what: str = "") -> dict[str, Any]:
        """Start a run on the documents' sentences (a FlairsuiteError if they cannot make a dev split); `Running` while one runs."""
        split = held_out(documents)
        with self.lock:
            if self.running is not None:
                raise Running(f"a training run is going since {self.running['since']}; try again when GET /status shows it ended")
            self.running = {"since": now(), "target": what, "documents": sum(1 for d in documents if d), "train_sentences": len(split.train),
                            "dev_sentences": len(split.dev), "epoch": 0, "epochs": self.epochs}  # fmt: skip
            run = dict(self.running)
        self.thread = threading.Thread(target=self.work, args=(split, run), name="flairsuite-train", daemon=True)
        self.thread.start()
        return run

    def progress(self, epoch: int, score: float) -> None:
        with self.lock:
            if self.running is not None:
                self.running.update(epoch=epoch, last_epoch_dev_f1=round(score, 4))

    def work(self, split: Any, run: dict[str, Any]) -> None:
        """The run: train, compare, replace when not worse; the outcome goes to `last`."""
        started = time.perf_counter()
        outcome: dict[str, Any] = {"started": run["since"], "target": run["target"], "train_sentences": run["train_sentences"],
                                   "dev_sentences": run["dev_sentences"]}  # fmt: skip
        try:
            served = load_tagger(self.model_path)
            fitted = fit(served, split, self.epochs, progress=self.progress)
            outcome.update(dev_f1=round(fitted.dev_f1, 4), served_dev_f1=round(fitted.served_f1, 4), best_epoch=fitted.epoch)
            if fitted.dev_f1 < fitted.served_f1:
                outcome.update(swapped=False, reason="its dev F1 is below the served model's: the served model stays")
            else:
                outcome.update(swapped=True, previous=str(self.replace(fitted.model)))
        except FlairsuiteError as err:
            log.error("training failed: %s", err)
            outcome.update(swapped=False, error=str(err))
        except Exception as err:  # noqa: BLE001 (a thread's failure goes to the log and /status, never the client)
            log.exception("training failed")
            outcome.update(swapped=False, error=f"training failed: {type(err).__name__} (the server log has the details)")
        outcome.update(finished=now(), seconds=round(time.perf_counter() - started, 1))
        log.info("training ended: %s", outcome)
        with self.lock:
            self.running, self.last = None, outcome

    def replace(self, model: Any) -> Path:
        """Save `model` over the served file atomically (the old one kept as a backup) and serve it; the backup's path."""
        backup = backup_path(self.model_path)
        with atomic_file(self.model_path) as temp:
            model.save(temp)
            tagger = self.load(temp)  # what is served is what is on disk; a model that does not load is not swapped in
            keep_old(self.model_path, backup)
        self.swap(tagger)
        return backup
