"""`suggest`: what to annotate next, the units of a text a saved tagger is least sure of, pre-annotated."""

from typing import Optional

import click

from flairsuite.cli.group import cli, threads_option


@cli.command("suggest")
@click.argument("model", type=click.Path())
@click.argument("texts", type=click.Path())
@click.option("--n", "count", type=click.IntRange(min=1), default=50, show_default=True,
              help="How many sentences (short ones merged, --min-tokens) or documents to choose.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Write the suggestions with the model's tags here (atomically).")
@click.option(
    "--format", "fmt", type=click.Choice(["column", "webanno", "jsonl", "labelstudio", "conll"]), default="column", show_default=True,
    help="column: token TAB tag; webanno: WebAnno TSV 3 (INCEpTION), all units one document, each sentence's #Text= its characters in the file; "
    "jsonl: doccano, a line per unit; labelstudio: Label Studio tasks with predictions (both with a meta object: file, line, offsets, "
    "the selected sentences); conll: token SPACE tag. Every format: the file's own text; NAME.selection.json beside --out lists the units.",
)
@click.option("--unit", type=click.Choice(["sentence", "window", "document"]), default="window", show_default=True,
              help="What is written for a chosen sentence: itself; it with --neighbours sentences of its file on each side (windows that "
              "overlap are one); or rank documents (each file of a TEXTS folder; each paragraph of one plain-text file) and write them whole.")
@click.option("--neighbours", type=click.IntRange(min=0), default=2, show_default=True,
              help="Sentences before and after a chosen one that --unit window writes with it (a sentence inside a chosen window is passed over).")
@click.option("--min-tokens", type=click.IntRange(min=1), default=5, show_default=True,
              help="A sentence of fewer tokens is merged with the following ones of its file before ranking (the last with the one before).")
@click.option("--measure", type=click.Choice(["uncertainty", "entropy"]), default="uncertainty", show_default=True,
              help="uncertainty: CRF 1 - p(best path)^(1/n), softmax head mean token entropy; entropy: mean entropy of the tag marginals.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Sentences per batch at most [default: 256].")
@click.option("--join-line-ends/--keep-line-ends", default=True, show_default=True,
              help="Join a plain text's words broken at a line end before tagging, as predict does (--keep-line-ends: read the lines as they are).")
@click.option("--reader-spans/--keep-raw-spans", default=True, show_default=True,
              help="Trim the written spans of punctuation tokens, drop punctuation-only spans and spans across a line break, as predict does.")
@threads_option
def suggest(
    model: str, texts: str, count: int, out: str, fmt: str, unit: str, neighbours: int, min_tokens: int, measure: str, batch_size: Optional[int],
    join_line_ends: bool, reader_spans: bool, threads: Optional[int],
) -> None:
    """Rank the unannotated sentences of TEXTS (a file or folder: plain text, or corpus files whose labels are ignored) by MODEL's
    uncertainty, keep near-duplicates apart (word-set Jaccard >= 0.8) and write the top N with MODEL's tags to --out, ready to import
    into the annotation tool. Words broken at a line end are joined and the written spans trimmed as predict does them
    (--keep-line-ends, --keep-raw-spans turn that off). The ranking (rank, measure, file:line, text) is printed on stdout.

    A chosen sentence is written with its letter's context (--unit window: 2 sentences on each side), sentences shorter than
    --min-tokens are merged with their neighbours before ranking, and every format holds the letters' own text (spacing, line
    breaks); the units' files, lines and offsets, and where the chosen sentences lie in them, go to NAME.selection.json beside --out
    (and to each line's or task's meta in jsonl and labelstudio).

    Plain texts are read part by part
    (as predict reads them) and only a bounded pool of the most uncertain units is kept, so memory does not grow with TEXTS;
    a progress bar in bytes of TEXTS goes to stderr.

    \b
    Examples:
      flairsuite suggest results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt letters/ --n 50 --out next.tsv --format webanno
      flairsuite suggest model.pt letters.txt --unit document --n 5 --out next.jsonl --format jsonl
      flairsuite suggest model.pt letters/ --unit sentence --min-tokens 1 --n 50 --out next.conll --format conll   # sentences alone
    """
    import time
    from pathlib import Path

    from flairsuite.files.atomic import write_json, write_text
    from flairsuite.runtime.threads import apply as apply_threads
    from flairsuite.suggest.suggestion import suggest as rank

    if threads:
        apply_threads(threads)
    start = time.perf_counter()
    found = rank(Path(model), Path(texts), count, fmt, unit, measure, batch_size, join_line_ends, reader_spans, neighbours, min_tokens)
    target = Path(out)
    side = target.with_name(target.stem + ".selection.json")
    write_text(target, found.text)
    write_json(side, found.selection)
    click.echo(found.ranking, nl=False)
    click.echo(found.summary(measure, unit, time.perf_counter() - start) + f"; wrote {out} and {side}", err=True)
