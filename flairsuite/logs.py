"""stdout holds a command's output only: logging handlers that write to stdout (Flair's, made at its import) write to stderr.

`logs_to_stderr()` is called by the command group before any command runs, and by a Ray worker before its task
(`flairsuite.experiments.ray_runner`), whose stdout Ray would forward to the driver's stdout.
"""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager


class CurrentStderr:
    """A stream that writes to whatever `sys.stderr` is at the time (click's test runner swaps it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def to_stderr(handler: logging.Handler) -> None:
    """A handler that writes to stdout writes to stderr instead."""
    if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
        if handler.stream is sys.stdout or handler.stream is sys.__stdout__:
            handler.setStream(CurrentStderr())


class StderrLogger(logging.Logger):
    """A logger that sends every stream handler given to stdout to stderr: Flair's `flair` logger gets one at import time
    (`logging.config.dictConfig`, `ext://sys.stdout`), before any command could re-point it."""

    def addHandler(self, handler: logging.Handler) -> None:  # noqa: N802  (logging's name)
        to_stderr(handler)
        super().addHandler(handler)


def logs_to_stderr() -> None:
    """Keep stdout for a command's output: every logging handler that writes to stdout, now or later, writes to stderr."""
    loggers = [logging.getLogger(), *(found for found in logging.Logger.manager.loggerDict.values() if isinstance(found, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            to_stderr(handler)
    logging.setLoggerClass(StderrLogger)  # loggers made from now on (Flair's, when it is first imported)


@contextmanager
def flair_quiet() -> Iterator[None]:
    """Flair's INFO lines left out while a saved model loads (`SequenceTagger predicts: Dictionary with 7 tags: ...`): a
    command that then fails says one `Error:` line and nothing before it; warnings still show."""
    logger = logging.getLogger("flair")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)
