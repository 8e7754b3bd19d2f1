"""`flairsuite predict`: tag a raw text file with a saved suite tagger, as token/tag columns or JSON spans.

Any tagger of the registry (`flairsuite.models.registry.TAGGERS`) loads: the Flair SequenceTaggers
(LCRF-NER saves itself as one) and `cse` (`ClassStartEndTagger`). Sentence splitting and tokenisation
are Flair's (`SegtokSentenceSplitter`, segtok). Tags are the decoder's raw per-token tags, before any
span repair (CSE's decoder gives well-formed BIO). Spans and their confidences are the ones Flair's
`predict` attaches: `get_spans_from_bio` over the raw tags, confidence the mean of the span's token
confidences (a CSE entity's tokens all carry its span confidence, so the mean is that). With
`entity_fix` the raw tags first go through the paper's Entity-Fix rule (`flairsuite.models.entity_fix`),
and the spans are read from the fixed tags. `fast` runs `flairsuite.inference.FastTagger` (int8,
length-bucketed); otherwise the model's own Flair `predict` (CSE's labels spans: they are read back as
BIO tags).
"""

import json
from pathlib import Path
from typing import Any, Optional

import flair.nn
from flair.data import Sentence, get_spans_from_bio
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger
from flair.splitter import SegtokSentenceSplitter

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.models.crf import Tagged
from flairsuite.models.entity_fix import entity_fix as fix_tags
from flairsuite.models.registry import saved_classes

FLAIR_BATCH_SIZE = 32  # SequenceTagger.predict's default mini_batch_size


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a BOM dropped); a missing, unreadable, non-UTF-8 or blank file is a one-line error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, None, "file not found") from None
    except OSError as err:
        raise InputError(path, None, f"cannot read the file: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise InputError(path, line, f"not valid utf-8: byte 0x{data[err.start]:02x} at column {column} (convert the file, e.g. with iconv)") from None
    if not text.strip():
        raise InputError(path, None, "no text to tag: the file is empty or blank")
    return text


def split(text: str) -> list[Sentence]:
    """Flair's sentence splitting and tokenisation; sentences without tokens are dropped."""
    return [sentence for sentence in SegtokSentenceSplitter().split(text) if len(sentence)]


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


def sentence_json(sentence: Sentence, tags: list[tuple[str, float]], spans: bool) -> dict[str, Any]:
    """One sentence: its text, tokens, tags and spans (token indices end-exclusive, character offsets in the file)."""
    offset = sentence.start_position
    found = []
    for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags]) if spans else []:
        first, last = sentence.tokens[indices[0]], sentence.tokens[indices[-1]]
        found.append(
            {
                "start": indices[0],
                "end": indices[-1] + 1,
                "start_char": offset + first.start_position,
                "end_char": offset + last.end_position,
                "type": kind,
                "confidence": round(confidence, 4),
            }
        )
    return {
        "text": sentence.to_original_text(),
        "start_char": offset,
        "tokens": [token.text for token in sentence],
        "tags": [t for t, _ in tags],
        "spans": found,
    }


def json_text(sentences: list[Sentence], tagged: Tagged, spans: bool) -> str:
    """One JSON object per sentence and line (JSON Lines)."""
    return "".join(json.dumps(sentence_json(s, tags, spans), ensure_ascii=False) + "\n" for s, tags in zip(sentences, tagged))


def fixed(tagged: Tagged) -> Tagged:
    """Every sentence's tags through Entity-Fix; each token keeps its confidence."""
    return [list(zip(fix_tags([t for t, _ in tags]), [c for _, c in tags])) for tags in tagged]


def predict_file(model_path: Path, input_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool = False) -> tuple[str, int, int]:
    """The tagged text of `input_path` in format `fmt` (Entity-Fix applied on request), with its numbers of sentences and tokens."""
    sentences = split(read_text(input_path))
    if not sentences:
        raise InputError(input_path, None, "no tokens to tag")
    model = load_tagger(model_path)
    tagged = tag(model, sentences, fast, batch_size)
    if entity_fix:
        tagged = fixed(tagged)
    text = column_text(sentences, tagged) if fmt == "column" else json_text(sentences, tagged, predicts_spans(model))
    return text, len(sentences), sum(len(s) for s in sentences)
