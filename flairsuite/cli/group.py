"""The `flairsuite` command group, its error handling and the options every command group shares."""

import logging
from typing import Any

import click

from flairsuite.errors import FlairsuiteError


class SuiteGroup(click.Group):
    """A click group that turns FlairsuiteError (and its subclasses) into a one-line `Error: ...`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlairsuiteError as err:
            raise click.ClickException(str(err)) from None


corpora_dir_option = click.option(
    "--corpora-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Datasets folder (default: $FLAIRSUITE_CORPORA, else ./corpora under $FLAIRSUITE_HOME).",
)


@click.group(cls=SuiteGroup)
@click.version_option(package_name="flairsuite")
def cli() -> None:
    """flairsuite: character LMs, word vectors and Flair sequence taggers for modest hardware.

    \b
    Example:
      flairsuite corpora list
    """
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)


def main() -> None:
    """Console entry point."""
    cli()
