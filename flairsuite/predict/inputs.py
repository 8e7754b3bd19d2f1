"""An input of `flairsuite predict` tagged in a format: a file, or `-` for stdin (copied to a temporary file first).

`predict_to` is the entry point: it checks the format and its options (`formats`), then reads a TEI/XML input for `tei`
and `html` whole (`xml_input`) and anything else as a plain text, part by part (`plain_text`), giving the output to its
`write` piece by piece as it is made; `predict_document` and `predict_file` gather it into one text. The model is loaded
by each call, or passed in loaded once for many inputs (`loading.loaded_tagger`).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import InputError
from flairsuite.inference.textfile import scan, spooled_stdin
from flairsuite.predict.formats import MARKUP_FORMATS, checked_options
from flairsuite.predict.loading import LoadedTagger
from flairsuite.predict.plain_text import stream_prediction
from flairsuite.predict.prediction import Prediction
from flairsuite.predict.xml_input import looks_like_xml, xml_prediction

STDIN = Path("-")  # the input argument `-`: the text comes from stdin
STDIN_NAME = "<stdin>"


def shown(path: Path) -> Path:
    """The input as errors and pages name it: `<stdin>` for `-`."""
    return Path(STDIN_NAME) if path == STDIN else path


@contextmanager
def readable(input_path: Path) -> Iterator[Path]:
    """The file to read for `input_path`: itself, or for `-` stdin copied to a temporary file."""
    if input_path != STDIN:
        yield input_path
        return
    with spooled_stdin() as path:
        yield path


def predict_to(
    write: Callable[[str], Any],
    model_path: Path,
    input_path: Path,
    fmt: str,
    fast: bool,
    batch_size: Optional[int],
    entity_fix: bool = False,
    markup_map: Optional[Path] = None,
    tei_blocks: Optional[frozenset[str]] = None,
    join_lines: bool = True,
    reader_spans: bool = True,
    loaded: Optional[LoadedTagger] = None,
) -> Prediction:
    """`input_path` (`-`: stdin) tagged by the model in format `fmt` (one of FORMATS; Entity-Fix applied on request;
    `markup_map`: a YAML type map for tei; `tei_blocks`: the block elements of a TEI/XML input for tei and html), the output
    given to `write` piece by piece as it is made (its `text` is empty). A plain text's words broken at line ends are
    joined unless `join_lines` is false, and the reader rules apply to its spans unless `reader_spans` is false
    (`plain_text`); a TEI/XML input is read as its markup says. `loaded`: the model loaded once for many inputs
    (`loaded_tagger`, for the same `fmt` and `entity_fix`); without it the model is loaded from `model_path`."""
    type_map = checked_options(fmt, markup_map, tei_blocks)
    with readable(input_path) as path:
        input_path = shown(input_path)
        info = scan(path, input_path)
        if fmt in MARKUP_FORMATS and looks_like_xml(input_path, info.head):
            source = path.read_bytes().decode("utf-8")
            found = xml_prediction(model_path, source, input_path, fmt, fast, batch_size, entity_fix, type_map, tei_blocks, reader_spans, loaded)
            write(found.text)
            return replace(found, text="")
        if info.blank:
            what = "input" if input_path == Path(STDIN_NAME) else "file"
            raise InputError(input_path, None, f"no text to tag: the {what} is empty or blank")
        return stream_prediction(write, model_path, path, input_path, info, fmt, fast, batch_size, entity_fix, type_map, join_lines, reader_spans,
                                 loaded)


def predict_document(*arguments: Any, **keywords: Any) -> Prediction:
    """`predict_to` (the same arguments after `write`) with the output gathered into the prediction's `text`."""
    pieces: list[str] = []
    found = predict_to(pieces.append, *arguments, **keywords)
    return replace(found, text="".join(pieces))


def predict_file(
    model_path: Path, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool = False, **options: Any
) -> tuple[str, int, int]:
    """The tagged text of `input_path` in format `fmt` (Entity-Fix applied on request; `options`: `predict_to`'s), with its
    numbers of sentences and tokens."""
    found = predict_document(model_path, input_path, fmt, fast, batch_size, entity_fix, **options)
    return found.text, found.sentences, found.tokens
