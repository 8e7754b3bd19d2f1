"""`flairsuite corpora ...`: list, stats, check and fetch the registry's datasets and own corpus folders."""

from pathlib import Path
from typing import Any, Callable, Optional

import click

from flairsuite.cli.group import SuiteGroup, cli, corpora_dir_option
from flairsuite.corpora.format_names import INPUT_FORMATS
from flairsuite.errors import FlairsuiteError


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
    """Table of every registered dataset and the splits present locally, then the reference tables per language.

    \b
    Example:
      FLAIRSUITE_CORPORA=../shared/corpora flairsuite corpora list
    """
    from flairsuite.corpora.overview import registry_table
    from flairsuite.files.paths import corpora_dir as resolve
    from flairsuite.files.paths import home, results_dir
    from flairsuite.results.inventory import inventory_lines

    root = resolve(corpora_dir)
    click.echo(f"corpora directory: {root.resolve()}")
    table = registry_table(root)
    click.echo(table.to_string(index=False))
    click.echo("\n".join(inventory_lines(results_dir(), sorted(set(table["lang"])), home() / "experiments")))


OWN_KEYS = ("sep", "text", "label", "scheme", "dev_fraction", "annotator")  # corpus-folder options, beside --input-format


def corpus_options(splits: bool = True, file_as_split: bool = False) -> Callable[[Any], Any]:
    """The options that pick a corpus (for `corpora stats`, `corpora check`, `evaluate`): a registered dataset's, or an own
    corpus folder's; with `splits`, also `--split` (a comma-separated list there).

    The command is called with the corpus's DatasetSpec, the corpora directory, the splits asked for (None: all; only with
    `splits`) and its own other options as keywords. With `file_as_split`, NAME_OR_PATH may be one annotated file: it is read
    as the one split --split names (default test).
    """
    options = [
        click.option("--level", default=None, help="GermEval 2014: outer (default) or inner entities."),
        click.option("--granularity", default=None, help="LER: fine (19 types, default) or coarse (7 types)."),
        click.option(
            "--option", "extra", multiple=True, metavar="KEY=VALUE",
            help=(
                "Any other dataset option, or key of a corpus folder "
                "(train=FILE, dev=FILE, test=FILE, dev_fraction, encoding, comment, docstart, document_comment, name, task, header, "
                "sentence_end, line_break, layer, feature, max_tokens, annotator; docs/own-data.md)."
            ),
        ),
        *([click.option("--split", "splits", default=None, metavar="SPLIT[,SPLIT...]",
                        help="The splits to read, comma-separated, e.g. dev,test [default: all the corpus has].")] if splits else []),
        click.option("--input-format", "file_format", type=click.Choice(INPUT_FORMATS), default=None,
                     help="Corpus folder: the files' format [default: column] (the `format:` key of a corpus entry; hipe: "
                          "HIPE-2022 TSV, column with its keys)."),
        click.option("--sep", default=None, help="Corpus folder, column format: whitespace (default), tab or space."),
        click.option("--text", default=None, help="Corpus folder, column format: token column (default 0; negative: from the end)."),
        click.option("--label", default=None,
                     help="Corpus folder: tag column (column format: default -1, the last; hipe: NE-COARSE-LIT); conllu: misc:KEY or a column."),
        click.option("--scheme", default=None, help="Corpus folder: auto (default), bio, iob1 or bioes; all are read as BIO."),
        click.option("--dev-fraction", default=None, help="Corpus folder without a dev file: dev is this share of train (fixed sample)."),
        click.option("--annotator", default=None, metavar="NAME",
                     help="INCEpTION project export (ZIP or folder): read this annotator's version of each document [default: the curated one]."),
        corpora_dir_option,
    ]

    def decorate(command: Any) -> Any:
        def picked(name: str, level: Optional[str], granularity: Optional[str], extra: tuple[str, ...], corpora_dir: Optional[str],
                   file_format: Optional[str], **rest: Any) -> Any:
            from flairsuite.files.paths import corpora_dir as resolve

            own = {key: rest.pop(key) for key in OWN_KEYS}
            scored = rest.get("split")  # evaluate's
            if file_as_split and Path(name).is_file() and not is_archive(name):
                scored = one_split_of_a_file(name, split_list(rest.get("splits")))
            # a folder must hold the scored split, and train too where evaluate's --by-seen compares with it
            needed = None if scored is None else [scored, *(["train"] if rest.get("by_seen") and scored != "train" else [])]
            spec = corpus_spec(name, level, granularity, extra, needed, format=file_format, **own)
            chosen = (split_list(rest.pop("splits")),) if splits else ()
            return command(spec, resolve(corpora_dir), *chosen, **rest)

        picked.__name__, picked.__doc__ = command.__name__, command.__doc__
        for option in reversed(options):
            picked = option(picked)
        return picked

    return decorate


def is_archive(argument: str) -> bool:
    """Whether NAME_OR_PATH is a ZIP file (an INCEpTION project export: a corpus, never one split)."""
    return Path(argument).suffix.lower() == ".zip"


def one_split_of_a_file(argument: str, splits: Optional[list[str]]) -> str:
    """The split one annotated file stands for: the one --split names, else test."""
    if splits and len(splits) > 1:
        raise FlairsuiteError(f"{argument} is one annotated file, so one split: give --split one name (or none: test)")
    return splits[0] if splits else "test"


def corpus_spec(argument: str, level: Optional[str], granularity: Optional[str], extra: tuple[str, ...],
                needed: Optional[list[str]] = None, **own: Optional[str]) -> Any:
    """The DatasetSpec of NAME_OR_PATH: a registered dataset with its options, or the corpus folder read with the own-corpus keys.

    `needed` (splits, for scoring a model: the scored one first, then any other it reads, e.g. train for `--by-seen`): the
    folder needs only those, and a single file is read as the first (the others are not there)."""
    from pathlib import Path

    from flairsuite.corpora.own import entry_from_texts, is_folder_argument, own_corpus
    from flairsuite.corpora.registry import dataset

    pairs = parse_key_values(extra)
    own_given = {key: value for key, value in own.items() if value is not None}
    if is_folder_argument(argument):
        registry_given = [flag for flag, value in (("--level", level), ("--granularity", granularity)) if value is not None]
        if registry_given:
            raise FlairsuiteError(f"{registry_given[0]} is an option of registered datasets; {argument} is a corpus folder")
        if needed is not None and not Path(argument).exists():
            raise FlairsuiteError(f"{argument}: no such file or folder")
        if needed is not None and Path(argument).is_file() and not is_archive(argument):  # one annotated file: the split to score
            path = Path(argument)
            if any(split in pairs for split in ("train", "dev", "test")):
                raise FlairsuiteError(f"{argument} is the {needed[0]} split itself: drop the --option naming split files")
            pairs = {"name": path.stem, **pairs, "path": str(path.parent), needed[0]: path.name}
            return own_corpus(entry_from_texts({**pairs, **own_given}), Path.cwd(), needed[:1])
        # scoring a model (`needed`) on a folder reads its split files: a new batch is not split (an export is, as for training)
        return own_corpus(entry_from_texts({"path": argument, **pairs, **own_given}), Path.cwd(), needed, split_unsplit=needed is None)
    if own_given:
        key = next(iter(own_given))
        flag = "--input-format" if key == "format" else "--" + key.replace("_", "-")
        raise FlairsuiteError(f"{flag} is for a corpus folder, and '{argument}' is a registered dataset (for a folder of that name: ./{argument})")
    options = dict(pairs, level=level, granularity=granularity)
    return dataset(argument, **{k: v for k, v in options.items() if v is not None})


def split_list(splits: Optional[str]) -> Optional[list[str]]:
    """`--split dev,test` -> ["dev", "test"]; None: all."""
    return [s for s in splits.split(",") if s] if splits else None


def scheme_line(spec: Any) -> Optional[str]:
    """How an own corpus's tags were read: `scheme: bioes (auto: 12 E-/S- tags), read as BIO; types: loc per`,
    or for `task: pos` `task: pos, one tag per token; tags: ADJ ADP ...`."""
    dev = f"; dev: {spec.dev_fraction * 100:g}% of train" if spec.dev_fraction is not None else ""
    if spec.fetch == "own" and spec.task != "ner":
        return f"task: {spec.task}, one tag per token; tags: {' '.join(spec.types)}{dev}"
    if spec.scheme_rule is None:
        return None
    return f"scheme: {spec.format.scheme} ({spec.scheme_rule}), read as BIO; types: {' '.join(spec.types)}{dev}"


@corpora.command("stats")
@click.argument("name", metavar="NAME_OR_PATH")
@corpus_options()
def corpora_stats(spec: Any, root: Any, splits: Optional[list[str]]) -> None:
    """Sentences, tokens and entities per split and per type, after repair, with the repairs made.

    NAME_OR_PATH is a registered dataset, or a folder of your own (a path with '/', or a folder
    that is no registered name) whose train/dev/test files are found by name. A folder without such
    files, a single file, or an INCEpTION project export (its ZIP or folder) is split by document
    with a fixed seed, and the split is printed.

    \b
    Examples:
      flairsuite corpora stats sturm
      flairsuite corpora stats germeval14 --level inner
      flairsuite corpora stats danish-ner --option train_size=5k
      flairsuite corpora stats data/letters/ --scheme auto --dev-fraction 0.1
      flairsuite corpora stats project-export.zip --annotator anna
    """
    from flairsuite.corpora.document_splits import corpus_notes
    from flairsuite.corpora.stats import corpus_stats

    stats = corpus_stats(spec, root, splits)
    chosen = ", ".join(f"{k}={v}" for k, v in spec.options.items())
    click.echo(f"{spec.name}: {spec.title}" + (f" [{chosen}]" if chosen else ""))
    for note in corpus_notes(spec):
        click.echo(note)
    if scheme_line(spec):
        click.echo(scheme_line(spec))
    click.echo(stats.summary.to_string())
    if not stats.types.empty:
        click.echo(f"\n{'entities' if spec.task == 'ner' else 'tags'} by type (after repair):")
        click.echo(stats.types.to_string())
    if not stats.repairs.empty:
        click.echo("\nrepairs made (see docs/corpora.md, 'What the readers accept'):")
        click.echo(stats.repairs.to_string())


@corpora.command("check")
@click.argument("name", metavar="NAME_OR_PATH")
@corpus_options()
def corpora_check(spec: Any, root: Any, splits: Optional[list[str]]) -> None:
    """Read every split of a corpus as `flairsuite tag` would; the first bad line is one `file:line` error.

    NAME_OR_PATH as for `corpora stats`. Prints one line per split and `ok` when all is well (first, for a
    corpus the suite split, which version of each document was read and where each went).

    \b
    Examples:
      flairsuite corpora check data/letters/
      flairsuite corpora check data/letters/ --input-format conllu --label misc:NE
      flairsuite corpora check sturm
    """
    from flairsuite.corpora.document_splits import corpus_notes
    from flairsuite.corpora.labeled import missing_type_warnings, read_splits

    data = read_splits(spec, root, splits)
    for note in corpus_notes(spec):
        click.echo(note)
    if scheme_line(spec):
        click.echo(scheme_line(spec))
    for split, part in data.items():
        tokens = sum(len(s.tokens) for s in part.sentences)
        click.echo(f"{split}: {part.source}: {len(part.sentences):,} sentences, {tokens:,} tokens, {sum(part.repairs.values())} repairs")
    for warning in missing_type_warnings(data, spec.task == "ner"):
        click.echo(f"warning: {warning}")
    click.echo(f"ok: {spec.name}")


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
    from flairsuite.files.paths import corpora_dir as resolve

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
