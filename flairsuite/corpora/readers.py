"""Streaming, validating readers for the labeled formats of the registry.

Each reader yields `TaggedSentence`s with raw tags and the line number of every token, so that
a bad tag can be reported at its file and line. Files may be gzip-compressed; line ends may be
LF or CRLF; whitespace-only lines end a sentence.
"""

import gzip
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import InputError

log = logging.getLogger("flairsuite")

SEPARATORS = {"space": " ", "tab": "\t", "whitespace": None}
WHITESPACE = re.compile(r"\s+")
CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


@dataclass
class TaggedSentence:
    """Tokens with one raw tag each, and the line each token came from."""

    tokens: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    whitespace_after: list[bool] = field(default_factory=list)

    def add(self, token: str, tag: str, line: int, whitespace_after: bool = True) -> None:
        self.tokens.append(token)
        self.tags.append(tag)
        self.lines.append(line)
        self.whitespace_after.append(whitespace_after)


def read_lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(line number, text without line end) for every line; gzip-aware, strict decoding."""
    if not path.is_file():
        raise InputError(path, None, "file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    lineno = 0
    try:
        with opener(path, "rb") as handle:
            for lineno, raw in enumerate(handle, 1):
                try:
                    text = raw.decode(encoding)
                except UnicodeDecodeError as err:
                    raise InputError(
                        path, lineno, f"not valid {encoding}: byte 0x{raw[err.start]:02x} at column {err.start + 1}"
                    ) from None
                if lineno == 1:
                    text = text.lstrip("\ufeff")
                yield lineno, text.rstrip("\r\n")
    except (OSError, EOFError) as err:
        raise InputError(path, lineno + 1, f"cannot read file ({err})") from None


def _width(column: int) -> int:
    """How many columns a line needs to have `column` (negative: counted from the end)."""
    return column + 1 if column >= 0 else -column


def read_column(path: Path, fmt: FormatSpec, encoding: str) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-style column file (token and tag columns given by `fmt`; negative ones count from the end)."""
    separator = SEPARATORS[fmt.sep]
    needed = max(_width(fmt.text), _width(int(fmt.label)), 2)
    sentence = TaggedSentence()
    first: Optional[tuple[int, int]] = None  # (line, columns) of the first token line: every token line has as many
    for lineno, line in read_lines(path, encoding):
        if not line.strip():
            if sentence.tokens:
                yield sentence
            sentence = TaggedSentence()
            continue
        if fmt.comment and line.startswith(fmt.comment):
            continue
        # whitespace, as Flair's ColumnCorpus: trailing whitespace is cut, then any run of whitespace separates
        # columns (a line starting with whitespace has an empty first column)
        fields = WHITESPACE.split(line.rstrip()) if separator is None else line.split(separator)
        if fmt.docstart and len(fields) >= _width(fmt.text) and fields[fmt.text] == fmt.docstart:
            # a document marker (whatever its column count) is no token, and ends any open sentence
            if sentence.tokens:
                yield sentence
            sentence = TaggedSentence()
            continue
        if len(fields) < needed:
            raise InputError(
                path, lineno, f"expected at least {needed} {fmt.sep}-separated columns, found {len(fields)}"
            )
        token, tag = fields[fmt.text], fields[int(fmt.label)]
        if not token.strip():
            raise InputError(path, lineno, "empty token")
        width = len(fields) if separator is None else len(line.rstrip(separator).split(separator))  # trailing empty columns aside
        if first is None:
            first = (lineno, width)
        elif width != first[1]:  # e.g. a token holding a space in a whitespace-separated file: its columns shift
            raise InputError(path, lineno, f"{width} {fmt.sep}-separated columns, but line {first[0]} has {first[1]}: every token line needs "
                             "the same columns (a token with a space in it? then separate the columns by tabs: sep tab)")
        sentence.add(token, tag.strip(), lineno)
    if sentence.tokens:
        yield sentence


def _conllu_label(fields: list[str], label: Union[int, str], path: Path, lineno: int) -> str:
    """The label of a CoNLL-U line: a column by index or name (`upos`), or `misc:KEY` (the value of KEY= in MISC)."""
    if isinstance(label, int):
        return fields[label]
    if label in CONLLU_COLUMNS:
        return fields[CONLLU_COLUMNS.index(label)]
    key = label.split(":", 1)[1] + "="
    for item in fields[9].split("|"):
        if item.startswith(key):
            return item[len(key) :]
    raise InputError(path, lineno, f"MISC column has no '{key}' entry")


def read_conllu(path: Path, fmt: FormatSpec, encoding: str) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-U file; multiword-token ranges and empty nodes are skipped."""
    sentence = TaggedSentence()
    for lineno, line in read_lines(path, encoding):
        if not line.strip():
            if sentence.tokens:
                yield sentence
            sentence = TaggedSentence()
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise InputError(path, lineno, f"expected 10 tab-separated CoNLL-U columns, found {len(fields)}")
        if "-" in fields[0] or "." in fields[0]:
            continue
        if not fields[1].strip():
            raise InputError(path, lineno, "empty token")
        no_space = "SpaceAfter=No" in fields[9].split("|")
        sentence.add(fields[1], _conllu_label(fields, fmt.label, path, lineno), lineno, not no_space)
    if sentence.tokens:
        yield sentence


def _span_list(record: dict, path: Path, lineno: int) -> list[tuple[int, int, str]]:
    """(start, end inclusive, type) of every span in a CLUENER record, checked against the text."""
    text = record["text"]
    labels = record.get("label") or {}
    if not isinstance(labels, dict):
        raise InputError(path, lineno, "'label' is not an object of type -> {surface: [[start, end], ...]}")
    spans = []
    for entity_type, surfaces in labels.items():
        if not isinstance(surfaces, dict):
            raise InputError(path, lineno, f"label '{entity_type}' is not an object of surface -> [[start, end], ...]")
        for surface, offsets in surfaces.items():
            if not isinstance(offsets, list):
                raise InputError(path, lineno, f"offsets of '{surface}' are not a list of [start, end] pairs")
            for pair in offsets:
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not all(isinstance(o, int) and not isinstance(o, bool) for o in pair)
                ):
                    raise InputError(path, lineno, f"offsets {json.dumps(pair)} of '{surface}' are not a [start, end] pair")
                start, end = pair
                if not 0 <= start <= end < len(text):
                    raise InputError(
                        path, lineno, f"span [{start}, {end}] of '{surface}' is outside the text (length {len(text)})"
                    )
                if text[start : end + 1] != surface:
                    raise InputError(path, lineno, f"span [{start}, {end}] is '{text[start:end + 1]}', not '{surface}'")
                spans.append((start, end, entity_type))
    return sorted(spans, key=lambda s: (s[0], -(s[1] - s[0])))


def read_spans_json(
    path: Path, fmt: FormatSpec, encoding: str, repairs: Counter
) -> Iterator[TaggedSentence]:
    """Character-level BIO sentences from JSON lines with character-offset spans (end inclusive).

    Characters are tokens; whitespace characters are not (they are skipped and counted). A span
    overlapping an earlier, longer one cannot be represented in flat BIO: it is dropped and logged.
    """
    for lineno, line in read_lines(path, encoding):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = record["text"]
        except (ValueError, KeyError, TypeError) as err:
            raise InputError(path, lineno, f"not a JSON object with a 'text' field ({err})") from None
        if not isinstance(text, str):
            raise InputError(path, lineno, f"'text' is not a string but {type(text).__name__}")
        tags = ["O"] * len(text)
        for start, end, entity_type in _span_list(record, path, lineno):
            if any(tag != "O" for tag in tags[start : end + 1]):
                log.warning("%s:%d: dropped %s span [%d, %d] overlapping another span", path, lineno, entity_type, start, end)
                repairs["overlapping span dropped"] += 1
                continue
            tags[start : end + 1] = [f"B-{entity_type}"] + [f"I-{entity_type}"] * (end - start)
        sentence = TaggedSentence()
        for char, tag in zip(text, tags):
            if char.isspace():
                repairs["whitespace character skipped"] += 1
                if sentence.whitespace_after:
                    sentence.whitespace_after[-1] = True
                continue
            sentence.add(char, tag, lineno, whitespace_after=False)
        if sentence.tokens:
            yield sentence


def read_tagged(path: Path, fmt: FormatSpec, encoding: str, repairs: Counter) -> Iterator[TaggedSentence]:
    """Sentences with raw tags of a labeled file in any labeled format (`column`, `conllu`, `spans_json`)."""
    if fmt.kind == "column":
        return read_column(path, fmt, encoding)
    if fmt.kind == "conllu":
        return read_conllu(path, fmt, encoding)
    if fmt.kind == "spans_json":
        return read_spans_json(path, fmt, encoding, repairs)
    raise InputError(path, None, f"format '{fmt.kind}' is not a labeled format")
