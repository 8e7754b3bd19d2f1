"""The `flairsuite` command group, its error handling and the options every command group shares."""

import logging
import math
import sys
from typing import Any, Optional

import click

from flairsuite.errors import FlairsuiteError


class SuiteGroup(click.Group):
    """A click group that turns FlairsuiteError (and its subclasses) into a one-line `Error: ...`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlairsuiteError as err:
            raise click.ClickException(str(err)) from None


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange, with NaN and infinities refused (a NaN passes every comparison of the range check)."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


corpora_dir_option = click.option(
    "--corpora-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Datasets folder (default: $FLAIRSUITE_CORPORA, else ./corpora under $FLAIRSUITE_HOME).",
)


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


threads_option = click.option(
    "--threads", type=click.IntRange(min=1), default=None, help="CPU threads for torch [default: torch's choice, one per core]."
)


def set_threads(threads: Optional[int]) -> None:
    """`--threads`: torch's intra-op threads (None: leave torch's default)."""
    if threads:
        import torch

        torch.set_num_threads(threads)


@click.group(cls=SuiteGroup)
@click.version_option(package_name="flairsuite")
def cli() -> None:
    """flairsuite: character LMs, word vectors and Flair sequence taggers for modest hardware.

    \b
    Example:
      flairsuite corpora list
    """
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    logs_to_stderr()


def main() -> None:
    """Console entry point."""
    cli()
