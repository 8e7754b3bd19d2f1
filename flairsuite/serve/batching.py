"""One worker thread that runs the tagger on every request waiting, in one call: the model is never used by two threads.

An item is anything with a length in characters: a text (POST /tag), or a CAS's tokens (POST /predict,
`flairsuite.serve.engine.Tokens`); both kinds go into the same calls. Requests arriving while the
model is busy queue up and go into the next call together (up to `batch_chars` characters), so concurrent clients share the batching of the fast path instead of
waiting one after the other. After a batch of several requests (concurrent clients) the next one also waits for
requests that come within GATHER_GAP of each other, GATHER_MAX at most: the clients just answered send their next
requests a few milliseconds apart, and one batch of all of them is cheaper than a small one and a large one; a
request that comes alone (the last batch held one) is tagged at once. A call that fails is retried text by text, so that one text that breaks
the model fails only its own request. A full queue refuses new texts (`Busy`).

A text's spans do not depend on what it is batched with; on the fast path's int8 LMs (activations
scaled per batch) its confidences may differ in the fourth decimal from those of the text alone.
"""

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence, Sized
from concurrent.futures import Future
from typing import Generic, Optional, TypeVar

Result = TypeVar("Result")
Item = TypeVar("Item", bound=Sized)
log = logging.getLogger(__name__)
BATCH_CHARS = 200_000  # characters of the texts tagged in one call at most (one text may be longer)
GATHER_GAP = 0.02  # under load, a batch waits for the next request this long (seconds) ...
GATHER_MAX = 0.1  # ... and this long at most after its first one


class Busy(Exception):
    """The queue is full: the request is refused rather than kept waiting."""


class Batcher(Generic[Item, Result]):
    """`submit(item)` -> a Future of `run([item, ...])`'s result for that item; `close()` stops the worker."""

    def __init__(self, run: Callable[[Sequence[Item]], list[Result]], max_waiting: int = 256, batch_chars: int = BATCH_CHARS,
                 gather: tuple[float, float] = (GATHER_GAP, GATHER_MAX)) -> None:
        self.run = run
        self.max_waiting = max_waiting
        self.batch_chars = batch_chars
        self.gap, self.gather_max = gather
        self.concurrent = False  # whether the last batch held more than one request
        self.queue: queue.SimpleQueue[Optional[tuple[Item, Future]]] = queue.SimpleQueue()
        self.worker = threading.Thread(target=self.work, name="flairsuite-tagger", daemon=True)
        self.worker.start()

    def submit(self, text: Item) -> "Future[Result]":
        """Queue `text` (or another item); the Future is cancelled harmlessly if the caller gives up waiting."""
        if self.queue.qsize() >= self.max_waiting:
            raise Busy(f"the server is busy: {self.max_waiting} requests are waiting; try again shortly")
        future: Future[Result] = Future()
        self.queue.put((text, future))
        return future

    def close(self, timeout: float = 10.0) -> None:
        """Let the worker finish the requests queued so far, then stop it."""
        self.queue.put(None)
        self.worker.join(timeout)

    def take(self) -> Optional[list[tuple[Item, Future]]]:
        """The next batch: one request (waiting for it), then those already queued up to `batch_chars`; None: stop."""
        first = self.queue.get()
        if first is None:
            return None
        batch, size = [first], len(first[0])
        deadline = time.monotonic() + self.gather_max
        while size < self.batch_chars:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                left = deadline - time.monotonic()
                if not self.concurrent or left <= 0:
                    break
                try:  # clients answered by the last batch are sending their next requests: take those that come soon
                    item = self.queue.get(timeout=min(self.gap, left))
                except queue.Empty:
                    break
            if item is None:
                self.queue.put(None)  # stop after this batch
                break
            batch.append(item)
            size += len(item[0])
        self.concurrent = len(batch) > 1
        return batch

    def work(self) -> None:
        """The worker's loop: take a batch, drop the requests given up on, tag the rest."""
        while (batch := self.take()) is not None:
            live = [(text, future) for text, future in batch if future.set_running_or_notify_cancel()]
            if live:
                self.tag(live)

    def tag(self, batch: list[tuple[Item, Future]]) -> None:
        """Set each future's result, or its exception when tagging its text alone fails."""
        try:
            results = self.run([text for text, _ in batch])
        except Exception as err:  # noqa: BLE001 (the request handler reports it)
            if len(batch) > 1:
                log.warning("tagging %d texts together failed (%s); tagging them one by one", len(batch), type(err).__name__)
                for item in batch:
                    self.tag([item])
            else:
                batch[0][1].set_exception(err)
            return
        for (_, future), result in zip(batch, results):
            future.set_result(result)
