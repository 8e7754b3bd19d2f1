"""The `flairsuite` command group, its error handling and the options every command group shares."""

import logging
import math
from typing import Any, Callable, Optional, TypeVar

import click

from flairsuite.errors import FlairsuiteError
from flairsuite.logs import logs_to_stderr
from flairsuite.runtime.threads import apply as apply_threads
from flairsuite.runtime.threads import prepare_for_torch

F = TypeVar("F", bound=Callable[..., Any])


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


def threads_option_for(default: str, what: str = "CPU threads for torch") -> Callable[[F], F]:
    """`--threads`, the one declaration every command shares; `default` says what the command does without it."""
    return click.option("--threads", type=click.IntRange(min=1), default=None, help=f"{what} [default: {default}].")


def force_option(what: str) -> Callable[[F], F]:
    """`--force`, the one declaration every command shares; `what` says what it discards or replaces."""
    return click.option("--force", is_flag=True, help=what)


threads_option = threads_option_for("the cores other processes leave free")


# commands whose torch work is the fast path's two independent workers (the LM pair, one intra-op thread each at 2
# threads), which meet once a batch: they keep 2 threads beside other work (flairsuite.runtime.threads, "shape")
TWO_WORKERS = frozenset({"predict", "serve", "evaluate"})


def set_threads(threads: Optional[int]) -> None:
    """`--threads`: torch's intra-op threads; None: the cores other processes leave free (the rule of
    `flairsuite.runtime.threads`, by the shape of the command running), unless $OMP_NUM_THREADS or
    $FLAIRSUITE_THREADS_POLICY=torch decides."""
    ctx = click.get_current_context(silent=True)
    apply_threads(threads, 2 if ctx is not None and ctx.command.name in TWO_WORKERS else 1)


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
    """Console entry point (and `python -m flairsuite`): before any command can load torch, its default threads and
    OpenMP's wait policy are arranged (`runtime.threads`; commands that never load torch pay nothing for it)."""
    prepare_for_torch()
    cli()
