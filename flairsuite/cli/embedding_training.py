"""The training commands: character-LM pairs, fastText vectors (and their compact copies), small BERTs."""

from typing import Any, Optional

import click

from flairsuite.bert.settings import BertSettings, presets
from flairsuite.charlm.recipes import default_presets
from flairsuite.charlm.settings import CharlmRun, Hyper
from flairsuite.cli.group import cli, corpora_dir_option, force_option, threads_option_for
from flairsuite.cli.settings_options import options_from
from flairsuite.rawtext.settings import PrepareConfig
from flairsuite.wordvectors.settings import CONFIG_OPTIONS, FastTextConfig, FastTextRun


@cli.command("train-charlm")
@options_from(CharlmRun, "lang", "init")
@options_from(PrepareConfig, "new_chars", "exclude")
@options_from(CharlmRun, "direction")
@options_from(PrepareConfig, "corpus")
@options_from(CharlmRun, "preset")
@options_from(Hyper, *Hyper.keys(), presets=default_presets)
@options_from(CharlmRun, "max_hours", "max_chars", "max_cpu_hours")
@options_from(PrepareConfig, "heldout_fraction", "unk_fraction")
@options_from(CharlmRun, "name")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the model folders [default: charlm/ under $FLAIRSUITE_HOME].",
)
@click.option(
    "--resume", is_flag=True,
    help="Continue the run whose checkpoint is in the model folder (without one: continue its best-lm.pt and summary.json, e.g. the released pair).",
)
@force_option("Discard an earlier run's checkpoint and start over.")
@options_from(PrepareConfig, "seed")
@threads_option_for("the cores other processes leave free", "CPU threads")
@options_from(CharlmRun, "precision", "model_dtype")
@corpora_dir_option
def train_charlm(**options: Any) -> None:
    """Train forward and backward character LMs that plain Flair loads with FlairEmbeddings(path).

    \b
    Examples:
      flairsuite train-charlm --lang de                   # the cpu preset's budget: 82 M characters a direction
      flairsuite train-charlm --lang de --max-hours 1
      flairsuite train-charlm --lang de --direction forward --hidden-size 256 --max-chars 2000000
      flairsuite train-charlm --lang de --resume          # after a kill: continues exactly
      flairsuite train-charlm --init de --corpus my_texts/ --name edition --exclude my_corpus/   # adapt the pair
    """
    from flairsuite.charlm.train_charlm import train_charlm_command

    for line in train_charlm_command(CharlmRun.from_options(options)):
        click.echo(line)


@cli.command("train-fasttext")
@options_from(FastTextRun, "lang", "init")
@options_from(PrepareConfig, "exclude", "corpus")
@options_from(FastTextConfig, *CONFIG_OPTIONS, unset=True)
@options_from(PrepareConfig, "heldout_fraction")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the vectors folder LANG-fasttext [default: wordvectors/ under $FLAIRSUITE_HOME].",
)
@options_from(FastTextRun, "name", "keep_model")
@force_option("Replace existing vectors.")
@options_from(PrepareConfig, "seed")
@threads_option_for("all cores", "Worker threads")
@corpora_dir_option
def train_fasttext(**options: Any) -> None:
    """Train fastText word vectors on the train-charlm corpus (or continue them on your text); plain Flair loads them with WordEmbeddings(path).

    Tokens of the language's local NER and PoS corpora that the vocabulary lacks get their
    subword-built vectors added, since WordEmbeddings ignores fastText's n-grams.

    \b
    Examples:
      flairsuite train-fasttext --lang de
      flairsuite train-fasttext --lang de --dim 100 --name de100     # spec fasttext:de100
      flairsuite train-fasttext --init de --corpus my_texts/ --name edition --exclude my_corpus/   # adapt the vectors
    """
    from flairsuite.wordvectors.train_fasttext import train_fasttext_command

    for line in train_fasttext_command(FastTextRun.from_options(options)):
        click.echo(line)


@cli.command("compact-fasttext")
@click.argument("source")
@click.option("--dataset", "datasets", multiple=True, help="Labeled dataset whose tokens the compact vectors must cover (repeatable).")
@click.option("--name", required=True, help="Name of the compact vectors: wordvectors/NAME-fasttext (spec fasttext:NAME).")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder of the vectors folders [default: wordvectors/ under $FLAIRSUITE_HOME].",
)
@force_option("Replace existing vectors of that name.")
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

    from flairsuite.files.paths import corpora_dir as datasets_dir
    from flairsuite.files.paths import wordvectors_dir
    from flairsuite.wordvectors.compact import compact_command

    out = Path(out_dir) if out_dir else wordvectors_dir()
    summary = compact_command(source, datasets, name, out, datasets_dir(corpora_dir), force)
    click.echo(
        f"{out / (name + '-fasttext')}: {summary['entries']:,} of fasttext:{source}'s vectors for {summary['corpus_words']:,} words of "
        f"{', '.join(datasets)} ({summary['uncovered_words']} without one), {summary['bytes'] / 1e6:.1f} MB"
    )


@cli.command("train-bert")
@click.option("--lang", required=True, help="Language: its raw-text set (as train-charlm), and the NER sets whose dev/test sentences are kept out.")
@options_from(PrepareConfig, "corpus")
@click.option("--name", default=None, help="Model folder [default: LANG-PRESET]: the model goes to bert/NAME (spec bert:NAME).")
@click.option("--preset", type=click.Choice(["cpu", "paper"]), default="cpu", show_default=True,
              help="cpu (4 x 256, about an hour on 2 cores) or paper (6 x 512, 8 heads, sequences of 320).")
@options_from(BertSettings, "objective", "wwm", "positions", "attention", "layers", "hidden_size", "heads", "seq_len", "vocab_size",
              "batch_size", "learning_rate", "dropout", presets=presets)
@click.option(
    "--lexicon", default=None, metavar="NAME",
    help="Char-Entity attention (Jia et al. 2020, §3.2) over the entries of lexicons/NAME.tsv (discover-words); needs relative positions and full attention.",
)
@click.option("--max-hours", type=float, default=None, help="Training time [default: 1 unless --max-tokens].")
@click.option("--max-tokens", type=int, default=None, help="Tokens to train on (also the end of the learning-rate decay).")
@options_from(BertSettings, "validate_tokens", "checkpoint_minutes", presets=presets)
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), default=None,
    help="Folder for the model folder [default: bert/ under $FLAIRSUITE_HOME].",
)
@click.option("--resume", is_flag=True, help="Continue the run whose checkpoint is in the model folder (exactly, after a kill).")
@force_option("Discard an earlier run's checkpoint or model and start over.")
@threads_option_for("the cores other processes leave free", "CPU threads")
@click.option(
    "--precision", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto", show_default=True,
    help="Training steps' arithmetic: bfloat16 runs them under autocast (benchmarks/bert_speed.py --part precision: tokens/s and "
    "MLM accuracy against float32); weights, optimizer and validation stay float32; auto: bfloat16 where the CPU or GPU computes "
    "it natively, else float32. Not part of a checkpoint's settings: a run may change it on --resume (then not bit-exact; "
    "summary.json says mixed).",
)
@options_from(PrepareConfig, "seed")
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
    from flairsuite.bert.train_bert import train_bert_command

    for line in train_bert_command(options):
        click.echo(line)
