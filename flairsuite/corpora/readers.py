"""Streaming, validating readers for the tag-column formats: column files, CoNLL-U, CLUENER's JSON spans.

Each reader yields `TaggedSentence`s with raw tags and the line number of every token, so that
a bad tag can be reported at its file and line. Files may be gzip-compressed; line ends may be
LF or CRLF; whitespace-only lines end a sentence. The readers of annotation exports (webanno.py,
jsonl_spans.py) build on `read_lines` and `TaggedSentence`; `formats.READERS` names them all.
"""

import gzip
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.tags import OUTSIDE, PREFIXES, continues, split_tag
from flairsuite.errors import InputError
from flairsuite.values import is_int

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
    path: Optional[Path] = None  # the file, where a split has several (labeled.read_split)
    starts_document: bool = False  # the first sentence after a document marker (or after a gap in a sample of the file)
    line_ends: list[int] = field(default_factory=list)  # the tokens carrying the `line_break` flag (break_marks.py), ascending

    def add(self, token: str, tag: str, line: int, whitespace_after: bool = True, line_end: bool = False) -> None:
        if line_end:
            self.line_ends.append(len(self.tokens))
        self.tokens.append(token)
        self.tags.append(tag)
        self.lines.append(line)
        self.whitespace_after.append(whitespace_after)


def document_starts(sentences: Sequence[TaggedSentence]) -> list[int]:
    """The indices of the sentences (other than the first) that begin a document: after a document marker (or a gap in a
    sample), or the first of another file."""
    return [i for i in range(1, len(sentences)) if sentences[i].starts_document or sentences[i].path != sentences[i - 1].path]


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


HEADER_SKIPPED = "header line skipped"
FLAG_IN_ENTITY = "sentence-end flag inside an entity ignored"
FLAG_SENTENCE_END = "sentence ended by a flag"
NO_SPACE_FLAGS = frozenset({"NoSpaceAfter", "SpaceAfter=No"})  # in the flag column: no whitespace after the token


# a misspelt or cut tag (b-per, B_PER, B-, -PER), not a column name: `header: auto` takes it for no header
TAG_LIKE = re.compile(r"[A-Za-z][-_]\S|[BIESbies][-_]$|-")


def is_tag(cell: str) -> bool:
    """Whether a label cell is an entity tag (O, or a BIO/IOB1/BIOES one): the test `header: auto` makes of a first line."""
    try:
        split_tag(cell, PREFIXES["bioes"])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ColumnPlan:
    """Where a column file's token, tag and flag cells are, once its first line (maybe a header) is read."""

    text: int
    label: int
    flags: Optional[int] = None
    end_flags: frozenset[str] = frozenset()
    break_column: Optional[int] = None  # `line_break`: the column of its flags, and the flags
    break_flags: frozenset[str] = frozenset()


def _index(column: Union[int, str], names: Optional[list[str]], key: str, path: Path, lineno: int) -> int:
    """A column by number, or by its name in the header `names`."""
    if isinstance(column, int):
        return column
    if column.lstrip("-").isdigit():
        return int(column)
    if names is None:
        raise InputError(path, lineno, f"{key}: '{column}' names a column, but the file has no header line: give header: true or a column number")
    folded = [name.casefold() for name in names]
    if column not in names and column.casefold() not in folded:
        raise InputError(path, lineno, f"{key}: no column named '{column}' in the header line (its cells: {' '.join(names)}); "
                                       "a column is named by the file's header line or numbered (0 the first, -1 the last)")
    return names.index(column) if column in names else folded.index(column.casefold())


def _plan(fields: list[str], fmt: FormatSpec, path: Path, lineno: int) -> tuple[ColumnPlan, bool]:
    """The columns of a file from its first token line, and whether that line is a header (`fmt.header`; None: auto, a
    header where a column is named, or where the line has two columns or more and its label cell is no tag, nor looks
    like a misspelt one)."""
    named = any(isinstance(c, str) and not c.lstrip("-").isdigit() for c in (fmt.text, fmt.label, _flag_column(fmt), _flag_column(fmt, "line_break")))
    header = fmt.header
    if header is None:
        label = fmt.label
        header = named or (isinstance(label, int) and len(fields) >= max(2, _width(label)) and not is_tag(fields[label].strip())
                           and not TAG_LIKE.match(fields[label].strip()))
    names = [field.strip() for field in fields] if header else None
    flag_column, break_column = _flag_column(fmt), _flag_column(fmt, "line_break")
    plan = ColumnPlan(
        _index(fmt.text, names, "text", path, lineno),
        _index(fmt.label, names, "label", path, lineno),
        None if flag_column is None else _index(flag_column, names, "sentence_end", path, lineno),
        _flags(fmt.sentence_end),
        None if break_column is None else _index(break_column, names, "line_break", path, lineno),
        _flags(fmt.line_break),
    )
    return plan, bool(header)


def _flag_column(fmt: FormatSpec, key: str = "sentence_end") -> Optional[str]:
    """The column of a `COLUMN:FLAG|FLAG` key (`sentence_end`, `line_break`); None where it is not set."""
    value = getattr(fmt, key)
    return value.partition(":")[0] if value else None


def _flags(value: Optional[str]) -> frozenset[str]:
    """The flags of a `COLUMN:FLAG|FLAG` key."""
    return frozenset(value.partition(":")[2].split("|")) if value else frozenset()


def _check_width(path: Path, lineno: int, width: int, first: tuple[int, int], sep: str) -> None:
    """A token line of `width` columns where the first token line (or the header), `first` (line, columns), has another
    number is an error: e.g. a token holding a space in a whitespace-separated file, whose columns shift."""
    if width != first[1]:
        raise InputError(path, lineno, f"{width} {sep}-separated columns, but line {first[0]} has {first[1]}: every token line needs "
                         "the same columns as the first line, or as the header names (a token with a space in it? then "
                         "separate the columns by tabs: sep tab)")


def read_column(path: Path, fmt: FormatSpec, encoding: str, repairs: Optional[Counter] = None) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-style column file (token and tag columns given by `fmt`; negative ones count from the end).

    Own corpora may also have a header line naming the columns (`fmt.header`: True, or None to take a first line whose
    label cell is no tag for one), and a flag column whose flags end a sentence (`fmt.sentence_end`,
    `COLUMN:FLAG|FLAG`; not inside an entity); both counted in `repairs`. A line starting with `fmt.document_comment`
    (HIPE's `# hipe2022:document_id`) ends the open sentence, and the next sentence starts a document, as `docstart` does.
    With `fmt.line_break` (`COLUMN:FLAG|FLAG`) each sentence keeps which of its tokens carry one of those flags
    (`TaggedSentence.line_ends`; which of them are line-end break marks: `break_marks`).
    """
    repairs = Counter() if repairs is None else repairs
    separator = SEPARATORS[fmt.sep]
    plan: Optional[ColumnPlan] = None
    sentence = TaggedSentence()
    first: Optional[tuple[int, int]] = None  # (line, columns) of the first token line: every token line has as many
    flagged = False  # the last token's flags end its sentence
    new_document = False  # a document marker came since the last token: the next sentence starts a document
    for lineno, line in read_lines(path, encoding):
        document = bool(fmt.document_comment) and line.startswith(fmt.document_comment)
        if not line.strip() or document:  # a blank line ends the sentence; a document comment also starts a document
            if sentence.tokens:
                yield sentence
            sentence, flagged, new_document = TaggedSentence(), False, new_document or document
            continue
        if fmt.comment and line.startswith(fmt.comment):
            continue
        # whitespace, as Flair's ColumnCorpus: trailing whitespace is cut, then any run of whitespace separates
        # columns (a line starting with whitespace has an empty first column)
        fields = WHITESPACE.split(line.rstrip()) if separator is None else line.split(separator)
        width = len(fields) if separator is None else len(line.rstrip(separator).split(separator))  # trailing empty columns aside
        if plan is None:
            plan, header = _plan(fields, fmt, path, lineno)
            if header:  # every token line has as many columns as the header names
                repairs[HEADER_SKIPPED] += 1
                first = (lineno, width)
                continue
        if fmt.docstart and len(fields) >= _width(plan.text) and fields[plan.text] == fmt.docstart:
            # a document marker (whatever its column count) is no token, and ends any open sentence
            if sentence.tokens:
                yield sentence
            sentence, flagged, new_document = TaggedSentence(), False, True
            continue
        needed = max(_width(plan.text), _width(plan.label), 2, *(_width(column) for column in (plan.flags, plan.break_column) if column is not None))
        if len(fields) < needed:
            raise InputError(
                path, lineno, f"expected at least {needed} {fmt.sep}-separated columns, found {len(fields)}"
            )
        token, tag = fields[plan.text], fields[plan.label].strip()
        if not token.strip():
            raise InputError(path, lineno, "empty token")
        first = first or (lineno, width)
        _check_width(path, lineno, width, first, fmt.sep)
        if flagged:
            if continues(sentence.tags[-1], tag, fmt.scheme):
                repairs[FLAG_IN_ENTITY] += 1
            else:
                repairs[FLAG_SENTENCE_END] += 1
                yield sentence
                sentence = TaggedSentence()
        flags = set(fields[plan.flags].strip().split("|")) if plan.flags is not None else set()
        line_end = plan.break_column is not None and bool(set(fields[plan.break_column].strip().split("|")) & plan.break_flags)
        if new_document:
            sentence.starts_document, new_document = True, False
        sentence.add(token, tag, lineno, not flags & NO_SPACE_FLAGS, line_end)
        flagged = bool(flags & plan.end_flags)
    if sentence.tokens:
        yield sentence


def _conllu_label(fields: list[str], label: Union[int, str], repairs: Counter) -> str:
    """The label of a CoNLL-U line: a column by index or name (`upos`), or `misc:KEY` (the value of KEY= in MISC; a token
    without KEY= is `O`, counted)."""
    if isinstance(label, int):
        return fields[label]
    if label in CONLLU_COLUMNS:
        return fields[CONLLU_COLUMNS.index(label)]
    key = label.split(":", 1)[1] + "="
    for item in fields[9].split("|"):
        if item.startswith(key):
            return item[len(key) :]
    repairs[f"token without {key} in MISC read as O"] += 1
    return OUTSIDE


CONLLU_WORD = re.compile(r"[1-9][0-9]*")
CONLLU_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
MULTIWORD_EMPTY = (2, 3, 4, 6, 7, 8)  # LEMMA, UPOS, XPOS, HEAD, DEPREL, DEPS: `_` on a multiword range
CONLLU_EMPTY = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")


@dataclass
class ConlluIds:
    """Where a CoNLL-U sentence's ids stand: the last word's id."""

    word: int = 0


def _conllu_id(fields: list[str], ids: ConlluIds, path: Path, lineno: int) -> bool:
    """Whether a CoNLL-U line is a word (True) or a multiword range or empty node (False, skipped); an id outside the
    format's grammar (`N`, `N-M` with N < M, `N.M`) or out of sequence (words 1, 2, 3, ...; a range starting at the next
    word; an empty node after its word) is an error, as is a range or empty node with cells only a word has."""
    ident = fields[0]
    if CONLLU_WORD.fullmatch(ident):
        if int(ident) != ids.word + 1:
            raise InputError(path, lineno, f"word id {ident} after word {ids.word}: CoNLL-U words are numbered 1, 2, 3, ... in each sentence")
        ids.word += 1
        return True
    found = CONLLU_RANGE.fullmatch(ident)
    if found:
        if any(fields[i] != "_" for i in MULTIWORD_EMPTY):
            raise InputError(path, lineno, f"multiword range {ident} has a {CONLLU_COLUMNS[next(i for i in MULTIWORD_EMPTY if fields[i] != '_')]} "
                                           "(a range holds only FORM, FEATS and MISC; its words follow it)")
        if int(found.group(1)) != ids.word + 1 or int(found.group(2)) <= int(found.group(1)):
            raise InputError(path, lineno, f"multiword range {ident} after word {ids.word}: a range N-M (N < M) starts at the next word")
        return False
    found = CONLLU_EMPTY.fullmatch(ident)
    if found:
        if fields[6] != "_" or fields[7] != "_":
            raise InputError(path, lineno, f"empty node {ident} has a HEAD or DEPREL (an empty node has neither; a word is numbered N)")
        if int(found.group(1)) != ids.word:
            raise InputError(path, lineno, f"empty node {ident} after word {ids.word}: an empty node N.M follows word N")
        return False
    raise InputError(path, lineno, f"'{ident}' is no CoNLL-U id (a word N, a multiword range N-M or an empty node N.M)")


def read_conllu(path: Path, fmt: FormatSpec, encoding: str, repairs: Optional[Counter] = None) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-U file; multiword-token ranges and empty nodes are skipped."""
    repairs = Counter() if repairs is None else repairs
    sentence = TaggedSentence()
    ids = ConlluIds()
    for lineno, line in read_lines(path, encoding):
        if not line.strip():
            if sentence.tokens:
                yield sentence
            sentence, ids = TaggedSentence(), ConlluIds()
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise InputError(path, lineno, f"expected 10 tab-separated CoNLL-U columns, found {len(fields)}")
        if not _conllu_id(fields, ids, path, lineno):
            continue
        if not fields[1].strip():
            raise InputError(path, lineno, "empty token")
        no_space = "SpaceAfter=No" in fields[9].split("|")
        sentence.add(fields[1], _conllu_label(fields, fmt.label, repairs), lineno, not no_space)
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
                    or not all(is_int(o) for o in pair)
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
