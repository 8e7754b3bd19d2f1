"""`flairsuite predict`: tag a raw text file with a saved suite tagger, as token/tag columns, JSON spans, TEI or HTML.

Any tagger of the registry (`flairsuite.models.registry.TAGGERS`) loads: the Flair SequenceTaggers
(LCRF-NER saves itself as one) and `cse` (`ClassStartEndTagger`). Sentence splitting and tokenisation
are Flair's (`SegtokSentenceSplitter`, segtok), or one token per character for a tagger whose model card says
so (a Chinese one: `flairsuite.inference.segmentation`). Tags are the decoder's raw per-token tags, before any
span repair (CSE's decoder gives well-formed BIO). Spans and their confidences are the ones Flair's
`predict` attaches: `get_spans_from_bio` over the raw tags, confidence the mean of the span's token
confidences (a CSE entity's tokens all carry its span confidence, so the mean is that). With
`entity_fix` the raw tags first go through the paper's Entity-Fix rule (`flairsuite.models.entity_fix`),
and the spans are read from the fixed tags. `fast` runs `flairsuite.inference.FastTagger` (int8,
length-bucketed); otherwise the model's own Flair `predict` (CSE's labels spans: they are read back as
BIO tags).

The markup formats (`flairsuite.markup`) write the spans at their character offsets in the input (Flair's
sentence and token start positions): `tei` a TEI P5 document of a plain text, or the TEI/XML input (a name
ending .xml/.tei, or text starting with `<`) with entity elements inserted in place; `html` one page.
The annotation-tool formats write the spans on the tokens of the text: `webanno` (WebAnno TSV 3.3 for
INCEpTION), `jsonl` (doccano), `labelstudio` (Label Studio's JSON with predictions), `conll` (CoNLL-2002 BIO).
The input `-` is stdin.
"""

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import flair.nn
from flair.data import Sentence, get_spans_from_bio
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger

import flairsuite.bert  # noqa: F401  (a tagger on a relative/WWA BERT rebuilds its model type "flairsuite_bert" on loading)
from flairsuite.errors import FlairsuiteError, InputError, decode_utf8, read_utf8
from flairsuite.inference.segmentation import FlairView, flair_view, split_text
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.markup.annotated import Annotated
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS, annotation_text
from flairsuite.markup.html import render_html
from flairsuite.markup.spans import Span
from flairsuite.markup.tei import Markup, tag_in_place, tei_document
from flairsuite.markup.typemap import DEFAULT_TYPE_MAP, TypeMap, load_type_map
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


def shown(path: Path) -> Path:
    """The input as errors and pages name it: `<stdin>` for `-`."""
    return Path(STDIN_NAME) if path == STDIN else path


def read_source(path: Path) -> str:
    """The file's (with `-`: stdin's) text (UTF-8, a BOM kept as U+FEFF); a missing, unreadable or non-UTF-8 input is a one-line error."""
    if path == STDIN:
        return decode_utf8(sys.stdin.buffer.read(), STDIN_NAME)
    return read_utf8(path)


def checked_text(source: str, path: Path) -> str:
    """The text to tag of an input read from `path` (as errors name it): a BOM dropped; a blank one is a one-line error."""
    text = source.removeprefix(BOM)
    if not text.strip():
        what = "input" if path == Path(STDIN_NAME) else "file"
        raise InputError(path, None, f"no text to tag: the {what} is empty or blank")
    return text


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


def tag(model: flair.nn.Classifier, sentences: list[Sentence], fast: bool, batch_size: Optional[int]) -> Tagged:
    """Raw tags and confidences of every sentence, by the fast path or by plain Flair."""
    if fast:
        return FastTagger(model, batch_size=batch_size or BATCH_SIZE).tag(sentences)
    return flair_tags(model, sentences, batch_size or FLAIR_BATCH_SIZE)


def column_text(sentences: list[Sentence], tagged: Tagged) -> str:
    """Token TAB tag per line, a blank line between sentences."""
    blocks = ["\n".join(f"{token.text}\t{tag}" for token, (tag, _) in zip(sentence, tags)) for sentence, tags in zip(sentences, tagged)]
    return "\n\n".join(blocks) + "\n"


def sentence_json(sentence: Sentence, tags: list[tuple[str, float]], spans: bool, view: FlairView) -> dict[str, Any]:
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


def json_text(sentences: list[Sentence], tagged: Tagged, spans: bool, view: FlairView) -> str:
    """One JSON object per sentence and line (JSON Lines); offsets in the file `view` (Flair's form of it) was made from."""
    return "".join(json.dumps(sentence_json(s, tags, spans, view), ensure_ascii=False) + "\n" for s, tags in zip(sentences, tagged))


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
    passed_over: int = 0  # p/s/ab elements of a TEI/XML input not tagged: they hold other elements
    xml_as_text: bool = False  # a TEI/XML-looking input tagged as plain text, markup included (column, json)

    def summary(self, seconds: float) -> str:
        """The line `predict` prints on stderr."""
        line = f"tagged {self.sentences:,} sentences, {self.tokens:,} tokens in {seconds:.1f} s"
        if self.inserted is not None:
            line += f"; inserted {self.inserted:,} entities, skipped {self.skipped:,} crossing markup"
        if self.passed_over:
            line += f"; {self.passed_over:,} p/s/ab elements left untagged (they hold other elements)"
        if self.xml_as_text:
            line += "; the file looks like TEI/XML and was read as plain text, markup included (--format tei or html tag its p, s and ab)"
        return line


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


def tag_file_sentences(
    model: flair.nn.Classifier, sentences: list[Sentence], input_path: Path, fast: bool, batch_size: Optional[int], entity_fix: bool
) -> Tagged:
    """The model's raw tags for the sentences of `input_path` (after Entity-Fix when asked); no sentences: an input error."""
    if not sentences:
        raise InputError(input_path, None, "no tokens to tag")
    tagged = tag(model, sentences, fast, batch_size)
    return fixed(tagged) if entity_fix else tagged


def tag_texts(
    model: flair.nn.Classifier, texts: Sequence[str], input_path: Path, fast: bool, batch_size: Optional[int], entity_fix: bool
) -> tuple[list[list[Span]], int, int]:
    """Every text's spans at character offsets in it (one batch for all texts), and the numbers of sentences and tokens."""
    views = [flair_view(text) for text in texts]  # Flair drops zero-width characters: spans are mapped back to `texts`
    per_text = [split(view.text, model_segmentation(model)) for view in views]
    sentences = [sentence for found in per_text for sentence in found]
    tagged = tag_file_sentences(model, sentences, input_path, fast, batch_size, entity_fix)
    spans, position = [], 0
    for view, found in zip(views, per_text):
        found_spans = char_spans(view.text, found, tagged[position : position + len(found)])
        spans.append([Span(*view.original(s.start, s.end), s.type, s.confidence) for s in found_spans])
        position += len(found)
    return spans, len(sentences), sum(len(s) for s in sentences)


def markup_prediction(
    model_path: Path, source: str, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool, type_map: TypeMap
) -> Prediction:
    """`fmt` "tei" or "html" of a plain text, or of the taggable p/s/ab elements of a TEI/XML input (TEI: tagged in place);
    `source` is the text of `input_path`."""
    if looks_like_xml(input_path, source):
        document = parse_xml(source.removeprefix(BOM), input_path)
        if not document.segments:
            raise InputError(input_path, None, "no text to tag: no p, s or ab element (outside teiHeader) holds only text and milestones such as lb, pb")
        texts = [segment.text for segment in document.segments]
        model = checked_tagger(model_path, entity_fix, markup=True)
        spans, sentences, tokens = tag_texts(model, texts, input_path, fast, batch_size, entity_fix)
        if fmt == "html":
            page = render_html(list(zip(texts, spans)), input_path.name)
            return Prediction(page, sentences, tokens, sum(map(len, spans)), 0, document.passed_over)
        marked = tag_in_place(document, spans, type_map)
        bom = BOM if source.startswith(BOM) else ""
        return Prediction(bom + marked.text, sentences, tokens, marked.inserted, marked.skipped, document.passed_over)
    text = checked_text(source, input_path)
    model = checked_tagger(model_path, entity_fix, markup=True)
    spans, sentences, tokens = tag_texts(model, [text], input_path, fast, batch_size, entity_fix)
    if fmt == "html":
        marked = Markup(render_html([(text, spans[0])], input_path.name), len(spans[0]), 0)
    else:
        marked = tei_document(text, spans[0], input_path, type_map)
    return Prediction(marked.text, sentences, tokens, marked.inserted, marked.skipped)


def annotated_text(text: str, view: FlairView, sentences: Sequence[Sentence], tagged: Tagged) -> Annotated:
    """The text with its tokens (Flair's, at their offsets in `text`) and the spans of the tags, as `sentence_json` reads them."""
    offsets, spans = [], []
    for sentence, tags in zip(sentences, tagged):
        base = sentence.start_position
        tokens = [view.original(base + token.start_position, base + token.end_position) for token in sentence]
        offsets.append(tokens)
        for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]):
            spans.append(Span(tokens[indices[0]][0], tokens[indices[-1]][1], kind, confidence))
    return Annotated(text, offsets, spans)


def predict_document(
    model_path: Path,
    input_path: Path,
    fmt: str,
    fast: bool,
    batch_size: Optional[int],
    entity_fix: bool = False,
    markup_map: Optional[Path] = None,
) -> Prediction:
    """`input_path` (`-`: stdin) tagged by the model in format `fmt` (one of FORMATS; Entity-Fix applied on request;
    `markup_map`: a YAML type map for tei)."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}': one of {', '.join(FORMATS)}")
    if markup_map is not None and fmt != "tei":
        raise FlairsuiteError(f"--markup-map applies to --format tei only, not {fmt}")
    type_map = load_type_map(markup_map) if markup_map is not None else DEFAULT_TYPE_MAP
    source = read_source(input_path)
    input_path = shown(input_path)
    if fmt in MARKUP_FORMATS:
        return markup_prediction(model_path, source, input_path, fmt, fast, batch_size, entity_fix, type_map)
    source = checked_text(source, input_path)
    view = flair_view(source)
    model = checked_tagger(model_path, entity_fix, markup=fmt in ANNOTATION_FORMATS, fmt=fmt)
    sentences = split(view.text, model_segmentation(model))
    tagged = tag_file_sentences(model, sentences, input_path, fast, batch_size, entity_fix)
    if fmt == "column":
        text = column_text(sentences, tagged)
    elif fmt == "json":
        text = json_text(sentences, tagged, predicts_spans(model), view)
    else:
        text = annotation_text([annotated_text(source, view, sentences, tagged)], fmt, model_path.name)
    return Prediction(text, len(sentences), sum(len(s) for s in sentences), xml_as_text=looks_like_xml(input_path, source))


def predict_file(model_path: Path, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool = False) -> tuple[str, int, int]:
    """The tagged text of `input_path` in format `fmt` (Entity-Fix applied on request), with its numbers of sentences and tokens."""
    found = predict_document(model_path, input_path, fmt, fast, batch_size, entity_fix)
    return found.text, found.sentences, found.tokens
