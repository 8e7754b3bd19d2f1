"""`flairsuite train-tagger EXPORT`: one command from an annotation export to a tagger, its model card and its report.

stdout holds what the command read, where it wrote and the scores; the adaptation's and the runner's progress go to
stderr (the tqdm bars already do). The work is the library's (`flairsuite.experiments.train_tagger`): an experiment file
written into DIR and run as `flairsuite tag` runs one, its `adapt:` block first (`experiments.adapt_first`).
"""

import contextlib
import sys
from pathlib import Path
from typing import Optional

import click

from flairsuite.cli.group import cli, corpora_dir_option, force_option, threads_option


@cli.command("train-tagger")
@click.argument("export", type=click.Path(path_type=Path))
@click.option("--texts", multiple=True, type=click.Path(path_type=Path), metavar="PATH",
              help="Plain letters not annotated yet (a .txt file, or a folder of them); repeatable. The LM pair is continued on "
                   "them besides the export's own text, and the tagger self-trains on them (see --no-self-training).")
@click.option("--self-training/--no-self-training", default=True, show_default=True,
              help="With --texts: tag up to as many of their sentences as train holds, train again with those tagged confidently "
                   "(0.9), keep the tagger better on dev (about three times the training time).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="Where the experiment file, model.pt, card.json and report.html go [default: <export name>-tagger].")
@click.option("--max-epochs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Train the BiLSTM-CRF for at most N epochs [default: the tagger's, up to 150, ending once annealing is done].")
@click.option("--annotator", default=None, metavar="NAME",
              help="INCEpTION project export (ZIP or folder): read this annotator's version of each document [default: the curated one].")
@click.option("--lang", default="de", show_default=True, metavar="LANG",
              help="The texts' language: its released character-LM pair is continued (the clone ships de, en, da, zh).")
@force_option("Retrain where the experiment in DIR was run before with other settings or another export.")
@threads_option
@corpora_dir_option
def train_tagger(export: Path, texts: tuple[Path, ...], self_training: bool, out: Optional[Path], max_epochs: Optional[int],
                 annotator: Optional[str], lang: str, force: bool, threads: Optional[int], corpora_dir: Optional[str]) -> None:
    """Train a tagger on an annotation export, in one go: read it, split it, adapt the LMs, train, report.

    EXPORT is an INCEpTION project export (its ZIP or folder), a folder of annotated files of one format, or one file:
    WebAnno TSV, doccano JSONL, Label Studio JSON, CoNLL-U or token/tag columns, told by content. What was read is
    printed first (format, documents, entity types, the split); an export that names no train/dev/test split is split
    by document (seed 1, 80/10/10). The recipe for own texts follows: the released LM pair (and fastText vectors where
    present) continued on the export's text and --texts, then a BiLSTM-CRF, self-trained on --texts (one round, the
    better of the two on dev kept). DIR gets experiment.yaml (the same run:
    `flairsuite tag DIR/experiment.yaml`), model.pt, card.json and report.html (docs/own-data.md).

    \b
    Examples:
      flairsuite train-tagger letters-project.zip --texts data/plain/ --out letters-tagger
      flairsuite train-tagger data/letters/ --max-epochs 20 --threads 1
      flairsuite train-tagger letters-project.zip --annotator anna
    """
    from flairsuite.cli.experiments import adapt_first
    from flairsuite.experiments.dispatch import TagRequest
    from flairsuite.experiments.train_tagger import TaggerRequest, prepare, train_prepared
    from flairsuite.files.paths import corpora_dir as resolve
    from flairsuite.files.paths import home

    prepared = prepare(TaggerRequest(export, out, texts, lang, max_epochs, annotator, self_training=self_training), home())
    for line in prepared.lines():
        click.echo(line)
    request = TagRequest(home(), resolve(corpora_dir), force, threads=threads)
    with contextlib.redirect_stdout(sys.stderr):  # the adaptation's and the runner's lines are progress: stderr
        trained = train_prepared(prepared, request, lambda experiment: adapt_first(experiment, threads, corpora_dir), click.echo)
    for line in trained.lines():
        click.echo(line)
