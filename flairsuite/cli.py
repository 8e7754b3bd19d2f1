"""The `flairsuite` command line: one click group per job; user errors print as one line."""

import logging
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


@cli.group(cls=SuiteGroup)
def corpora() -> None:
    """Datasets of the registry: list them, fetch them, count them.

    \b
    Example:
      flairsuite corpora stats ler --granularity coarse
    """


@corpora.command("list")
@corpora_dir_option
def corpora_list(corpora_dir: Optional[str]) -> None:
    """Table of every registered dataset and the splits present locally.

    \b
    Example:
      FLAIRSUITE_CORPORA=../shared/corpora flairsuite corpora list
    """
    from flairsuite.corpora.overview import registry_table
    from flairsuite.paths import corpora_dir as resolve

    root = resolve(corpora_dir)
    click.echo(f"corpora directory: {root.resolve()}")
    click.echo(registry_table(root).to_string(index=False))


@corpora.command("stats")
@click.argument("name")
@click.option("--level", default=None, help="GermEval 2014: outer (default) or inner entities.")
@click.option("--granularity", default=None, help="LER: fine (19 types, default) or coarse (7 types).")
@click.option("--option", "extra", multiple=True, metavar="KEY=VALUE", help="Any other dataset option.")
@click.option("--splits", default=None, help="Comma-separated splits to count (default: all registered).")
@corpora_dir_option
def corpora_stats(
    name: str,
    level: Optional[str],
    granularity: Optional[str],
    extra: tuple[str, ...],
    splits: Optional[str],
    corpora_dir: Optional[str],
) -> None:
    """Sentences, tokens and entities per split and per type, after repair, with the repairs made.

    \b
    Examples:
      flairsuite corpora stats sturm
      flairsuite corpora stats germeval14 --level inner
      flairsuite corpora stats danish-ner --option train_size=5k
    """
    from flairsuite.corpora.registry import dataset
    from flairsuite.corpora.stats import corpus_stats
    from flairsuite.paths import corpora_dir as resolve

    options = dict(parse_key_values(extra), level=level, granularity=granularity)
    spec = dataset(name, **{k: v for k, v in options.items() if v is not None})
    root = resolve(corpora_dir)
    stats = corpus_stats(spec, root, [s for s in splits.split(",") if s] if splits else None)
    chosen = ", ".join(f"{k}={v}" for k, v in spec.options.items())
    click.echo(f"{spec.name}: {spec.title}" + (f" [{chosen}]" if chosen else ""))
    click.echo(stats.summary.to_string())
    if not stats.types.empty:
        click.echo(f"\n{'entities' if spec.task == 'ner' else 'tags'} by type (after repair):")
        click.echo(stats.types.to_string())
    if not stats.repairs.empty:
        click.echo("\nrepairs made (see README, 'Rules the loaders apply'):")
        click.echo(stats.repairs.to_string())


@corpora.command("fetch")
@click.argument("name")
@corpora_dir_option
def corpora_fetch(name: str, corpora_dir: Optional[str]) -> None:
    """Download a dataset into the corpora directory (verified, atomic); a no-op when present.

    \b
    Example:
      flairsuite corpora fetch sturm --corpora-dir ./corpora
    """
    from flairsuite.corpora.fetch import fetch
    from flairsuite.paths import corpora_dir as resolve

    for line in fetch(name, resolve(corpora_dir)):
        click.echo(line)


def parse_key_values(pairs: tuple[str, ...]) -> dict[str, str]:
    """`("a=1", "b=x")` -> `{"a": "1", "b": "x"}`; a pair without `=` is an error."""
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FlairsuiteError(f"option '{pair}' is not KEY=VALUE")
        parsed[key] = value
    return parsed


def main() -> None:
    """Console entry point."""
    cli()
