"""A TEI/XML input: its text blocks tagged, and entity elements inserted in place (`tei`) or the texts shown (`html`).

An input is TEI/XML when its name ends .xml or .tei or its text starts with `<` (`looks_like_xml`); for `tei` and `html`
it is read whole, its text blocks found (`flairsuite.markup.xmlsource`: p, head, opener, ... outside teiHeader, or the
elements of `--tei-blocks`) and tagged in one batch, with the reader rules of a plain text (a block's words are joined
by its markup, `lb break="no"`). `tei` inserts the entity elements in place, leaving out an entity that would cross
markup or overlaps an entity element already there (`flairsuite.markup.tei.tag_in_place`); a BOM is kept. The other
formats read such a file as plain text, markup included, and say so on the summary line.
"""

from pathlib import Path
from typing import Optional

from flairsuite.errors import InputError
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.textfile import BOM
from flairsuite.markup.html import render_html
from flairsuite.markup.tei import tag_in_place
from flairsuite.markup.typemap import TypeMap
from flairsuite.markup.xmlsource import parse_xml
from flairsuite.predict.loading import LoadedTagger, checked_tagger
from flairsuite.predict.prediction import Prediction
from flairsuite.predict.tagged_text import tag_texts

XML_SUFFIXES = (".xml", ".tei")


def looks_like_xml(path: Path, text: str) -> bool:
    """Whether an input is TEI/XML: its name ends .xml or .tei, or its text (after a BOM and whitespace) starts with `<`."""
    return path.suffix.lower() in XML_SUFFIXES or text.removeprefix(BOM).lstrip().startswith("<")


def xml_prediction(
    model_path: Path, source: str, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool, type_map: TypeMap,
    blocks: Optional[frozenset[str]] = None, reader_spans: bool = True, loaded: Optional[LoadedTagger] = None,
) -> Prediction:
    """`fmt` "tei" or "html" of the text blocks of a TEI/XML input (`blocks`: the block elements, default
    `flairsuite.markup.tei_blocks.DEFAULT_BLOCKS`), TEI tagged in place, HTML showing the same texts; `source` is its text, read whole.
    `loaded`: the model loaded already (`loaded_tagger`), else it is loaded from `model_path`."""
    document = parse_xml(source.removeprefix(BOM), input_path, blocks)
    if not document.segments:
        raise InputError(input_path, None, "no text to tag: no text block (p, head, opener, ... outside teiHeader; see --tei-blocks) holds any text")
    texts = [segment.text for segment in document.segments]
    model = loaded.model if loaded is not None else checked_tagger(model_path, entity_fix, markup=True)
    rules = ReaderRules(reader_spans)  # the same rules as for a plain text; a block's words are joined by its markup (lb break="no")
    run = loaded.run if loaded is not None else None
    spans, sentences, tokens = tag_texts(model, texts, input_path, fast, batch_size, entity_fix, rules=rules, run=run)
    if fmt == "html":
        page = render_html(list(zip(texts, spans)), input_path.name)
        return Prediction(page, sentences, tokens, sum(map(len, spans)), 0, rules=rules.counts)
    marked = tag_in_place(document, spans, type_map)
    bom = BOM if source.startswith(BOM) else ""
    return Prediction(bom + marked.text, sentences, tokens, marked.inserted, marked.skipped, marked.already_marked, rules=rules.counts)
