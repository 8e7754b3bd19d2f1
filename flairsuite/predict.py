"""`flairsuite predict`: tag a raw text file with a saved suite tagger, as token/tag columns, JSON spans, TEI or HTML.

Any tagger of the registry (`flairsuite.models.registry.TAGGERS`) loads: the Flair SequenceTaggers
(LCRF-NER saves itself as one) and `cse` (`ClassStartEndTagger`). Sentence splitting and tokenisation
are Flair's (`SegtokSentenceSplitter`, segtok), or one token per character for a tagger whose model card says
so (a Chinese one: `flairsuite.corpora.segmentation`). Tags are the decoder's raw per-token tags, before any
span repair (CSE's decoder gives well-formed BIO). Spans and their confidences are the ones Flair's
`predict` attaches: `get_spans_from_bio` over the raw tags, confidence the mean of the span's token
confidences (a CSE entity's tokens all carry its span confidence, so the mean is that). With
`entity_fix` the raw tags first go through the paper's Entity-Fix rule (`flairsuite.models.entity_fix`),
and the spans are read from the fixed tags. `fast` runs `flairsuite.inference.FastTagger` (int8,
length-bucketed); otherwise the model's own Flair `predict` (CSE's labels spans: they are read back as
BIO tags).

A plain text is read as `flairsuite.corpora.line_ends.reading_view` gives it: words broken at a line end are
joined ("Ber-\nlin" reads "Berlin", "Lasker-\nSchüler" "Lasker-Schüler"; the rule is that module's), and every
offset maps back to the original characters (a span over "Berlin" covers "Ber-\nlin"); `join_lines` false
(`--keep-line-ends`) reads the text as before. After Entity-Fix the tags of a span-tagging model go through the rules
of `flairsuite.inference.reader_spans` (spans trimmed of leading and trailing punctuation tokens; punctuation-only
spans and spans across a line break dropped, and counted in the summary line), so that every format holds the same
spans; `reader_spans` false (`--keep-raw-spans`) keeps the tags as tagged.

The markup formats (`flairsuite.markup`) write the spans at their character offsets in the input (Flair's
sentence and token start positions): `tei` a TEI P5 document of a plain text, or the TEI/XML input (a name
ending .xml/.tei, or text starting with `<`) with entity elements inserted in place; `html` one page.
The annotation-tool formats write the spans on the tokens of the text: `webanno` (WebAnno TSV 3.3 for
INCEpTION), `jsonl` (doccano), `labelstudio` (Label Studio's JSON with predictions), `conll` (CoNLL-2002 BIO).
The input `-` is stdin (copied to a temporary file first).

The model is loaded by each call, or once for many inputs (`loaded_tagger`, passed to `predict_to` as `loaded`: its
checks and its tagging function, the fast path's int8 copy included, are made once; the output of each input is
byte for byte what a call of its own writes). `flairsuite predict` on a folder, a glob or several files
(`flairsuite.cli.predict_files`) tags them that way.

Memory does not grow with the input (`flairsuite.inference.stream`): the file is checked once (UTF-8, not blank),
then read in blocks and cut into parts of about 100,000 characters at sentence boundaries, with the sentences a split
of the whole text gives; each part is tagged and written before the next is read. `column`, `json`, `conll`,
`webanno` and `jsonl` are written part by part (`jsonl`'s labels and `labelstudio`'s results wait in a temporary
file until the text is written); `tei` and `html` of a plain text hold the text and its spans until the end, and a
TEI/XML input is read whole. A progress bar in bytes of the input goes to stderr (after a second).
"""

import json
import re
import tempfile
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional, Protocol

import flair.nn
from flair.data import Sentence, get_spans_from_bio
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger

import flairsuite.bert  # noqa: F401  (a tagger on a relative/WWA BERT rebuilds its model type "flairsuite_bert" on loading)
from flairsuite.corpora.line_ends import reading_view
from flairsuite.corpora.segmentation import split_text
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.reader_spans import summary as rules_summary
from flairsuite.inference.stream import Part, linked, text_abbreviations, text_parts
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.inference.textfile import TextInfo, chunks, progress, scan, spooled_stdin
from flairsuite.markup.annotated import Annotated
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS
from flairsuite.markup.conll import conll_text
from flairsuite.markup.html import render_html
from flairsuite.markup.labelstudio import labelstudio_task
from flairsuite.markup.spans import Span
from flairsuite.markup.tei import Markup, tag_in_place, tei_document
from flairsuite.markup.typemap import DEFAULT_TYPE_MAP, TypeMap, load_type_map
from flairsuite.markup.webanno_writer import FORMAT_LINE, LAYER_LINE, NO_ANNOTATION, NO_VALUE, escape_text, escape_value, utf16_offsets
from flairsuite.markup.xmlsource import parse_xml
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import Tagged
from flairsuite.models.entity_fix import entity_fix as fix_tags
from flairsuite.models.registry import saved_classes

FLAIR_BATCH_SIZE = 32  # SequenceTagger.predict's default mini_batch_size
MARKUP_FORMATS = ("tei", "html")
FORMATS = ("column", "json", *MARKUP_FORMATS, *ANNOTATION_FORMATS)
XML_SUFFIXES = (".xml", ".tei")
BOM = "\ufeff"
STDIN = Path("-")  # the input argument `-`: the text comes from stdin
STDIN_NAME = "<stdin>"
NON_SPACE = re.compile(r"\S+")


def shown(path: Path) -> Path:
    """The input as errors and pages name it: `<stdin>` for `-`."""
    return Path(STDIN_NAME) if path == STDIN else path


def split(text: str, segmentation: str = "words") -> list[Sentence]:
    """Sentences and tokens as a model of `segmentation` expects them (words: Flair's segtok); sentences without tokens are dropped."""
    return split_text(text, segmentation)


def load_tagger(path: Path) -> flair.nn.Classifier:
    """The suite tagger saved at `path` (any class of `saved_classes`); anything else is a one-line error."""
    if not path.is_file():
        raise FlairsuiteError(f"{path}: {'not a file' if path.exists() else 'model file not found'}")
    classes = saved_classes()
    try:
        state = load_torch_state(str(path))
        # Flair files from before `__cls__` was recorded hold SequenceTaggers
        kind = state.get("__cls__", SequenceTagger.__name__) if isinstance(state, dict) else type(state).__name__
        if kind not in classes:
            raise FlairsuiteError(f"{path}: a {kind}, not a flairsuite tagger model (one of {', '.join(sorted(classes))})")
        return classes[kind].load(state)
    except FlairsuiteError:
        raise
    except Exception as err:  # torch and Flair raise many kinds on a foreign or damaged file
        detail = str(err).strip().splitlines()
        reason = f"{type(err).__name__}: {detail[0]}" if detail else type(err).__name__
        raise FlairsuiteError(f"{path}: not a loadable flairsuite tagger model ({reason})") from None


def span_tags(sentence: Sentence, label_type: str) -> list[tuple[str, float]]:
    """The sentence's `label_type` span labels as BIO tags, each token with its span's confidence; other tokens "O" with 1.0."""
    tags = [("O", 1.0)] * len(sentence)
    for label in sentence.get_labels(label_type):
        first, size = label.data_point.tokens[0].idx - 1, len(label.data_point.tokens)
        tags[first : first + size] = [(f"B-{label.value}", label.score)] + [(f"I-{label.value}", label.score)] * (size - 1)
    return tags


def flair_tags(model: flair.nn.Classifier, sentences: list[Sentence], batch_size: int) -> Tagged:
    """Plain Flair `predict`'s raw tags with confidences: a SequenceTagger's token predictions ("O" tokens get 1.0,
    as Flair's labels), or the BIO tags of a span tagger's (CSE's) span labels (`span_tags`)."""
    if not isinstance(model, SequenceTagger):
        model.predict(sentences, mini_batch_size=batch_size)
        return [span_tags(sentence, model.label_type) for sentence in sentences]
    model.predict(sentences, mini_batch_size=batch_size, force_token_predictions=True)
    labels = [[token.get_label(model.label_type) for token in sentence] for sentence in sentences]
    return [[(label.value, label.score) for label in sentence] for sentence in labels]


def predicts_spans(model: flair.nn.Classifier) -> bool:
    """Whether the model's tags are read as spans: a SequenceTagger says so (`predict_spans`); CSE always predicts spans."""
    return model.predict_spans if isinstance(model, SequenceTagger) else True


def tagger(model: flair.nn.Classifier, fast: bool, batch_size: Optional[int]) -> Callable[[list[Sentence]], Tagged]:
    """A function from sentences to their raw tags and confidences, by the fast path (its tagger built once) or by plain Flair."""
    if fast:
        return FastTagger(model, batch_size=batch_size or BATCH_SIZE).tag
    return lambda sentences: flair_tags(model, sentences, batch_size or FLAIR_BATCH_SIZE)


def tag(model: flair.nn.Classifier, sentences: list[Sentence], fast: bool, batch_size: Optional[int]) -> Tagged:
    """Raw tags and confidences of every sentence, by the fast path or by plain Flair."""
    return tagger(model, fast, batch_size)(sentences)


class Offsets(Protocol):
    """Where the characters of the text a sentence was split from lie in the file (`FlairView`, `Part`)."""

    def original(self, start: int, end: int) -> tuple[int, int]: ...


def column_block(sentence: Sentence, tags: list[tuple[str, float]]) -> str:
    """A sentence's lines of token TAB tag."""
    return "\n".join(f"{token.text}\t{tag}" for token, (tag, _) in zip(sentence, tags))


def sentence_json(sentence: Sentence, tags: list[tuple[str, float]], spans: bool, view: Offsets) -> dict[str, Any]:
    """One sentence: its text, tokens, tags and spans (token indices end-exclusive, character offsets in the file;
    `view`: the text the sentence was split from, as Flair sees it, whose offsets map back to the file's)."""
    offset = sentence.start_position
    found = []
    for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]) if spans else []:
        first, last = sentence.tokens[indices[0]], sentence.tokens[indices[-1]]
        start, end = view.original(offset + first.start_position, offset + last.end_position)
        found.append({"start": indices[0], "end": indices[-1] + 1, "start_char": start, "end_char": end, "type": kind, "confidence": round(confidence, 4)})
    return {
        "text": sentence.to_original_text(),
        "start_char": view.original(offset, offset + 1)[0],
        "tokens": [token.text for token in sentence],
        "tags": [t for t, _ in tags],
        "spans": found,
    }


def fixed(tagged: Tagged) -> Tagged:
    """Every sentence's tags through Entity-Fix; each token keeps its confidence."""
    return [list(zip(fix_tags([t for t, _ in tags]), [c for _, c in tags])) for tags in tagged]


def char_spans(text: str, sentences: Sequence[Sentence], tagged: Tagged) -> list[Span]:
    """The spans of the tags (as `sentence_json` reads them) at their character offsets in `text`, the text the sentences were split from."""
    found = []
    for sentence, tags in zip(sentences, tagged):
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            first, last = sentence.tokens[indices[0]], sentence.tokens[indices[-1]]
            start, end = sentence.start_position + first.start_position, sentence.start_position + last.end_position
            if not (text.startswith(first.text, start) and text.endswith(last.text, 0, end)):
                raise FlairsuiteError(f"token offsets do not match the text at character {start}: {first.text!r} .. {last.text!r} (please report this)")
            found.append(Span(start, end, kind, confidence))
    return found


@dataclass(frozen=True)
class Prediction:
    """`predict`'s output text and what it did: sentences and tokens tagged; for markup, entities inserted and skipped."""

    text: str
    sentences: int
    tokens: int
    inserted: Optional[int] = None  # entities written as markup (tei, html)
    skipped: int = 0  # entities not inserted because they would cross markup (tei)
    already_marked: Optional[int] = None  # entities of a TEI/XML input not inserted: they overlap an entity element already there (tei)
    xml_as_text: bool = False  # a TEI/XML-looking input tagged as plain text, markup included (column, json)
    rules: Counter = field(default_factory=Counter)  # what the reader rules did (`flairsuite.inference.reader_spans`)

    def summary(self, seconds: float) -> str:
        """The line `predict` prints on stderr."""
        line = f"tagged {self.sentences:,} sentences, {self.tokens:,} tokens in {seconds:.1f} s"
        if self.inserted is not None:
            line += f"; inserted {self.inserted:,} entities, skipped {self.skipped:,} crossing markup"
        if self.already_marked is not None:
            line += f", {self.already_marked:,} already marked"
        if self.xml_as_text:
            line += "; the file looks like TEI/XML and was read as plain text, markup included (--format tei or html tag its text blocks)"
        return line + rules_summary(self.rules)


def looks_like_xml(path: Path, text: str) -> bool:
    """Whether an input is TEI/XML: its name ends .xml or .tei, or its text (after a BOM and whitespace) starts with `<`."""
    return path.suffix.lower() in XML_SUFFIXES or text.removeprefix(BOM).lstrip().startswith("<")


def check_spans(model: flair.nn.Classifier, model_path: Path, entity_fix: bool, markup: bool, fmt: Optional[str] = None) -> None:
    """Entity-Fix and the formats of entity spans (`markup`: tei, html and the ANNOTATION_FORMATS, `fmt` the one asked for)
    need a model of entity spans: one of a tag per token (PoS) is a one-line error."""
    if predicts_spans(model) or not (entity_fix or markup):
        return
    if entity_fix:
        what = "--entity-fix repairs BIO entity tags"
    else:
        what = f"--format {fmt} writes entity spans" if fmt in ANNOTATION_FORMATS else "--format tei and html mark entity spans"
    fix = "leave --entity-fix out" if entity_fix else "use --format column or json"
    raise FlairsuiteError(f"{model_path}: {what}, and this model tags one '{model.label_type}' label per token (not spans): {fix}")


def checked_tagger(model_path: Path, entity_fix: bool, markup: bool = False, fmt: Optional[str] = None) -> flair.nn.Classifier:
    """The saved tagger; `markup` (the tags become entity spans in format `fmt`) and `entity_fix` need one that tags spans (`check_spans`)."""
    model = load_tagger(model_path)
    check_spans(model, model_path, entity_fix, markup, fmt)
    return model


def tag_texts(
    model: flair.nn.Classifier, texts: Sequence[str], input_path: Path, fast: bool, batch_size: Optional[int], entity_fix: bool,
    join_lines: bool = False, rules: Optional[ReaderRules] = None, run: Optional[Callable[[list[Sentence]], Tagged]] = None,
) -> tuple[list[list[Span]], int, int]:
    """Every text's spans at character offsets in it (one batch for all texts), and the numbers of sentences and tokens;
    no tokens at all: an input error. `join_lines`: words broken at line ends joined (`reading_view`); `rules`: the
    reader rules applied to the tags (and counted there); `run`: the tagging function, when built already (`tagger`)."""
    views = [reading_view(text, join_lines) for text in texts]  # Flair drops zero-width characters: spans are mapped back to `texts`
    per_text = [split(view.text, model_segmentation(model)) for view in views]
    sentences = [sentence for found in per_text for sentence in found]
    if not sentences:
        raise InputError(input_path, None, "no tokens to tag")
    tagged = run(sentences) if run is not None else tag(model, sentences, fast, batch_size)
    tagged = fixed(tagged) if entity_fix else tagged
    spans, position = [], 0
    for text, view, found in zip(texts, views, per_text):
        rows = tagged[position : position + len(found)]
        found_spans = char_spans(view.text, found, rules.apply(found, rows, text, view.original) if rules is not None else rows)
        spans.append([Span(*view.original(s.start, s.end), s.type, s.confidence) for s in found_spans])
        position += len(found)
    return spans, len(sentences), sum(len(s) for s in sentences)


def xml_prediction(
    model_path: Path, source: str, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool, type_map: TypeMap,
    blocks: Optional[frozenset[str]] = None, reader_spans: bool = True, loaded: Optional["LoadedTagger"] = None,
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


def pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """`text[start:end]` cut at its whitespace: a word joined across a line end ("Ber-\nlin") is its lines' pieces."""
    found = [(start + match.start(), start + match.end()) for match in NON_SPACE.finditer(text[start:end])]
    return found or [(start, end)]


def annotated_text(text: str, view: Offsets, sentences: Sequence[Sentence], tagged: Tagged) -> Annotated:
    """The text with its tokens (Flair's, at their offsets in `text`; a word joined across a line end as the pieces of its
    lines, `pieces`, which no token format can hold whole) and the spans of the tags, as `sentence_json` reads them."""
    offsets, spans = [], []
    for sentence, tags in zip(sentences, tagged):
        base = sentence.start_position
        tokens = [view.original(base + token.start_position, base + token.end_position) for token in sentence]
        offsets.append([piece for token in tokens for piece in pieces(text, *token)])
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            spans.append(Span(tokens[indices[0]][0], tokens[indices[-1]][1], kind, confidence))
    return Annotated(text, offsets, spans)


class Output:
    """A format written part by part: `part` gives the text of a tagged part (file order), `end` what follows the last."""

    def part(self, part: Part, tagged: Tagged) -> str:
        raise NotImplementedError

    def end(self) -> Iterable[str]:
        return []

    started = False  # whether a sentence was written


class ColumnOutput(Output):
    """`column`: token TAB tag, a blank line between sentences."""

    def part(self, part: Part, tagged: Tagged) -> str:
        blocks = [column_block(sentence, tags) for sentence, tags in zip(part.sentences, tagged)]
        if not blocks:
            return ""
        text = ("\n\n" if self.started else "") + "\n\n".join(blocks)
        self.started = True
        return text

    def end(self) -> Iterable[str]:
        return ["\n"] if self.started else []


class JsonOutput(Output):
    """`json`: a line per sentence, offsets in the file."""

    def __init__(self, spans: bool) -> None:
        self.spans = spans

    def part(self, part: Part, tagged: Tagged) -> str:
        return "".join(json.dumps(sentence_json(s, tags, self.spans, part), ensure_ascii=False) + "\n" for s, tags in zip(part.sentences, tagged))


class ConllOutput(Output):
    """`conll`: CoNLL-2002 token SPACE tag lines, a blank line after each sentence (`flairsuite.markup.conll`)."""

    def part(self, part: Part, tagged: Tagged) -> str:
        return conll_text([annotated_text(part.text, part.view, part.sentences, tagged)])  # each sentence ends in a blank line


class WebannoOutput(Output):
    """`webanno`: WebAnno TSV 3.3 as `flairsuite.markup.webanno_writer.webanno_tsv` writes the whole file as one document,
    sentences, UTF-16 offsets and multi-token span numbers counted on from part to part."""

    def __init__(self) -> None:
        self.sentences = self.entities = self.utf16 = 0

    def part(self, part: Part, tagged: Tagged) -> str:
        document = annotated_text(part.text, part.view, part.sentences, tagged)
        utf16 = [self.utf16 + offset for offset in utf16_offsets(part.text)]
        self.utf16 = utf16[-1]
        cells: dict[int, tuple[str, str]] = {}  # token start -> (identifier, value)
        starts = sorted(start for sentence in document.sentences for start, _ in sentence)
        for span in document.spans:
            covered = starts[bisect_left(starts, span.start) : bisect_left(starts, span.end)]
            suffix = ""
            if len(covered) > 1:
                self.entities += 1
                suffix = f"[{self.entities}]"
            cells.update((start, (NO_VALUE + suffix, escape_value(span.type) + suffix)) for start in covered)
        lines = [] if self.started or not document.sentences else [FORMAT_LINE, LAYER_LINE, ""]
        for sentence in document.sentences:
            self.sentences += 1
            lines.append("")
            lines.extend("#Text=" + escape_text(line) for line in part.text[sentence[0][0] : sentence[-1][1]].split("\n"))
            for position, (start, end) in enumerate(sentence, 1):
                identifier, value = cells.get(start, (NO_ANNOTATION, NO_ANNOTATION))
                lines.append(f"{self.sentences}-{position}\t{utf16[start]}-{utf16[end]}\t{part.text[start:end]}\t{identifier}\t{value}\t")
        self.started = self.started or bool(lines)
        return "\n".join(lines) + "\n" if lines else ""


class Spool:
    """Text written to a temporary file as it comes and read back in blocks at the end (what must follow text not yet written)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.count = 0  # items written

    def add(self, text: str, separator: str) -> None:
        self.file.write((separator if self.count else "") + text)
        self.count += 1

    def read(self) -> Iterator[str]:
        self.file.seek(0)
        while block := self.file.read(1 << 16):
            yield block
        self.file.close()


def json_characters(text: str) -> str:
    """`text` as the characters inside a JSON string (`json.dumps` without its quotes: escapes never span two characters)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class DoccanoOutput(Output):
    """`jsonl`: one doccano line for the file, `{"text": ..., "label": [...]}` as `flairsuite.markup.doccano` writes it;
    the text is written part by part, the labels wait in a temporary file."""

    def __init__(self) -> None:
        self.labels = Spool()

    def part(self, part: Part, tagged: Tagged) -> str:
        for span in annotated_text(part.text, part.view, part.sentences, tagged).spans:
            self.labels.add(json.dumps([part.start + span.start, part.start + span.end, span.type], ensure_ascii=False), ", ")
        head = "" if self.started else '{"text": "'
        self.started = True
        return head + json_characters(part.text)

    def end(self) -> Iterable[str]:
        yield '", "label": ['
        yield from self.labels.read()
        yield "]}\n"


class LabelStudioOutput(Output):
    """`labelstudio`: one task for the file as `flairsuite.markup.labelstudio` writes it (indented JSON); the text is written
    part by part, the results wait in a temporary file until the prediction's score (their mean confidence) is known."""

    def __init__(self, model_version: str) -> None:
        self.model_version = model_version
        self.results = Spool()
        self.confidence = 0.0

    def part(self, part: Part, tagged: Tagged) -> str:
        document = annotated_text(part.text, part.view, part.sentences, tagged)
        for span, result in zip(document.spans, labelstudio_task(document, self.model_version)["predictions"][0]["result"]):
            self.confidence += span.confidence
            result["id"] = f"e{self.results.count + 1}"
            result["value"]["start"] += part.start
            result["value"]["end"] += part.start
            self.results.add(json.dumps(result, ensure_ascii=False, indent=1).replace("\n", "\n     "), ",\n     ")
        head = "" if self.started else '[\n {\n  "data": {\n   "text": "'
        self.started = True
        return head + json_characters(part.text)

    def end(self) -> Iterable[str]:
        score = self.confidence / self.results.count if self.results.count else 1.0
        yield f'"\n  }},\n  "predictions": [\n   {{\n    "model_version": {json.dumps(self.model_version, ensure_ascii=False)},\n'
        yield f'    "score": {json.dumps(round(score, 4))},\n    "result": ['
        if self.results.count:
            yield "\n     "
            yield from self.results.read()
            yield "\n    "
        yield "]\n   }\n  ]\n }\n]\n"


class MarkupOutput(Output):
    """`tei` and `html` of a plain text: the text and its spans (file offsets) gathered, the document written at the end."""

    def __init__(self, fmt: str, input_path: Path, type_map: TypeMap) -> None:
        self.fmt, self.input_path, self.type_map = fmt, input_path, type_map
        self.texts: list[str] = []
        self.spans: list[Span] = []
        self.marked: Optional[Markup] = None

    def part(self, part: Part, tagged: Tagged) -> str:
        self.texts.append(part.text)
        self.spans.extend(Span(*part.original(s.start, s.end), s.type, s.confidence) for s in char_spans(part.view.text, part.sentences, tagged))
        return ""

    def end(self) -> Iterable[str]:
        text = "".join(self.texts)
        self.texts = []
        if self.fmt == "html":
            self.marked = Markup(render_html([(text, self.spans)], self.input_path.name), len(self.spans), 0)
        else:
            self.marked = tei_document(text, self.spans, self.input_path, self.type_map)
        return [self.marked.text]


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


@contextmanager
def readable(input_path: Path) -> Iterator[Path]:
    """The file to read for `input_path`: itself, or for `-` stdin copied to a temporary file."""
    if input_path != STDIN:
        yield input_path
        return
    with spooled_stdin() as path:
        yield path


def stream_prediction(
    write: Callable[[str], Any], model_path: Path, path: Path, input_path: Path, info: TextInfo, fmt: str,
    fast: bool, batch_size: Optional[int], entity_fix: bool, type_map: TypeMap, join_lines: bool = True, reader_spans: bool = True,
    loaded: Optional["LoadedTagger"] = None,
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


def checked_options(fmt: str, markup_map: Optional[Path], tei_blocks: Optional[frozenset[str]]) -> TypeMap:
    """The type map for `fmt` (the default, or `markup_map` read); an unknown format, or an option its format does not take, is a one-line error."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}': one of {', '.join(FORMATS)}")
    if markup_map is not None and fmt != "tei":
        raise FlairsuiteError(f"--markup-map applies to --format tei only, not {fmt}")
    if tei_blocks is not None and fmt not in MARKUP_FORMATS:
        raise FlairsuiteError(f"--tei-blocks applies to --format tei and html only, not {fmt}")
    return load_type_map(markup_map) if markup_map is not None else DEFAULT_TYPE_MAP


@dataclass(frozen=True)
class LoadedTagger:
    """A saved tagger loaded once for many inputs: the model, checked for the format, and its tagging function (`tagger`), built once."""

    model: flair.nn.Classifier
    run: Callable[[list[Sentence]], Tagged]


def loaded_tagger(model_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool = False) -> LoadedTagger:
    """The model at `model_path` loaded and checked for `fmt` and `entity_fix` (`checked_tagger`), with its tagging function."""
    model = checked_tagger(model_path, entity_fix, markup=fmt in MARKUP_FORMATS or fmt in ANNOTATION_FORMATS, fmt=fmt)
    return LoadedTagger(model, tagger(model, fast, batch_size))


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
    loaded: Optional["LoadedTagger"] = None,
) -> Prediction:
    """`input_path` (`-`: stdin) tagged by the model in format `fmt` (one of FORMATS; Entity-Fix applied on request;
    `markup_map`: a YAML type map for tei; `tei_blocks`: the block elements of a TEI/XML input for tei and html), the output
    given to `write` piece by piece as it is made (its `text` is empty). A plain text's words broken at line ends are
    joined unless `join_lines` is false, and the reader rules apply to its spans unless `reader_spans` is false (module
    docstring); a TEI/XML input is read as its markup says. `loaded`: the model loaded once for many inputs
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
