"""A plain text tagged part by part, each format written as it comes: memory does not grow with the input.

The file is checked once (UTF-8, not blank; `inputs`), then read in blocks and cut into parts of about 100,000
characters at sentence boundaries, with the sentences a split of the whole text gives (`flairsuite.inference.stream`;
for a model that splits words, a first pass learns the text's abbreviations); each part is tagged and written before the
next is read. How far each format can be written part by part is its writer's (`outputs`, `annotation_outputs`). A
progress bar in bytes of the input goes to stderr (after a second).

A plain text is read as `flairsuite.corpora.line_ends.reading_view` gives it: words broken at a line end are joined
("Ber-\\nlin" reads "Berlin", "Lasker-\\nSchüler" "Lasker-Schüler"; the rule is that module's), and every offset maps
back to the original characters (a span over "Berlin" covers "Ber-\\nlin"); `join_lines` false (`--keep-line-ends`)
reads the text as before. With `entity_fix` the raw tags first go through the paper's Entity-Fix rule, and the spans
are read from the fixed tags. After Entity-Fix the tags of a span-tagging model go through the rules of
`flairsuite.inference.reader_spans` (spans trimmed of leading and trailing punctuation tokens; punctuation-only spans
and spans across a line break dropped, and counted in the summary line), so that every format holds the same spans;
`reader_spans` false (`--keep-raw-spans`) keeps the tags as tagged.
"""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

import flair.nn
from flair.data import Sentence

from flairsuite.errors import InputError
from flairsuite.inference.raw_tags import fixed, tagger
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.saved_tagger import predicts_spans
from flairsuite.inference.stream import Part, linked, text_abbreviations, text_parts
from flairsuite.inference.textfile import BOM, TextInfo, chunks, progress
from flairsuite.markup.typemap import TypeMap
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import Tagged
from flairsuite.predict.annotation_outputs import ConllOutput, DoccanoOutput, LabelStudioOutput, WebannoOutput
from flairsuite.predict.formats import MARKUP_FORMATS
from flairsuite.predict.loading import LoadedTagger, loaded_tagger
from flairsuite.predict.outputs import ColumnOutput, JsonOutput, MarkupOutput, Output
from flairsuite.predict.prediction import Prediction
from flairsuite.predict.xml_input import looks_like_xml


def output(fmt: str, model: flair.nn.Classifier, model_path: Path, input_path: Path, type_map: TypeMap) -> Output:
    """The writer of `fmt` for a plain-text input."""
    if fmt in MARKUP_FORMATS:
        return MarkupOutput(fmt, input_path, type_map)
    writers: dict[str, Callable[[], Output]] = {
        "column": ColumnOutput, "json": lambda: JsonOutput(predicts_spans(model)), "conll": ConllOutput, "webanno": WebannoOutput,
        "jsonl": DoccanoOutput, "labelstudio": lambda: LabelStudioOutput(model_path.name),
    }  # fmt: skip
    return writers[fmt]()


def tagged_parts(
    model: flair.nn.Classifier, parts: Iterable[Part], fast: bool, batch_size: Optional[int], entity_fix: bool, rules: Optional[ReaderRules] = None,
    run: Optional[Callable[[list[Sentence]], Tagged]] = None,
) -> Iterator[tuple[Part, Tagged]]:
    """Every part with its sentences' raw tags (after Entity-Fix when asked, then the reader `rules`), tagged one part at a time
    (`run`: the tagging function, when built already; else `tagger` builds it)."""
    run = run if run is not None else tagger(model, fast, batch_size)
    for part in linked(parts):
        tagged = run(part.sentences) if part.sentences else []
        tagged = fixed(tagged) if entity_fix else tagged
        yield part, rules.apply(part.sentences, tagged, part.text, part.local) if rules is not None else tagged


def stream_prediction(
    write: Callable[[str], Any], model_path: Path, path: Path, input_path: Path, info: TextInfo, fmt: str,
    fast: bool, batch_size: Optional[int], entity_fix: bool, type_map: TypeMap, join_lines: bool = True, reader_spans: bool = True,
    loaded: Optional[LoadedTagger] = None,
) -> Prediction:
    """The plain text at `path` (`input_path`: its name in errors) tagged part by part, `fmt` written by `write` as it comes
    (`join_lines`: words broken at line ends joined; `reader_spans`: the reader rules applied to a span tagger's tags;
    `loaded`: the model loaded already, else it is loaded from `model_path`)."""
    if loaded is None:
        loaded = loaded_tagger(model_path, fmt, fast, batch_size, entity_fix)
    model = loaded.model
    writer = output(fmt, model, model_path, input_path, type_map)
    sentences = tokens = 0
    segmentation = model_segmentation(model)
    learned = text_abbreviations(chunks(path, input_path), join_lines) if segmentation == "words" else ()  # a first pass over the file
    parts = text_parts(chunks(path, input_path), segmentation, join=join_lines, abbreviations=learned)
    rules = ReaderRules(reader_spans and predicts_spans(model))
    with progress(info.size, "predict") as bar:
        bar.update(len(BOM.encode("utf-8")) if info.bom else 0)  # read, but before the text's first character
        for part, tagged in tagged_parts(model, parts, fast, batch_size, entity_fix, rules, loaded.run):
            sentences, tokens = sentences + len(part.sentences), tokens + sum(map(len, part.sentences))
            if text := writer.part(part, tagged):
                write(text)
            bar.update(len(part.text.encode("utf-8")))
    if not sentences:
        raise InputError(input_path, None, "no tokens to tag")
    for text in writer.end():
        write(text)
    if isinstance(writer, MarkupOutput) and writer.marked is not None:
        return Prediction("", sentences, tokens, writer.marked.inserted, writer.marked.skipped, rules=rules.counts)
    return Prediction("", sentences, tokens, xml_as_text=looks_like_xml(input_path, info.head), rules=rules.counts)
