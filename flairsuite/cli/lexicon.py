"""The lexicon commands: new-word discovery in raw text and matching a lexicon against a text."""

from typing import Any, Optional

import click

from flairsuite.cli.group import cli, corpora_dir_option, force_option
from flairsuite.cli.settings_options import options_from
from flairsuite.lexicon.settings import DiscoverySettings, unit_defaults
from flairsuite.rawtext.settings import PrepareConfig


@cli.command("discover-words", short_help="New-word discovery in raw text (MI and left/right entropy), written as a lexicon TSV.")
@click.option("--lang", required=True, help="Language (de, en, da, zh): its raw-text set; Chinese units are characters, others word tokens.")
@options_from(PrepareConfig, "corpus")
@click.option(
    "--add-dataset", multiple=True,
    help="Also the text of this labeled dataset's train split, labels ignored (repeatable), e.g. sturm; not one the raw text already holds (raw-zh: cluener).",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Lexicon file [default: lexicons/LANG.tsv under $FLAIRSUITE_HOME].")
@options_from(DiscoverySettings, *DiscoverySettings.keys(), unset=True, presets=unit_defaults)
@force_option("Replace an existing lexicon file.")
@corpora_dir_option
def discover_words(**options: Any) -> None:
    """New-word discovery (Jia et al. 2020, Appendix A): n-grams of the raw text scored by mutual information plus
    left and right entropy, common words removed, the top half kept; written as a lexicon TSV.

    Ends with the coverage of the language's labeled NER sets (train and dev): the share of their entity
    mentions whose text is an entry, and the precision of the lexicon's matches.

    \b
    Examples:
      flairsuite discover-words --lang de
      flairsuite discover-words --lang zh --out lexicons/zh-cluener.tsv
      flairsuite discover-words --lang de --add-dataset sturm --out lexicons/de-sturm.tsv
    """
    from pathlib import Path

    from flairsuite.files.paths import corpora_dir as datasets_dir
    from flairsuite.files.paths import lexicons_dir
    from flairsuite.lexicon.lexicon_commands import discover_command

    out = Path(options["out"]) if options["out"] else lexicons_dir() / f"{options['lang']}.tsv"
    for line in discover_command(options, datasets_dir(options["corpora_dir"]), out):
        click.echo(line)


@cli.command("match-lexicon")
@click.argument("lexicon", type=click.Path(dir_okay=False))
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--rule", type=click.Choice(["maximum", "daluke"]), default="maximum", show_default=True,
              help="maximum: Algorithm 1 of Jia et al. 2020 (longest entry, left to right); daluke: at word starts, 5-48 characters, case ignored.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the JSON lines here (atomically) [default: stdout].")
def match_lexicon(lexicon: str, file: str, rule: str, out: Optional[str]) -> None:
    """Find the entries of LEXICON in the text FILE: one JSON object per line of FILE, its matches as character spans.

    \b
    Example:
      flairsuite match-lexicon lexicons/de.tsv letter.txt --rule daluke
    """
    from pathlib import Path

    from flairsuite.lexicon.lexicon_commands import match_command

    lines = list(match_command(Path(lexicon), Path(file), rule, Path(out) if out else None))
    for line in lines[:-1]:
        click.echo(line)
    click.echo(lines[-1], err=True)
