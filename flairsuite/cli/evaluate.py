"""`flairsuite evaluate`: a saved tagger scored on one split of a registered dataset or an own corpus folder;
`flairsuite charlm-perplexity`: character LMs' perplexity on a corpus's sentences beside their own held-out text's."""

from typing import Any, Optional

import click

from flairsuite.cli.corpora import corpus_options
from flairsuite.cli.group import cli, set_threads, threads_option
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS


@cli.command("evaluate")
@click.argument("model", type=click.Path())
@click.argument("name", metavar="NAME_OR_PATH")
@click.option("--split", type=click.Choice(["train", "dev", "test"]), default="test", show_default=True,
              help="The split to score (a corpus folder needs only this one; a single FILE is read as it).")
@click.option("--fast/--no-fast", default=True, show_default=True, help="flairsuite's fast path or the model's own Flair predict (as for predict).")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Sentences per batch at most [default: 256 fast, 32 with --no-fast].")
@click.option("--entity-fix", is_flag=True, help="Repair ill-formed tags with the Entity-Fix rule before scoring.")
@click.option("--predictions", type=click.Path(dir_okay=False), default=None,
              help="Also write the predictions to this file (atomically), in --format.")
@click.option(
    "--format", "fmt", type=click.Choice(["column", *ANNOTATION_FORMATS]), default="column", show_default=True,
    help="Format of --predictions: column: token, gold and predicted tag per line, as a run's predictions.tsv; the predicted spans "
    "for annotation tools (the split's tokens joined by spaces, a sentence a line): webanno (WebAnno TSV 3.3, one document), "
    "jsonl (doccano, a line per sentence), labelstudio (Label Studio JSON tasks, one per sentence), conll (CoNLL-2002 token SPACE BIO tag).",
)
@click.option("--by-seen", is_flag=True,
              help="NER: also the recall on entities the train split holds (same tokens and type) and on new ones, and "
                   "the false positives split the same way.")
@threads_option
@corpus_options(splits=False)
def evaluate(spec: Any, root: Any, model: str, split: str, fast: bool, batch_size: Optional[int], entity_fix: bool, predictions: Optional[str],
             fmt: str, by_seen: bool, threads: Optional[int]) -> None:
    """Score MODEL (any saved suite tagger) on a split of NAME_OR_PATH: a registered dataset, a corpus folder of your own
    (only the scored split need be there), or one annotated file.

    The split is read as `flairsuite tag` reads it and tagged token by token as it stands; NER is scored as
    the runs are (strict IOB2 per type, recall by entity length), PoS by token accuracy per tag.

    \b
    Examples:
      flairsuite evaluate results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt sturm --split dev
      flairsuite evaluate model.pt data/letters/ --split dev --predictions letters-dev.tsv
      flairsuite evaluate model.pt data/letters/ --predictions letters-test.webanno.tsv --format webanno   # review in INCEpTION
      flairsuite evaluate model.pt data/new-batch.conll --input-format conllu --label misc:NE
      flairsuite evaluate model.pt sturm --split test --by-seen    # does it find the names train lacks?
    """
    import time
    from pathlib import Path

    from flairsuite.errors import FlairsuiteError
    from flairsuite.evaluate import evaluate as score
    from flairsuite.evaluate import input_files, predictions_text, report_lines
    from flairsuite.files.atomic import write_text

    if fmt != "column" and not predictions:
        raise FlairsuiteError(f"--format {fmt} is the format of --predictions: give --predictions FILE too")
    set_threads(threads)
    started = time.perf_counter()
    evaluation = score(Path(model), spec, root, split, fast, batch_size, entity_fix, by_seen)
    if predictions and Path(predictions).resolve() in {evaluation.data.path.resolve(), *input_files(evaluation)}:
        raise FlairsuiteError(f"--predictions {predictions} is a file of the corpus: write the predictions elsewhere")
    text = predictions_text(evaluation, fmt, Path(model)) if predictions else None  # a PoS split in a span format fails before the report
    for line in report_lines(evaluation, Path(model), entity_fix):
        click.echo(line)
    if predictions and text is not None:
        write_text(Path(predictions), text)
        click.echo(f"wrote {predictions}", err=True)
    click.echo(f"{time.perf_counter() - started:.1f} s", err=True)


@cli.command("charlm-perplexity")
@click.argument("models", metavar="LM...", nargs=-1, required=True, type=click.Path())
@click.argument("name", metavar="NAME_OR_PATH")
@threads_option
@corpus_options(splits=True, file_as_split=True)
def charlm_perplexity(spec: Any, root: Any, splits: Optional[list[str]], models: tuple[str, ...], threads: Optional[int]) -> None:
    """Perplexity per character of each character LM (a best-lm.pt or its folder) on the sentences of NAME_OR_PATH's
    splits (a registered dataset, a corpus folder of your own, or one annotated file), beside the LM's perplexity on its
    own held-out text: how far the tagging corpus lies from the LM's training text.

    \b
    Examples:
      flairsuite charlm-perplexity charlm/da-forward charlm/da-backward danish-ner --split dev,test
      flairsuite charlm-perplexity charlm/de-forward data/letters/ --split train
    """
    from pathlib import Path

    from flairsuite.charlm.perplexity import lm_file, load_model, sentences_text, text_perplexity
    from flairsuite.corpora.labeled import read_splits

    set_threads(threads)
    lms = [(location, lm_file(Path(location))) for location in models]
    loaded = [(location, lm, load_model(lm)) for location, lm in lms]  # every file checked before any output
    data = read_splits(spec, root, splits)
    width = max(28, *(len(location) for location, _ in lms))
    click.echo(f"{'LM':<{width}} {'own valid':>9}  {'split':<16} {'characters':>11} {'<unk> %':>8} {'perplexity':>10}")
    for location, lm, model in loaded:
        own = f"{lm.own_valid_perplexity:.3f}" if lm.own_valid_perplexity is not None else "-"
        for split, split_data in data.items():
            text = sentences_text((sentence.tokens for sentence in split_data.sentences), lm.unspaced)
            result = text_perplexity(model, text)
            click.echo(f"{location:<{width}} {own:>9}  {spec.name + ' ' + split:<16} {result.characters:>11,} "
                       f"{100 * result.unknown_rate:>8.3f} {result.perplexity:>10.3f}")
