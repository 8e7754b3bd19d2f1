"""Character-offset span exports of doccano (JSON lines) and Label Studio (a JSON list of tasks), read as BIO sentences.

`read_jsonl(path, fmt, encoding, repairs)` yields the sentences of one file. A file whose first character (after
whitespace) is `[` is a Label Studio JSON export, anything else doccano JSON lines:

- doccano: one JSON object a line with `text` and its spans as `label: [[start, end, TYPE], ...]` (sequence
  labeling export) or `entities: [{start_offset, end_offset, label}, ...]` (the export with relations). Ends are exclusive.
- Label Studio: a list of tasks `{data: {text}, annotations: [{result: [{type: labels, value: {start, end, text,
  labels: [TYPE]}}]}]}`. The first annotation not cancelled is read (the others counted); a task without one is skipped
  (counted); results of another type (relations, choices) are skipped (counted); a span with several labels takes the
  first (counted). A span's `text`, where given, must be the text at its offsets.

Texts are split into sentences and tokens as `predict` splits raw text (`segmentation.split_text`, segtok); the spans go
onto those tokens by the rules of `spans.py` (a span edge inside a token splits it; overlaps by CLUENER's rule), each counted.
"""

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from flairsuite.corpora.readers import TaggedSentence, read_lines
from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.span_rules import CharSpan, CharToken, tagged_sentences
from flairsuite.errors import InputError
from flairsuite.values import is_int

EMPTY_TEXT = "record without text skipped"
NO_ANNOTATION = "task without annotation skipped"
OTHER_ANNOTATIONS = "further annotation of a task skipped"
FROM_PREDICTIONS = "task without annotation read from its predictions"
OTHER_RESULTS = "result other than labels skipped"
MORE_LABELS = "span label after the first skipped"


def _span(start: Any, end: Any, label: Any, text: str, path: Path, lineno: int) -> CharSpan:
    """A checked span: integer offsets inside the text, end after start, a non-empty text label."""
    if not (is_int(start) and is_int(end)):
        raise InputError(path, lineno, f"span offsets {json.dumps(start)}, {json.dumps(end)} are not integers")
    if not 0 <= start < end <= len(text):
        raise InputError(path, lineno, f"span [{start}, {end}] is outside the text (length {len(text)}) or empty")
    if not isinstance(label, str) or not label.strip():
        raise InputError(path, lineno, f"span [{start}, {end}] has no label (found {json.dumps(label)})")
    return CharSpan(start, end, label.strip(), lineno)


def doccano_spans(record: Any, path: Path, lineno: int) -> tuple[str, list[CharSpan]]:
    """(text, spans) of one doccano JSON line."""
    if not isinstance(record, dict):
        raise InputError(path, lineno, f"a JSON {type(record).__name__}, not an object with 'text' and 'label' or 'entities'")
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError(path, lineno, "no 'text' string in the record")
    for key in ("label", "entities"):
        if key in record and not isinstance(record[key], list):
            raise InputError(path, lineno, f"'{key}' is a JSON {json_type(record[key])}, not a list of spans")
    if isinstance(record.get("label"), list):
        spans = []
        for item in record["label"]:
            if not isinstance(item, list) or len(item) != 3:
                raise InputError(path, lineno, f"label item {json.dumps(item, ensure_ascii=False)} is not [start, end, TYPE]")
            spans.append(_span(*item, text, path, lineno))
        return text, spans
    if isinstance(record.get("entities"), list):
        spans = []
        for item in record["entities"]:
            if not isinstance(item, dict):
                raise InputError(path, lineno, f"entity {json.dumps(item, ensure_ascii=False)} is not an object with start_offset, end_offset, label")
            spans.append(_span(item.get("start_offset"), item.get("end_offset"), item.get("label"), text, path, lineno))
        return text, spans
    raise InputError(path, lineno, "no 'label' list ([[start, end, TYPE], ...]) nor 'entities' list ([{start_offset, end_offset, label}, ...])")


def label_studio_spans(task: Any, path: Path, lineno: int, repairs: Counter) -> Optional[tuple[str, list[CharSpan]]]:
    """(text, spans) of one Label Studio task; None for a task without an annotation (counted)."""
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise InputError(path, lineno, "a task is an object with 'data' (holding the text) and 'annotations'")
    data = task["data"]
    strings = [value for value in data.values() if isinstance(value, str)]
    if "text" in data and not isinstance(data["text"], str):
        raise InputError(path, lineno, f"the task's data.text is a JSON {json_type(data['text'])}, not a string")
    text = data["text"] if "text" in data else (strings[0] if len(strings) == 1 else None)
    if text is None:
        raise InputError(path, lineno, f"the task's data has no 'text' string (its keys: {', '.join(map(str, data)) or 'none'})")
    annotations = [a for a in _objects(task, "annotations", path, lineno) if not _cancelled(a, path, lineno)]
    if not annotations:  # a pre-annotated task (`predict --format labelstudio`, a model's export): its predictions, counted
        annotations = _objects(task, "predictions", path, lineno)
        if annotations:
            repairs[FROM_PREDICTIONS] += 1
    if not annotations:
        repairs[NO_ANNOTATION] += 1
        return None
    if len(annotations) > 1:
        repairs[OTHER_ANNOTATIONS] += len(annotations) - 1
    spans = []
    for result in _objects(annotations[0], "result", path, lineno):
        if not isinstance(result.get("type"), str):
            raise InputError(path, lineno, f"result {json.dumps(result, ensure_ascii=False)[:80]} has no 'type' string")
        if result["type"] != "labels":
            repairs[OTHER_RESULTS] += 1
            continue
        value = result.get("value")
        labels = value.get("labels") if isinstance(value, dict) else None
        if not isinstance(labels, list) or not labels:
            raise InputError(path, lineno, f"labels result {json.dumps(result, ensure_ascii=False)[:80]} has no value.labels list")
        if len(labels) > 1:
            repairs[MORE_LABELS] += len(labels) - 1
        span = _span(value.get("start"), value.get("end"), labels[0], text, path, lineno)
        surface = value.get("text")
        if surface is not None and not isinstance(surface, str):
            raise InputError(path, lineno, f"span [{span.start}, {span.end}] has a value.text that is a JSON {json_type(surface)}, not a string")
        if surface is not None and text[span.start : span.end] != surface:
            raise InputError(path, lineno, f"span [{span.start}, {span.end}] is '{text[span.start:span.end]}', not '{surface}'")
        spans.append(span)
    return text, spans


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type (object, list, string, number, boolean, null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "list", str: "string"}.get(type(value), "number")


def _objects(owner: dict, key: str, path: Path, lineno: int) -> list[dict]:
    """The list of objects under `key` (absent or null: none); another JSON type, or an element that is no object, is an error."""
    items = owner.get(key)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        found = json_type(items) if not isinstance(items, list) else "list holding a " + next(
            json_type(item) for item in items if not isinstance(item, dict))
        raise InputError(path, lineno, f"'{key}' is a JSON {found}, not a list of objects")
    return items


def _cancelled(annotation: dict, path: Path, lineno: int) -> bool:
    """An annotation's `was_cancelled` (absent: false); a value other than true, false or null is an error."""
    cancelled = annotation.get("was_cancelled")
    if cancelled is not None and not isinstance(cancelled, bool):
        raise InputError(path, lineno, f"'was_cancelled' is a JSON {json_type(cancelled)}, not true or false")
    return bool(cancelled)


def _tasks(path: Path, encoding: str) -> Iterator[tuple[int, Any]]:
    """(line, task) of each element of a JSON list file."""
    content = "\n".join(line for _, line in read_lines(path, encoding))
    decoder = json.JSONDecoder()
    position = content.index("[") + 1

    def line_at(offset: int) -> int:
        return content.count("\n", 0, offset) + 1

    while True:
        while position < len(content) and content[position] in " \t\r\n,":
            position += 1
        if position >= len(content):
            raise InputError(path, line_at(position), "the JSON list of tasks ends early (truncated file?)")
        if content[position] == "]":
            return
        try:
            task, end = decoder.raw_decode(content, position)
        except ValueError as err:
            raise InputError(path, line_at(position), f"not valid JSON ({err.msg})") from None
        yield line_at(position), task
        position = end


def _records(path: Path, encoding: str, repairs: Counter) -> Iterator[tuple[int, str, list[CharSpan]]]:
    """(line, text, spans) of every record of the file, doccano or Label Studio."""
    lines = list(read_lines(path, encoding))
    first = next((line.lstrip() for _, line in lines if line.strip()), "")
    if first.startswith("["):
        for lineno, task in _tasks(path, encoding):
            read = label_studio_spans(task, path, lineno, repairs)
            if read is not None:
                yield (lineno, *read)
        return
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            raise InputError(path, lineno, f"not valid JSON ({err.msg} at column {getattr(err, 'colno', '?')})") from None
        yield (lineno, *doccano_spans(record, path, lineno))


def tokens_of(text: str, lineno: int) -> list[list[CharToken]]:
    """The sentences and tokens `predict` makes of `text`, as character offsets in it (Flair's tokenizer, imported here:
    reading the other formats needs neither Flair nor torch)."""
    from flairsuite.corpora.segmentation import flair_view, split_text

    view = flair_view(text)
    sentences = []
    for sentence in split_text(view.text):
        base = sentence.start_position
        tokens = []
        for token in sentence.tokens:
            start, end = view.original(base + token.start_position, base + token.end_position)
            tokens.append(CharToken(start, end, lineno))
        sentences.append(tokens)
    return sentences


def read_jsonl(path: Path, fmt: FormatSpec, encoding: str, repairs: Counter) -> Iterator[TaggedSentence]:
    """BIO sentences of a doccano JSONL or Label Studio JSON export (module docstring)."""
    for lineno, text, spans in _records(path, encoding, repairs):
        if not text.strip():
            repairs[EMPTY_TEXT] += 1
            continue
        yield from tagged_sentences(text, tokens_of(text, lineno), spans, repairs)
