"""`suggest`: what to annotate next, the units of a text a saved tagger is least sure of, pre-annotated."""

from typing import Optional

import click

from flairsuite.cli.group import cli, threads_option


@cli.command("suggest")
@click.argument("model", type=click.Path())
@click.argument("texts", type=click.Path())
@click.option("--n", "count", type=click.IntRange(min=1), default=50, show_default=True, help="How many sentences (or documents) to suggest.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Write the suggestions with the model's tags here (atomically).")
@click.option(
    "--format", "fmt", type=click.Choice(["column", "webanno", "jsonl", "labelstudio", "conll"]), default="column", show_default=True,
    help="column: token TAB tag; webanno: WebAnno TSV 3 (INCEpTION), all suggestions one document; jsonl: doccano, a line each; "
    "labelstudio: Label Studio tasks with predictions; conll: token SPACE tag.",
)
@click.option("--unit", type=click.Choice(["sentence", "document"]), default="sentence", show_default=True,
              help="Rank sentences, or documents (each file of a TEXTS folder; each paragraph of one plain-text file).")
@click.option("--measure", type=click.Choice(["uncertainty", "entropy"]), default="uncertainty", show_default=True,
              help="uncertainty: CRF 1 - p(best path)^(1/n), softmax head mean token entropy; entropy: mean entropy of the tag marginals.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Sentences per batch at most [default: 256].")
@click.option("--join-line-ends/--keep-line-ends", default=True, show_default=True,
              help="Join a plain text's words broken at a line end before tagging, as predict does (--keep-line-ends: read the lines as they are).")
@click.option("--reader-spans/--keep-raw-spans", default=True, show_default=True,
              help="Trim the written spans of punctuation tokens, drop punctuation-only spans and spans across a line break, as predict does.")
@threads_option
def suggest(
    model: str, texts: str, count: int, out: str, fmt: str, unit: str, measure: str, batch_size: Optional[int], join_line_ends: bool,
    reader_spans: bool, threads: Optional[int],
) -> None:
    """Rank the unannotated sentences of TEXTS (a file or folder: plain text, or corpus files whose labels are ignored) by MODEL's
    uncertainty, keep near-duplicates apart (word-set Jaccard >= 0.8) and write the top N with MODEL's tags to --out, ready to import
    into the annotation tool. Words broken at a line end are joined and the written spans trimmed as predict does them
    (--keep-line-ends, --keep-raw-spans turn that off). The ranking (rank, measure, file:line, text) is printed on stdout. Plain texts are read part by part
    (as predict reads them) and only a bounded pool of the most uncertain units is kept, so memory does not grow with TEXTS;
    a progress bar in bytes of TEXTS goes to stderr.

    \b
    Examples:
      flairsuite suggest results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt letters/ --n 50 --out next.tsv --format webanno
      flairsuite suggest model.pt letters.txt --unit document --n 5 --out next.jsonl --format jsonl
    """
    import time
    from pathlib import Path

    import torch

    from flairsuite.files.atomic import write_text
    from flairsuite.suggest import suggest as rank

    if threads:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    found = rank(Path(model), Path(texts), count, fmt, unit, measure, batch_size, join_line_ends, reader_spans)
    write_text(Path(out), found.text)
    click.echo(found.ranking, nl=False)
    click.echo(found.summary(measure, unit, time.perf_counter() - start) + f"; wrote {out}", err=True)
