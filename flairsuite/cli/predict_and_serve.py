"""Using a trained tagger: `predict` tags a file, `serve` answers HTTP requests."""

from typing import Optional

import click

from flairsuite.cli.group import cli, set_threads, threads_option
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS
from flairsuite.markup.tei_blocks import DEFAULT_BLOCKS, parse_blocks


def tei_blocks_option(context: click.Context, parameter: click.Parameter, value: Optional[str]) -> Optional[frozenset[str]]:
    """`--tei-blocks` as a set of element names (`tei_blocks.parse_blocks`); a bad list is a usage error."""
    try:
        return parse_blocks(value) if value is not None else None
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


@cli.command("predict")
@click.argument("model", type=click.Path())
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "--format", "fmt", type=click.Choice(["column", "json", "tei", "html", *ANNOTATION_FORMATS]), default="column",
    show_default=True,
    help="column: token TAB tag, a blank line between sentences; json: one object per sentence with its spans (both read FILE as plain text, "
    "a TEI/XML one markup included, and say so); "
    "tei: TEI P5 (a TEI/XML FILE is tagged in place); html: one self-contained page with the entities highlighted; "
    "for annotation tools: webanno: WebAnno TSV 3.3 with a NamedEntity layer (INCEpTION, WebAnno); jsonl: one doccano line "
    '{"text", "label": [[start, end, TYPE]]}; labelstudio: Label Studio JSON tasks with the spans as predictions; '
    "conll: CoNLL-2002 token SPACE BIO tag.",
)
@click.option(
    "--markup-map", type=click.Path(dir_okay=False), default=None,
    help="YAML map of entity type to TEI element for --format tei, e.g. `work: title` or `LOC: name[@type=place]`.",
)
@click.option(
    "--tei-blocks", default=None, callback=tei_blocks_option, metavar="NAMES",
    help="The elements of a TEI/XML FILE whose text is tagged (--format tei, html), comma-separated: a list replaces the default, "
    f"+name adds to it, -name takes from it (e.g. +quote,-note) [default: {','.join(sorted(DEFAULT_BLOCKS, key=str.lower))}].",
)
@click.option(
    "--out", type=click.Path(), default=None,
    help="Write to this file (atomically) [default: stdout]; for a folder, a glob or several inputs: the folder that gets one output file each.",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Sentences per batch at most [default: 256 fast, 32 (Flair's) with --no-fast].")
@click.option(
    "--fast/--no-fast", default=True, show_default=True,
    help="flairsuite's fast path (the character LMs in int8, length-bucketed batches) or the model's own Flair predict.",
)
@click.option("--entity-fix", is_flag=True, help="Repair ill-formed tags with the Entity-Fix rule (Zöllner et al. 2021, §4.3) before writing tags and spans.")
@click.option(
    "--join-line-ends/--keep-line-ends", default=True, show_default=True,
    help="Join words broken at a line end before tagging (\"Ber-\\nlin\" reads Berlin, \"Lasker-\\nSchüler\" Lasker-Schüler: a capital "
    "after the break keeps the hyphen, \"und\"/\"oder\" after it leaves the line as it is); offsets stay those of FILE. "
    "--keep-line-ends tags the lines as they are.",
)
@click.option(
    "--reader-spans/--keep-raw-spans", default=True, show_default=True,
    help="Trim spans of leading and trailing punctuation tokens and drop punctuation-only spans and spans across a line break "
    "(counted on stderr), the same in every format; --keep-raw-spans writes the spans as tagged.",
)
@threads_option
def predict(
    model: str, inputs: tuple[str, ...], fmt: str, markup_map: Optional[str], tei_blocks: Optional[frozenset[str]], out: Optional[str],
    batch_size: Optional[int], fast: bool, entity_fix: bool, join_line_ends: bool, reader_spans: bool, threads: Optional[int],
) -> None:
    """Tag the raw text FILE (UTF-8; `-`: stdin) with MODEL, any saved suite tagger (cse included); sentences and tokens as Flair splits them
    (one token per character for a tagger trained on a corpus read so, e.g. CLUENER). Only the output goes to stdout; logs go to stderr.

    INPUT is one FILE, or a folder, a glob ('letters/*.txt', quoted) or several files: then the model is loaded once, each file is tagged
    into --out DIR as it would be alone (the file's stem and the format's extension: .tsv column and webanno, .jsonl json and jsonl,
    .xml tei (a TEI/XML file keeps its name), .html, .json labelstudio, .conll), nothing goes to stdout, and stderr gets a progress bar
    over the files and one summary line. A folder gives its .txt files and files without a suffix (and .xml/.tei for tei and html), in
    its subfolders too. A file whose content is bad (not UTF-8, blank, malformed XML) is named on stderr and skipped, and the command
    ends with exit status 1 after the others are written.

    FILE is read part by part (about 100,000 characters, cut at sentence ends) and each part is tagged and written before the next,
    so memory does not grow with FILE (tei and html of a plain text keep the text and its spans until the end; a TEI/XML FILE is read
    whole); a progress bar in bytes of FILE goes to stderr.

    Tags are the decoder's raw per-token tags (with --entity-fix: after that rule); JSON spans are those Flair's predict would attach,
    with token indices (end exclusive), character offsets in FILE and confidences.

    A plain FILE's words broken at a line end (-, ¬, ⸗, = or a soft hyphen before the line break) are joined for tagging
    (--keep-line-ends: not), every offset still pointing into FILE; spans are trimmed of punctuation tokens, and spans of
    punctuation only or across a line break are dropped, in every format alike (--keep-raw-spans: not); the summary line
    on stderr counts them.

    TEI: a plain text becomes a TEI P5 document (one <p> per paragraph, text and whitespace kept); a TEI/XML FILE (.xml, .tei,
    or starting with '<') keeps every byte and gets entity elements in the text of its blocks (<p>, <head>, <opener>,
    <dateline>, <salute>, <signed>, <note>, ...: --tei-blocks), read through inline markup (<hi>, <lb break="no"/> joins the
    word, <choice> reads <expan>/<reg>/<corr>, <del> is left out); entities that would cross an element's boundary are skipped,
    and those overlapping a <persName>, <placeName>, ... already there are left out, both counted. Types map to persName,
    placeName, orgName, date, else <name type="...">; --markup-map changes that.

    The annotation-tool formats hold the same spans on FILE's tokens: webanno offsets in UTF-16 code units (as INCEpTION
    counts), jsonl and labelstudio in characters of the text (one line or task for FILE); the labelstudio results are named
    as Label Studio's NER template names them (Labels "label" over Text "text").

    \b
    Examples:
      flairsuite predict results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt letter.txt
      flairsuite predict model.pt letter.txt --format json > letter.jsonl
      cat letter.txt | flairsuite predict model.pt - --format json
      flairsuite predict model.pt edition.xml --format tei --out edition-ner.xml
      flairsuite predict model.pt letter.txt --format html --out letter.html
      flairsuite predict model.pt letter.txt --format webanno --out letter.tsv      # import into INCEpTION as WebAnno TSV 3
      flairsuite predict model.pt letter.txt --format jsonl --out letter.jsonl      # doccano: sequence labeling, JSONL
      flairsuite predict model.pt letters/ --format tei --out tei/                  # every letter of the folder, one model load
    """
    import time
    from pathlib import Path

    from flairsuite.cli.predict_files import names_many, planned, predict_files

    if names_many(inputs, out):
        pairs, folder = planned(inputs, out, fmt)  # the inputs' errors before the model loads
        set_threads(threads)
        keywords = {"fast": fast, "batch_size": batch_size, "entity_fix": entity_fix, "markup_map": Path(markup_map) if markup_map else None,
                    "tei_blocks": tei_blocks, "join_lines": join_line_ends, "reader_spans": reader_spans}
        predict_files(Path(model), pairs, folder, fmt, keywords)
        return
    set_threads(threads)
    from flairsuite.files.atomic import atomic_file
    from flairsuite.predict.inputs import predict_to

    start = time.perf_counter()
    options = (Path(model), Path(inputs[0]), fmt, fast, batch_size, entity_fix, Path(markup_map) if markup_map else None, tei_blocks)
    if out:
        with atomic_file(Path(out)) as temp, temp.open("w", encoding="utf-8") as handle:
            found = predict_to(handle.write, *options, join_lines=join_line_ends, reader_spans=reader_spans)
    else:
        found = predict_to(lambda text: click.echo(text, nl=False), *options, join_lines=join_line_ends, reader_spans=reader_spans)
    click.echo(found.summary(time.perf_counter() - start), err=True)


@cli.command("serve")
@click.argument("model", type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface; the server has no authentication).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on; 0 picks a free one.")
@click.option("--max-chars", type=click.IntRange(min=1), default=100_000, show_default=True, help="Longest text accepted, in characters (longer: HTTP 413).")
@click.option("--fast/--no-fast", default=True, show_default=True, help="flairsuite's fast path or the model's own Flair predict (as for predict).")
@click.option("--entity-fix", is_flag=True, help="Repair ill-formed tags with the Entity-Fix rule before reading spans (as for predict).")
@click.option(
    "--join-line-ends/--keep-line-ends", default=True, show_default=True,
    help="Join words broken at a line end before tagging (as for predict; a CAS's tokens of such a word are tagged as one).",
)
@click.option(
    "--reader-spans/--keep-raw-spans", default=True, show_default=True,
    help="Trim spans of punctuation tokens, drop punctuation-only spans and spans across a line break (as for predict).",
)
@threads_option
@click.option("--access-log/--no-access-log", default=True, show_default=True, help="Log one line per request.")
@click.option(
    "--keep-models", type=click.IntRange(min=0), default=3, show_default=True,
    help="Old models kept beside MODEL when POST /train replaces it (MODEL's stem.before-<UTC time> files; the oldest beyond N are deleted; 0: none).",
)
def serve(
    model: str, host: str, port: int, max_chars: int, fast: bool, entity_fix: bool, join_line_ends: bool, reader_spans: bool,
    threads: Optional[int], access_log: bool, keep_models: int,
) -> None:
    """Serve MODEL (any saved suite tagger) over HTTP: a page at / to paste a text and see its entities, and POST /tag.

    POST /tag takes {"text": "..."} (application/json) or the text itself (text/plain, UTF-8) and answers
    {"spans": [{"start", "end", "text", "type", "confidence"}], "sentences": N, "tokens": N}, offsets in characters
    of the text. Errors are JSON {"error": "..."}: 400 empty or not UTF-8 or malformed, 413 too long, 415 wrong type.
    The same server is an INCEpTION external recommender: POST /predict (a CAS in, the model's suggestions added on
    the requested layer), POST /train (retrains in the background from the annotated documents; the served model is
    replaced only if its dev F1 does not drop and, where the old model finds entities on the held-out sentences, it finds
    some too; the newest --keep-models old models stay beside it; 429 while a run is on) and GET /status; these need the inception extra
    (pip install 'flairsuite[inception]'), docs/predict-serve.md says how to register it.
    Words broken at a line end are joined for tagging and spans are trimmed of punctuation, as predict does
    (--keep-line-ends, --keep-raw-spans turn that off). The model is loaded once; needs the serve extra (pip install 'flairsuite[serve]').

    \b
    Examples:
      flairsuite serve results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt
      curl -s localhost:8000/tag -H 'Content-Type: application/json' -d '{"text": "Anna reiste nach Berlin."}'
    """
    from pathlib import Path

    from flairsuite.serve.server import serve as run_server

    set_threads(threads)
    run_server(Path(model), host, port, click.echo, access_log, max_chars=max_chars, fast=fast, entity_fix=entity_fix, keep_models=keep_models,
               join_lines=join_line_ends, reader_spans=reader_spans)
