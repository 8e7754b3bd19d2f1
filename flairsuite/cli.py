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


QUICKSTART_LM_HOURS = 0.05  # 3 minutes per direction when no LM pair is present
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
    """Table of every registered dataset and the splits present locally, then the reference tables per language.

    \b
    Example:
      FLAIRSUITE_CORPORA=../shared/corpora flairsuite corpora list
    """
    from flairsuite.corpora.overview import registry_table
    from flairsuite.paths import corpora_dir as resolve
    from flairsuite.paths import results_dir
    from flairsuite.results.inventory import inventory_lines

    root = resolve(corpora_dir)
    click.echo(f"corpora directory: {root.resolve()}")
    table = registry_table(root)
    click.echo(table.to_string(index=False))
    click.echo("\n".join(inventory_lines(results_dir(), sorted(set(table["lang"])))))


def corpus_options(command: Any) -> Any:
    """The options that pick a corpus for `corpora stats` and `corpora check`: a registered dataset's, or an own corpus folder's.

    The command is called with the corpus's DatasetSpec, the corpora directory and the splits asked for (None: all).
    """
    options = [
        click.option("--level", default=None, help="GermEval 2014: outer (default) or inner entities."),
        click.option("--granularity", default=None, help="LER: fine (19 types, default) or coarse (7 types)."),
        click.option(
            "--option", "extra", multiple=True, metavar="KEY=VALUE",
            help=(
                "Any other dataset option, or key of a corpus folder "
                "(train=FILE, dev=FILE, test=FILE, dev_fraction, encoding, comment, docstart, name, task)."
            ),
        ),
        click.option("--splits", default=None, help="Comma-separated splits to read (default: all the corpus has)."),
        click.option("--format", "file_format", default=None, help="Corpus folder: column (default), conllu or spans_json."),
        click.option("--sep", default=None, help="Corpus folder, column format: whitespace (default), tab or space."),
        click.option("--text", default=None, help="Corpus folder, column format: token column (default 0; negative: from the end)."),
        click.option("--label", default=None, help="Corpus folder: tag column (column format: default -1, the last); conllu: misc:KEY or a column."),
        click.option("--scheme", default=None, help="Corpus folder: auto (default), bio, iob1 or bioes; all are read as BIO."),
        click.option("--dev-fraction", default=None, help="Corpus folder without a dev file: dev is this share of train (fixed sample)."),
        corpora_dir_option,
    ]

    def picked(name: str, level: Optional[str], granularity: Optional[str], extra: tuple[str, ...], splits: Optional[str],
               corpora_dir: Optional[str], file_format: Optional[str], **own: Optional[str]) -> Any:
        from flairsuite.paths import corpora_dir as resolve

        spec = corpus_spec(name, level, granularity, extra, format=file_format, **own)
        return command(spec, resolve(corpora_dir), split_list(splits))

    picked.__name__, picked.__doc__ = command.__name__, command.__doc__
    for option in reversed(options):
        picked = option(picked)
    return picked


def corpus_spec(argument: str, level: Optional[str], granularity: Optional[str], extra: tuple[str, ...], **own: Optional[str]) -> Any:
    """The DatasetSpec of NAME_OR_PATH: a registered dataset with its options, or the corpus folder read with the own-corpus keys."""
    from pathlib import Path

    from flairsuite.corpora.own import entry_from_texts, is_folder_argument, own_corpus
    from flairsuite.corpora.registry import dataset

    pairs = parse_key_values(extra)
    own_given = {key: value for key, value in own.items() if value is not None}
    if is_folder_argument(argument):
        registry_given = [flag for flag, value in (("--level", level), ("--granularity", granularity)) if value is not None]
        if registry_given:
            raise FlairsuiteError(f"{registry_given[0]} is an option of registered datasets; {argument} is a corpus folder")
        return own_corpus(entry_from_texts({"path": argument, **pairs, **own_given}), Path.cwd())
    if own_given:
        flag = "--" + next(iter(own_given)).replace("_", "-")
        raise FlairsuiteError(f"{flag} is for a corpus folder, and '{argument}' is a registered dataset (for a folder of that name: ./{argument})")
    options = dict(pairs, level=level, granularity=granularity)
    return dataset(argument, **{k: v for k, v in options.items() if v is not None})


def split_list(splits: Optional[str]) -> Optional[list[str]]:
    """`--splits dev,test` -> ["dev", "test"]; None: all."""
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
@corpus_options
def corpora_stats(spec: Any, root: Any, splits: Optional[list[str]]) -> None:
    """Sentences, tokens and entities per split and per type, after repair, with the repairs made.

    NAME_OR_PATH is a registered dataset, or a folder of your own (a path with '/', or a folder
    that is no registered name) whose train/dev/test files are found by name.

    \b
    Examples:
      flairsuite corpora stats sturm
      flairsuite corpora stats germeval14 --level inner
      flairsuite corpora stats danish-ner --option train_size=5k
      flairsuite corpora stats data/letters/ --scheme auto --dev-fraction 0.1
    """
    from flairsuite.corpora.stats import corpus_stats

    stats = corpus_stats(spec, root, splits)
    chosen = ", ".join(f"{k}={v}" for k, v in spec.options.items())
    click.echo(f"{spec.name}: {spec.title}" + (f" [{chosen}]" if chosen else ""))
    if scheme_line(spec):
        click.echo(scheme_line(spec))
    click.echo(stats.summary.to_string())
    if not stats.types.empty:
        click.echo(f"\n{'entities' if spec.task == 'ner' else 'tags'} by type (after repair):")
        click.echo(stats.types.to_string())
    if not stats.repairs.empty:
        click.echo("\nrepairs made (see README, 'Rules the loaders apply'):")
        click.echo(stats.repairs.to_string())


@corpora.command("check")
@click.argument("name", metavar="NAME_OR_PATH")
@corpus_options
def corpora_check(spec: Any, root: Any, splits: Optional[list[str]]) -> None:
    """Read every split of a corpus as `flairsuite tag` would; the first bad line is one `file:line` error.

    NAME_OR_PATH as for `corpora stats`. Prints one line per split and `ok` when all is well.

    \b
    Examples:
      flairsuite corpora check data/letters/
      flairsuite corpora check data/letters/ --format conllu --label misc:NE
      flairsuite corpora check sturm
    """
    from flairsuite.corpora.labeled import read_splits, types_missing_from_train

    data = read_splits(spec, root, splits)
    if scheme_line(spec):
        click.echo(scheme_line(spec))
    for split, part in data.items():
        tokens = sum(len(s.tokens) for s in part.sentences)
        click.echo(f"{split}: {part.source}: {len(part.sentences):,} sentences, {tokens:,} tokens, {sum(part.repairs.values())} repairs")
    for split, kind, line in types_missing_from_train(data, spec.task == "ner"):
        what = "type" if spec.task == "ner" else "tag"
        click.echo(f"warning: {data[split].path}:{line}: {what} '{kind}' of {split} never occurs in train: no tagger can learn it")
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
    from flairsuite.paths import corpora_dir as resolve

    for line in fetch(name, resolve(corpora_dir)):
        click.echo(line)


@cli.command("train-charlm")
@click.option("--lang", required=True, help="Language of the recipe (de, en, da, zh); also selects the NER sets kept out of training.")
@click.option("--direction", type=click.Choice(["forward", "backward", "both"]), default="both", show_default=True)
@click.option(
    "--corpus", multiple=True, type=click.Path(),
    help="Text files or folders (.txt, .txt.gz), one document per line; default: the recipe's raw-text set.",
)
@click.option(
    "--preset", default="cpu", show_default=True,
    help="Recipe preset: cpu (2 cores, 82 M characters, ~1.5 h a direction) or paper (Akbik et al. 2018).",
)
@click.option("--hidden-size", type=int, help="LSTM hidden size.")
@click.option("--nlayers", type=int, help="LSTM layers.")
@click.option("--embedding-size", type=int, help="Character embedding size.")
@click.option("--sequence-length", type=int, help="Truncated-BPTT window (characters).")
@click.option("--sequence-length-start", type=int, help="Window at the start of the ramp to --sequence-length.")
@click.option("--ramp-chars", type=int, help="Characters over which the window grows (0: no ramp).")
@click.option("--batch-size", type=int, help="Parallel character streams per batch.")
@click.option("--learning-rate", type=float, help="SGD learning rate.")
@click.option("--clip", type=float, help="Gradient norm clipping.")
@click.option("--dropout", type=float, help="Dropout.")
@click.option("--anneal-factor", type=float, help="Learning rate factor after a validation plateau.")
@click.option("--patience", type=int, help="Validations without improvement before annealing.")
@click.option("--validate-chars", type=int, help="Training characters between validation points (annealing, best model).")
@click.option("--checkpoint-minutes", type=float, help="Minutes between checkpoints.")
@click.option("--valid-chars", type=int, help="Characters of valid (and test) used for perplexity.")
@click.option("--max-hours", type=float, default=None, help="Training time per direction [default: the preset's budget: cpu 82 M characters, paper 1 h].")
@click.option("--max-chars", type=int, default=None, help="Characters to train on per direction.")
@click.option("--heldout-fraction", type=float, default=0.01, show_default=True, help="Share of documents for valid and for test.")
@click.option("--unk-fraction", type=float, default=1e-6, show_default=True, help="The rarest characters, up to this share of all, become <unk>.")
@click.option("--name", default=None, help="Model folder prefix [default: LANG]: models go to charlm/NAME-forward, charlm/NAME-backward.")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the model folders [default: charlm/ under $FLAIRSUITE_HOME].",
)
@click.option(
    "--resume", is_flag=True,
    help="Continue the run whose checkpoint is in the model folder (without one: continue its best-lm.pt and summary.json, e.g. the released pair).",
)
@click.option("--force", is_flag=True, help="Discard an earlier run's checkpoint and start over.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--threads", type=int, default=None, help="CPU threads [default: all cores].")
@click.option(
    "--precision", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto", show_default=True,
    help="Training steps' arithmetic: bfloat16 runs them under autocast (1.6x the characters/s at the same perplexity per character "
    "on a Xeon with avx512_bf16); weights, optimizer and validation stay float32; auto: bfloat16 where the CPU or GPU computes it "
    "natively, else float32. Not part of a checkpoint's settings: a run may change it on --resume.",
)
@click.option(
    "--model-dtype", type=click.Choice(["float32", "float16"]), default="float32", show_default=True,
    help="Weights of best-lm.pt: float16 halves the file (a hidden-1024 LM in 9.7 MB instead of 19.3); plain Flair loads it "
    "into a float32 model. Checkpoints stay float32.",
)
@corpora_dir_option
def train_charlm(**options: Any) -> None:
    """Train forward and backward character LMs that plain Flair loads with FlairEmbeddings(path).

    \b
    Examples:
      flairsuite train-charlm --lang de                   # the cpu preset's budget: 82 M characters a direction
      flairsuite train-charlm --lang de --max-hours 1
      flairsuite train-charlm --lang de --direction forward --hidden-size 256 --max-chars 2000000
      flairsuite train-charlm --lang de --resume          # after a kill: continues exactly
    """
    from flairsuite.charlm.command import train_charlm_command

    for line in train_charlm_command(options):
        click.echo(line)


@cli.command("train-fasttext")
@click.option("--lang", required=True, help="Language (de, en, da, zh): its raw-text set, and the labeled corpora whose tokens are added.")
@click.option(
    "--corpus", multiple=True, type=click.Path(),
    help="Text files or folders (.txt, .txt.gz), one document per line; default: the recipe's raw-text set (as train-charlm).",
)
@click.option(
    "--dim", type=click.IntRange(min=1), default=300, show_default=True,
    help="Vector size (fastText's published size; it beat 100 on Sturm dev by 1.9 F1, results/README.md).",
)
@click.option("--epochs", type=click.IntRange(min=1), default=5, show_default=True, help="Passes over the training text.")
@click.option("--min-count", type=click.IntRange(min=1), default=5, show_default=True, help="Words rarer than this get no vector of their own.")
@click.option(
    "--buckets", type=click.IntRange(min=1), default=2_000_000, show_default=True,
    help="Hash buckets for character n-grams (memory: buckets x dim floats).",
)
@click.option(
    "--heldout-fraction", type=float, default=0.01, show_default=True,
    help="Share of documents held out (as train-charlm; the prepared corpus is shared).",
)
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the vectors folder LANG-fasttext [default: wordvectors/ under $FLAIRSUITE_HOME].",
)
@click.option("--name", default=None, help="Vectors folder prefix [default: LANG]: vectors go to wordvectors/NAME-fasttext (spec fasttext:NAME).")
@click.option("--force", is_flag=True, help="Replace existing vectors.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Worker threads [default: all cores].")
@corpora_dir_option
def train_fasttext(**options: Any) -> None:
    """Train fastText word vectors on the train-charlm corpus; plain Flair loads them with WordEmbeddings(path).

    Tokens of the language's local NER and PoS corpora that the vocabulary lacks get their
    subword-built vectors added, since WordEmbeddings ignores fastText's n-grams.

    \b
    Examples:
      flairsuite train-fasttext --lang de
      flairsuite train-fasttext --lang de --dim 100 --name de100     # spec fasttext:de100
    """
    from flairsuite.wordvectors.command import train_fasttext_command

    for line in train_fasttext_command(options):
        click.echo(line)


@cli.command("compact-fasttext")
@click.argument("source")
@click.option("--dataset", "datasets", multiple=True, help="Labeled dataset whose tokens the compact vectors must cover (repeatable).")
@click.option("--name", required=True, help="Name of the compact vectors: wordvectors/NAME-fasttext (spec fasttext:NAME).")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder of the vectors folders [default: wordvectors/ under $FLAIRSUITE_HOME].",
)
@click.option("--force", is_flag=True, help="Replace existing vectors of that name.")
@corpora_dir_option
def compact_fasttext(source: str, datasets: tuple[str, ...], name: str, out_dir: Optional[str], force: bool, corpora_dir: Optional[str]) -> None:
    """Keep only the vectors of fasttext:SOURCE that the tokens of some labeled datasets are looked up as.

    On those datasets the compact file gives every token the vector the full one gives (Flair's
    lookup: word, lowercased, digit-normalised); other words get <unk>. The quickstart ships one.

    \b
    Example:
      flairsuite compact-fasttext de --dataset sturm --name de-quickstart
    """
    from pathlib import Path

    from flairsuite.paths import corpora_dir as datasets_dir
    from flairsuite.paths import wordvectors_dir
    from flairsuite.wordvectors.compact import compact_command

    out = Path(out_dir) if out_dir else wordvectors_dir()
    summary = compact_command(source, datasets, name, out, datasets_dir(corpora_dir), force)
    click.echo(
        f"{out / (name + '-fasttext')}: {summary['entries']:,} of fasttext:{source}'s vectors for {summary['corpus_words']:,} words of "
        f"{', '.join(datasets)} ({summary['uncovered_words']} without one), {summary['bytes'] / 1e6:.1f} MB"
    )


@cli.command("discover-words")
@click.option("--lang", required=True, help="Language (de, en, da, zh): its raw-text set; Chinese units are characters, others word tokens.")
@click.option("--corpus", multiple=True, type=click.Path(), help="Text files or folders instead of the language's raw-text set (as train-charlm).")
@click.option(
    "--add-dataset", multiple=True,
    help="Also the text of this labeled dataset's train split, labels ignored (repeatable), e.g. sturm; not one the raw text already holds (raw-zh: cluener).",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Lexicon file [default: lexicons/LANG.tsv under $FLAIRSUITE_HOME].")
@click.option("--shortest", type=click.IntRange(min=1), default=None, help="Units per entry at least [default: 2 characters, 1 word].")
@click.option("--longest", type=click.IntRange(min=1), default=None, help="Units per entry at most [default: 6 characters, 3 words].")
@click.option("--min-count", type=click.IntRange(min=1), default=None, help="Occurrences at least [default: 5].")
@click.option(
    "--common-share", type=click.FloatRange(min=0, max=1, min_open=True), default=None,
    help="An n-gram in more documents than this share is a common word, removed [default: 0.01].",
)
@click.option("--keep", type=click.FloatRange(min=0, max=1, min_open=True), default=None, help="Share kept, best score first [default: 0.5, the paper's].")
@click.option("--force", is_flag=True, help="Replace an existing lexicon file.")
@corpora_dir_option
def discover_words(**options: Any) -> None:
    """New-word discovery (Jia et al. 2020, Appendix A): n-grams of the raw text scored by mutual information plus
    left and right entropy, common words removed, the top half kept; written as a lexicon TSV.

    Ends with the coverage of the language's labeled NER train sets: the share of their entity
    mentions whose text is an entry, and the precision of the lexicon's matches.

    \b
    Examples:
      flairsuite discover-words --lang de
      flairsuite discover-words --lang zh --out lexicons/zh-cluener.tsv
      flairsuite discover-words --lang de --add-dataset sturm --out lexicons/de-sturm.tsv
    """
    from pathlib import Path

    from flairsuite.lexicon.command import discover_command
    from flairsuite.paths import corpora_dir as datasets_dir
    from flairsuite.paths import lexicons_dir

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

    from flairsuite.lexicon.command import match_command

    lines = list(match_command(Path(lexicon), Path(file), rule, Path(out) if out else None))
    for line in lines[:-1]:
        click.echo(line)
    click.echo(lines[-1], err=True)


@cli.command("train-bert")
@click.option("--lang", required=True, help="Language: its raw-text set (as train-charlm), and the NER sets whose dev/test sentences are kept out.")
@click.option(
    "--corpus", multiple=True, type=click.Path(),
    help="Text files or folders (.txt, .txt.gz), one document per line; default: the language's raw-text set (shared with train-charlm).",
)
@click.option("--name", default=None, help="Model folder [default: LANG-PRESET]: the model goes to bert/NAME (spec bert:NAME).")
@click.option("--preset", default="cpu", show_default=True, help="cpu (4 x 256, about an hour on 2 cores) or paper (6 x 512, 8 heads, sequences of 320).")
@click.option("--objective", default=None, help="mlm, mlm+nsp or mlm+sop [preset: mlm].")
@click.option("--wwm/--no-wwm", default=None, help="Whole-word masking [preset: on].")
@click.option("--positions", default=None, help="absolute or relative (Shaw-style key and value distances, clipped) [preset: relative].")
@click.option("--attention", default=None, help="full, or wwa (Whole-Word Attention; needs relative positions) [preset: full].")
@click.option("--layers", type=int, default=None, help="Transformer layers.")
@click.option("--hidden-size", type=int, default=None, help="Hidden size.")
@click.option("--heads", type=int, default=None, help="Attention heads.")
@click.option("--seq-len", type=int, default=None, help="Tokens per training sequence (the saved tokenizer's model_max_length).")
@click.option("--vocab-size", type=int, default=None, help="WordPiece vocabulary size.")
@click.option("--batch-size", type=int, default=None, help="Sequences per batch.")
@click.option("--learning-rate", type=float, default=None, help="Peak AdamW learning rate.")
@click.option("--dropout", type=float, default=None, help="Dropout of hidden states and attention [preset: 0.1].")
@click.option(
    "--lexicon", default=None, metavar="NAME",
    help="Char-Entity attention (Jia et al. 2020, §3.2) over the entries of lexicons/NAME.tsv (discover-words); needs relative positions and full attention.",
)
@click.option("--max-hours", type=float, default=None, help="Training time [default: 1 unless --max-tokens].")
@click.option("--max-tokens", type=int, default=None, help="Tokens to train on (also the end of the learning-rate decay).")
@click.option("--validate-tokens", type=int, default=None, help="Training tokens between validation points [preset: cpu 250,000, paper 20,000,000].")
@click.option("--checkpoint-minutes", type=float, default=None, help="Minutes between checkpoints [preset: cpu 5, paper 4].")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the model folder [default: bert/ under $FLAIRSUITE_HOME].",
)
@click.option("--resume", is_flag=True, help="Continue the run whose checkpoint is in the model folder (exactly, after a kill).")
@click.option("--force", is_flag=True, help="Discard an earlier run's checkpoint or model and start over.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads [default: all cores].")
@click.option("--seed", type=int, default=1, show_default=True)
@corpora_dir_option
def train_bert(**options: Any) -> None:
    """Pre-train a small BERT from scratch (masked LM, whole-word masking, relative positions, Whole-Word Attention).

    The model folder loads in plain transformers: AutoModel.from_pretrained(folder) for absolute
    positions with full attention, with trust_remote_code=True (or after `import flairsuite.bert`) otherwise.

    \b
    Examples:
      flairsuite train-bert --lang de --max-hours 1
      flairsuite train-bert --lang de --attention wwa --name de-wwa
      flairsuite train-bert --lang de --resume          # after a kill: continues exactly
    """
    from flairsuite.bert.command import train_bert_command

    for line in train_bert_command(options):
        click.echo(line)


@cli.command("tag")
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Accept a changed config under the same name: retrain what changed, drop runs no longer in the grid "
              "(a run whose embedding files only moved to new names is kept).")
@click.option("--keep-finished", is_flag=True,
              help="Keep runs finished with the same settings on other embedding files (e.g. fastText trained again on another machine).")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads for torch [default: torch's choice, all cores].")
@click.option("--runs", "patterns", multiple=True, metavar="PATTERN",
              help="Only the runs whose id matches (shell-style, e.g. 'ler-*/*/map*/*'); repeatable, each must match a run.")
@click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None,
    help="Embedding cache folder [default: cache/embeddings under $FLAIRSUITE_HOME]; with --ray on a cluster, storage every node sees.",
)
@click.option("--ray", "ray_address", default=None, metavar="local|auto|ADDRESS",
              help="Run the pending runs as Ray tasks: local starts Ray on this machine, auto joins $RAY_ADDRESS's cluster.")
@click.option("--gpus", type=click.FloatRange(min=0), default=0, show_default=True, help="GPUs each run asks Ray for (with --ray).")
@click.option("--ray-retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="With --ray: restarts of a run whose worker died; it continues from its epoch checkpoint.")
@corpora_dir_option
def tag(
    experiment: str, force: bool, keep_finished: bool, threads: Optional[int], patterns: tuple[str, ...], cache_dir: Optional[str],
    ray_address: Optional[str], gpus: float, ray_retries: int, corpora_dir: Optional[str],
) -> None:
    """Train and score every run of an experiment file; finished runs are skipped, a killed run resumes.

    Results go to results/<name>/ under $FLAIRSUITE_HOME; the comparison table is printed at the end.

    \b
    Examples:
      flairsuite tag experiments/sturm-table3.yaml
      flairsuite tag experiments/table8-de.yaml --runs 'arendt/*' --threads 1   # part of a grid, e.g. one per core
      flairsuite tag experiments/table8-de.yaml --ray local --threads 1          # one Ray task per run, one core each
      flairsuite tag experiments/table8-de.yaml --ray auto --gpus 1 --cache-dir /shared/cache   # on a Ray cluster
      flairsuite results results/sturm-table3 --plot
    """
    from pathlib import Path

    from flairsuite.paths import corpora_dir as resolve
    from flairsuite.paths import home
    from flairsuite.results.collect import per_type_frame, read_runs, runs_frame
    from flairsuite.results.tables import report
    from flairsuite.tagging.grid import plan_experiment, run_experiment

    cache = Path(cache_dir) if cache_dir else None
    if gpus and not ray_address:
        raise FlairsuiteError("--gpus is the request of each Ray task: use it with --ray")
    if ray_address:
        from flairsuite.tagging.ray_grid import RayRequest, run_experiment_on_ray

        plan = plan_experiment(Path(experiment), home(), force, click.echo, patterns, keep_finished)
        request = RayRequest(ray_address, threads or 1, gpus, ray_retries)
        out = run_experiment_on_ray(plan, home().resolve(), resolve(corpora_dir).resolve(), request, click.echo, cache.resolve() if cache else None)
    else:
        if threads:
            import torch

            torch.set_num_threads(threads)
        out = run_experiment(Path(experiment), home(), resolve(corpora_dir), force, click.echo, patterns, cache, keep_finished)
    runs = read_runs(out)
    click.echo("\n" + report(runs_frame(runs), per_type_frame(runs)))


@cli.command("quickstart")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads for torch [default: all cores].")
@corpora_dir_option
@click.pass_context
def quickstart(ctx: click.Context, threads: Optional[int], corpora_dir: Optional[str]) -> None:
    """The whole pipeline on a small default: Sturm, a German LM pair and word vectors, three taggers, one table (about 5 min on 2 cores).

    Fetches Sturm, trains a small forward/backward character-LM pair (3 minutes each) unless
    charlm/de-forward and charlm/de-backward exist (the released pair is committed), then runs
    the experiment flairsuite/experiments/quickstart.yaml (bilstm-crf, map-crf, map on the pair and the
    committed wordvectors/de-quickstart-fasttext) and prints its table.

    \b
    Example:
      flairsuite quickstart
    """
    from importlib.resources import files

    from flairsuite.embeddings import existing_artifact
    from flairsuite.paths import home

    ctx.invoke(corpora_fetch, name="sturm", corpora_dir=corpora_dir)
    for direction in ("forward", "backward"):
        try:
            existing_artifact(f"charlm:de-{direction}", home())
            click.echo(f"using charlm/de-{direction}")
        except FlairsuiteError:
            ctx.invoke(train_charlm, lang="de", direction=direction, max_hours=QUICKSTART_LM_HOURS, hidden_size=256, threads=threads, corpora_dir=corpora_dir)
    ctx.invoke(tag, experiment=str(files("flairsuite.experiments") / "quickstart.yaml"), threads=threads, corpora_dir=corpora_dir)


@cli.command("results")
@click.argument("directory", required=False, metavar="[DIR]", type=click.Path(file_okay=False))
@click.option("--experiment", default=None, help="Only this experiment [default: one table per experiment found].")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "latex"]), default="md", show_default=True, help="Table format, printed to stdout.")
@click.option(
    "--metric", type=click.Choice(["score", "f1", "precision", "recall", "accuracy"]), default="score", show_default=True,
    help="score: each corpus's main score, entity F1 (NER) or token accuracy (PoS); the others that score only (blank where a task has none).",
)
@click.option("--split", type=click.Choice(["test", "dev"]), default="test", show_default=True)
@click.option("--per-type", is_flag=True, help="Also a table per corpus: mean score per entity type (PoS: per tag).")
@click.option(
    "--artifacts", is_flag=True,
    help="Also a table per experiment of its stacks' embedding files as the runs recorded them "
    "(LM characters, hours, valid perplexity; fastText dim; BERT settings; SHA-256).",
)
@click.option("--table8", is_flag=True, help="Instead: test E-F1 in the layout of Zöllner et al. 2021, Table 8, beside the paper's values.")
@click.option(
    "--curve", type=click.Choice(["train-fraction", "lm-chars", "epochs"]), default=None,
    help="Also write a learning curve PNG (DIR/curve-<kind>.png): the score against the share of train or the LM's training characters; "
    "epochs (with --split dev): the dev score after each training epoch.",
)
@click.option(
    "--table3", is_flag=True,
    help="Instead: stack x tagger in the layout of Akbik et al. 2018, Table 3, test with dev means beside, the paper's values beside.",
)
@click.option("--table6", is_flag=True, help="Instead: fine-tuned BERTs per pre-training variant, Zöllner et al. 2021, Table 6 (paper beside).")
@click.option("--table9", is_flag=True, help="Instead: fine-tuned LCRFNER per BERT attention (WWA or full), Zöllner et al. 2021, Table 9.")
@click.option(
    "--plot", is_flag=False, flag_value="", default=None, metavar="[PATH]",
    help="Also write a bar chart PNG [default: DIR/comparison.png]; a path goes as --plot=PATH. With --table8: the paper's values as ticks.",
)
def results(
    directory: Optional[str], experiment: Optional[str], fmt: str, metric: str, split: str, per_type: bool, artifacts: bool, table8: bool,
    table3: bool, table6: bool, table9: bool, plot: Optional[str], curve: Optional[str]
) -> None:
    """Comparison tables of the runs' metrics.json files below DIR (a results or experiment folder).

    Rows are embedding stack x tagger (x Entity-Fix), columns corpora, cells mean ± std over
    seeds (n) in percent, the best per column marked. DIR defaults to results/ under $FLAIRSUITE_HOME.

    \b
    Examples:
      flairsuite results results/sturm-table3 --per-type
      flairsuite results results/ablation-lm-de --split dev --artifacts
      flairsuite results --experiment sturm-table3 --format latex --plot=table3.png
    """
    from pathlib import Path

    from flairsuite.paths import results_dir
    from flairsuite.results.collect import only_experiment, per_type_frame, read_runs, runs_frame
    from flairsuite.results.plot import write_plot
    from flairsuite.results.tables import report

    root = Path(directory) if directory else results_dir()
    runs = read_runs(root)
    frame, types = runs_frame(runs), per_type_frame(runs)
    if experiment:
        frame, types = only_experiment(frame, experiment), types[types["experiment"] == experiment]
    if table8 + table3 + table6 + table9 > 1:
        raise FlairsuiteError("give one of --table8, --table3, --table6, --table9")
    if curve is not None:  # first: a curve the runs cannot draw is an error before any table is printed
        from flairsuite.results.curves import write_curve

        target = root / f"curve-{curve}.png"
        write_curve(frame, curve, target, metric, split)
        click.echo(f"wrote {target}", err=True)
    if table6 or table9:
        from flairsuite.results.pretraining_tables import LAYOUTS

        layout = LAYOUTS["table6" if table6 else "table9"]
        click.echo("\n\n".join(layout(group, fmt) for _, group in frame.groupby("experiment")))
    elif table8:
        from flairsuite.results.table8 import table8 as paper_layout

        click.echo("\n\n".join(paper_layout(group, fmt) for _, group in frame.groupby("experiment")))
    elif table3:
        from flairsuite.results.table3 import table3 as akbik_layout

        click.echo("\n\n".join(akbik_layout(group, fmt) for _, group in frame.groupby("experiment")))
    else:
        click.echo(report(frame, types, fmt, metric, split, per_type))
    if artifacts:
        from flairsuite.results.artifacts import artifact_report

        files = artifact_report(frame, fmt)
        click.echo("\n\n" + files if files else "(the runs recorded no embedding files: they predate the record)")
    if plot is not None:
        target = Path(plot) if plot else root / "comparison.png"
        write_plot(frame, target, metric, split, table8=table8)
        click.echo(f"wrote {target}", err=True)


@cli.command("predict")
@click.argument("model", type=click.Path())
@click.argument("file", type=click.Path())
@click.option(
    "--format", "fmt", type=click.Choice(["column", "json", "tei", "html"]), default="column", show_default=True,
    help="column: token TAB tag, a blank line between sentences; json: one object per sentence with its spans; "
    "tei: TEI P5 (a TEI/XML FILE is tagged in place); html: one self-contained page with the entities highlighted.",
)
@click.option(
    "--markup-map", type=click.Path(dir_okay=False), default=None,
    help="YAML map of entity type to TEI element for --format tei, e.g. `work: title` or `LOC: name[@type=place]`.",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to this file (atomically) [default: stdout].")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Sentences per batch at most [default: 256 fast, 32 (Flair's) with --no-fast].")
@click.option(
    "--fast/--no-fast", default=True, show_default=True,
    help="flairsuite's fast path (int8 LSTMs, length-bucketed batches) or the model's own Flair predict.",
)
@click.option("--entity-fix", is_flag=True, help="Repair ill-formed tags with the Entity-Fix rule (Zöllner et al. 2021, §4.3) before writing tags and spans.")
def predict(
    model: str, file: str, fmt: str, markup_map: Optional[str], out: Optional[str], batch_size: Optional[int], fast: bool, entity_fix: bool
) -> None:
    """Tag the raw text FILE (UTF-8) with MODEL, any saved suite tagger (cse included); sentences and tokens as Flair splits them.

    Tags are the decoder's raw per-token tags (with --entity-fix: after that rule); JSON spans are those Flair's predict would attach,
    with token indices (end exclusive), character offsets in FILE and confidences.

    TEI: a plain text becomes a TEI P5 document (one <p> per paragraph, text and whitespace kept); a TEI/XML FILE (.xml, .tei,
    or starting with '<') keeps every byte and gets entity elements inside its <p>, <s> and <ab> that hold only text and
    milestones (<lb/>, <pb/>); entities that would cross markup are skipped and counted. Types map to persName, placeName,
    orgName, date, else <name type="...">; --markup-map changes that.

    \b
    Examples:
      flairsuite predict results/sturm-table3/sturm/proposed/bilstm-crf/seed-1/model.pt letter.txt
      flairsuite predict model.pt letter.txt --format json --out letter.jsonl
      flairsuite predict model.pt edition.xml --format tei --out edition-ner.xml
      flairsuite predict model.pt letter.txt --format html --out letter.html
    """
    import time
    from pathlib import Path

    from flairsuite.atomic import write_text
    from flairsuite.predict import predict_document

    start = time.perf_counter()
    found = predict_document(Path(model), Path(file), fmt, fast, batch_size, entity_fix, Path(markup_map) if markup_map else None)
    if out:
        write_text(Path(out), found.text)
    else:
        click.echo(found.text, nl=False)
    click.echo(found.summary(time.perf_counter() - start), err=True)


@cli.command("serve")
@click.argument("model", type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface; the server has no authentication).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on; 0 picks a free one.")
@click.option("--max-chars", type=click.IntRange(min=1), default=100_000, show_default=True, help="Longest text accepted, in characters (longer: HTTP 413).")
@click.option("--fast/--no-fast", default=True, show_default=True, help="flairsuite's fast path or the model's own Flair predict (as for predict).")
@click.option("--entity-fix", is_flag=True, help="Repair ill-formed tags with the Entity-Fix rule before reading spans (as for predict).")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch threads [default: torch's, one per core].")
@click.option("--access-log/--no-access-log", default=True, show_default=True, help="Log one line per request.")
def serve(model: str, host: str, port: int, max_chars: int, fast: bool, entity_fix: bool, threads: Optional[int], access_log: bool) -> None:
    """Serve MODEL (any saved suite tagger) over HTTP: a page at / to paste a text and see its entities, and POST /tag.

    POST /tag takes {"text": "..."} (application/json) or the text itself (text/plain, UTF-8) and answers
    {"spans": [{"start", "end", "text", "type", "confidence"}], "sentences": N, "tokens": N}, offsets in characters
    of the text. Errors are JSON {"error": "..."}: 400 empty or not UTF-8 or malformed, 413 too long, 415 wrong type.
    The model is loaded once; needs the serve extra (pip install 'flairsuite[serve]').

    \b
    Examples:
      flairsuite serve results/sturm-table3/sturm/proposed/bilstm-crf/seed-1/model.pt
      curl -s localhost:8000/tag -H 'Content-Type: application/json' -d '{"text": "Anna reiste nach Berlin."}'
    """
    from pathlib import Path

    import torch

    from flairsuite.serve.server import serve as run_server

    if threads:
        torch.set_num_threads(threads)
    run_server(Path(model), host, port, click.echo, access_log, max_chars=max_chars, fast=fast, entity_fix=entity_fix)


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
