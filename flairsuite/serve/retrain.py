"""`POST /train` in the background: one run at a time, and the served model replaced only on evidence, atomically.

`Retrainer.start(documents)` takes the labelled sentences of each document (`flairsuite.serve.cas`),
holds a share out for dev (`fit.held_out`) and trains in a daemon thread (`fit.fit`) on a fresh copy
of the served model loaded from its file (the copy that tags requests is never touched). A second
start while a run is going raises `Running` (the protocol's 429). When the run ends, the new tagger
replaces the served model only if its dev F1 is not below the served tagger's on the same dev set
and it finds an entity on the dev sentences wherever the served one finds any (`refusal`: the reason
of a run that is not swapped in, which `/status` shows). The replacement: saved to a temporary file
next to the served one (`flairsuite.files.atomic.atomic_file`), loaded from there as the tagger to serve,
the old file hard-linked (or copied) to `<stem>.before-<UTC time><suffix>`, then renamed over the
served path (`os.replace`), and only then handed to `swap` (the application switches its batcher to
it between two batches); then the backups beyond the newest `keep` are deleted (`prune`; `keep` 0
makes none). A kill at any point leaves the served file whole: before the rename it is the old model,
after it the new one, and the old one stays on disk under its new name.
`status()` tells what runs and how the last run ended.
"""

import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, Optional, TypeVar

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.serve.fit import Fitted, Labeled, fit, held_out

EPOCHS = 20  # epochs of one run at most (--train-epochs of create_app)
KEEP = 3  # backups of replaced models kept next to the served one (--keep-models)
log = logging.getLogger(__name__)
Served = TypeVar("Served")


class Running(Exception):
    """A training run is going: the request is refused (HTTP 429)."""


def now() -> str:
    """The UTC time now, ISO 8601 to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp() -> str:
    """The UTC time now as a backup's name holds it."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def backup_pattern(target: Path) -> "re.Pattern[str]":
    """The names of `target`'s backups, `<stem>.before-<UTC time>[-<n>]<suffix>`: groups time and n."""
    return re.compile(rf"{re.escape(target.stem)}\.before-(\d{{8}}T\d{{6}}Z)(?:-(\d+))?{re.escape(target.suffix)}")


def backups(target: Path) -> list[Path]:
    """`target`'s backups next to it, oldest first (by the time in the name, then its number)."""
    pattern, found = backup_pattern(target), []
    for path in target.parent.iterdir():
        match = pattern.fullmatch(path.name)
        if match and path.is_file():
            found.append(((match.group(1), int(match.group(2) or 1)), path))
    return [path for _, path in sorted(found)]


def backup_path(target: Path) -> Path:
    """A free name next to `target` for the model it replaces: `<stem>.before-<UTC time><suffix>`, numbered after the
    backups of the same second (`-2`, `-3`, ...), so that the names order the backups even after older ones were deleted."""
    now_stamp, pattern = stamp(), backup_pattern(target)
    taken = [int(m.group(2) or 1) for m in map(pattern.fullmatch, (p.name for p in backups(target))) if m and m.group(1) == now_stamp]
    n = max(taken, default=0) + 1
    candidate = target.with_name(f"{target.stem}.before-{now_stamp}{f'-{n}' if n > 1 else ''}{target.suffix}")
    while candidate.exists() or candidate.is_symlink():  # a folder or link of that name: not a backup, left alone
        n += 1
        candidate = target.with_name(f"{target.stem}.before-{now_stamp}-{n}{target.suffix}")
    return candidate


def prune(target: Path, keep: int) -> list[Path]:
    """Delete `target`'s backups beyond the newest `keep`; those deleted (one that cannot be is logged and left)."""
    found = backups(target)
    deleted = []
    for path in found[: max(0, len(found) - keep)]:
        try:
            path.unlink()
            deleted.append(path)
        except OSError as err:
            log.warning("cannot delete the old model %s: %s", path, err.strerror or err)
    return deleted


def keep_old(target: Path, backup: Path) -> None:
    """The served file also under `backup` (a hard link, or a copy where links are not possible)."""
    try:
        os.link(target, backup)
    except OSError:
        shutil.copy2(target, backup)


def held_out_sentences(count: int) -> str:
    """The count with its noun: "12 held-out sentences", "1 held-out sentence"."""
    return f"{count} held-out sentence{'' if count == 1 else 's'}"


def refusal(fitted: Fitted, dev_sentences: int) -> Optional[str]:
    """Why the fitted tagger may not replace the served one (None: it may): a dev F1 below the served one's, or no entity
    found on the dev sentences where the served one finds some."""
    if fitted.dev_f1 < fitted.served_f1:
        return f"not swapped: dev F1 {round(fitted.dev_f1, 4)} below the served model's {round(fitted.served_f1, 4)}"
    if fitted.entities == 0 and fitted.served_entities > 0:
        found = f"{held_out_sentences(dev_sentences)} where the served one finds {fitted.served_entities}"
        return f"not swapped: the new model finds no entity on the {found}"
    return None


class Retrainer(Generic[Served]):
    """Background training runs for the model at `model_path`; `load(path)` makes a servable tagger, `swap(it)` serves it;
    `keep`: how many backups of replaced models stay next to it."""

    def __init__(self, model_path: Path, load: Callable[[Path], Served], swap: Callable[[Served], None], epochs: int = EPOCHS,
                 keep: int = KEEP) -> None:  # fmt: skip
        if keep < 0:
            raise FlairsuiteError(f"the number of old models to keep must be 0 or more, not {keep}")
        self.model_path, self.load, self.swap, self.epochs, self.keep = model_path, load, swap, epochs, keep
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
        """The run: train, compare, replace when the evidence allows (`refusal`); the outcome goes to `last`."""
        started = time.perf_counter()
        outcome: dict[str, Any] = {"started": run["since"], "target": run["target"], "train_sentences": run["train_sentences"],
                                   "dev_sentences": run["dev_sentences"]}  # fmt: skip
        try:
            served = load_tagger(self.model_path)
            fitted = fit(served, split, self.epochs, progress=self.progress)
            outcome.update(dev_f1=round(fitted.dev_f1, 4), served_dev_f1=round(fitted.served_f1, 4), best_epoch=fitted.epoch,
                           dev_entities=fitted.entities, served_dev_entities=fitted.served_entities)  # fmt: skip
            reason = refusal(fitted, len(split.dev))
            if reason is not None:
                outcome.update(swapped=False, reason=reason)
            else:
                previous = self.replace(fitted.model)
                outcome.update(swapped=True, previous=str(previous) if previous else None)
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

    def replace(self, model: Any) -> Optional[Path]:
        """Save `model` over the served file atomically (the old one kept as a backup unless `keep` is 0) and serve it;
        then delete the backups beyond the newest `keep`. The new backup's path (None: none kept)."""
        backup = backup_path(self.model_path) if self.keep else None
        with atomic_file(self.model_path) as temp:
            model.save(temp)
            tagger = self.load(temp)  # what is served is what is on disk; a model that does not load is not swapped in
            if backup is not None:
                keep_old(self.model_path, backup)
        self.swap(tagger)
        for path in prune(self.model_path, self.keep):
            log.info("deleted the old model %s (--keep-models %d)", path.name, self.keep)
        return backup
