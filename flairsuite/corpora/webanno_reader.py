"""WebAnno TSV 3.x files (INCEpTION's and WebAnno's export; the format's specification is in the INCEpTION
documentation, "WebAnno TSV 3.3 File format"): one span layer and one of its features read as BIO sentences.

`read_webanno(path, fmt, encoding, repairs)` yields the sentences of one file (one document). How it reads:

- Line 1 is `#FORMAT=WebAnno TSV 3.x`; then the layer declarations (`#T_SP=` span, `#T_CH=` chain, `#T_RL=` relation
  layers), each `LAYER|FEATURE|...` giving one column a feature (a layer without features: one placeholder column).
  `fmt.layer` picks a span layer by its full name or the part after the last dot (default
  `de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity`), `fmt.feature` its feature holding the type (default
  `value`). Every other layer (lemma, POS, custom spans, chains, relations) is skipped. A file that declares no such
  layer has no annotation on it (INCEpTION declares the layers a document uses): its tokens are `O` (counted).
- `#Text=` lines are a sentence's text (several: joined by line breaks; escapes undone by the rules of the file's
  version, as INCEpTION reads it: TSV 3.2 and later escape `\\`, tab, line feed, `\\f`, `\\r`, `\\b` and other control
  characters; 3.0 and 3.1 Java-escaped the text, non-ASCII characters as `\\uXXXX` among them); rows `S-T<TAB>B-E<TAB>token
  <TAB>columns...` its tokens, with offsets in UTF-16 units of the document text (rebuilt as INCEpTION rebuilds it),
  mapped to characters; `S-T.K` rows are sub-tokens, which only carry annotations.
- In the chosen column `_` is no annotation, `*` an annotation without a value (dropped, counted), stacked
  annotations are separated by `|`, and `VALUE[N]` marks the rows of one multi-unit annotation N; `\\` escapes are undone.
- What the specification does not allow is an error at its line, never read another way: a row with another number of
  columns than the declarations give (one trailing empty column, INCEpTION's closing tab, aside), a bracket in a value
  that is no `[N]` (an unclosed `PER[2`; a literal bracket is written `\\[`), an annotation N that reappears after a
  token without it (its rows must be adjacent; only sub-token rows may lie between) or with another value.
- The spans then go onto the tokens by the rules of `spans.py` (stacked spans: the longest first kept, the others
  dropped; a span on a sub-token splits its token), each counted.
"""

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flairsuite.corpora.readers import TaggedSentence, read_lines
from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.span_rules import CharSpan, CharToken, tagged_sentences
from flairsuite.errors import InputError

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
DEFAULT_FEATURE = "value"
FORMAT_LINE = re.compile(r"#FORMAT=WebAnno TSV (\d+)\.(\d+)$")
LAYER_PREFIXES = {"#T_SP=": "span", "#T_CH=": "chain", "#T_RL=": "relation"}
ROW_ID = re.compile(r"(\d+)-(\d+)(?:\.(\d+))?$")
OFFSETS = re.compile(r"(\d+)-(\d+)$")
STACK_SEPARATOR = re.compile(r"(?<!\\)\|")
ANNOTATION_ITEM = re.compile(r"(?P<value>(?:[^\\\[\]]|\\.)*)(?:\[(?P<id>\d+)\])?", re.DOTALL)  # VALUE or VALUE[N], \\-escapes inside
VALUE_ESCAPES = {"\\\\": "\\", "\\[": "[", "\\]": "]", "\\|": "|", "\\_": "_", "\\->": "->", "\\;": ";", "\\t": "\t",
                 "\\n": "\n", "\\*": "*"}
TEXT_ESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\f": "\f", "\\r": "\r", "\\b": "\b",
                **{"\\" + chr(code): chr(code) for code in range(32) if not 7 < code < 14}}
VALUE_ESCAPE = re.compile("|".join(re.escape(key) for key in sorted(VALUE_ESCAPES, key=len, reverse=True)))
TEXT_ESCAPE = re.compile("|".join(re.escape(key) for key in sorted(TEXT_ESCAPES, key=len, reverse=True)))
JAVA_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}  # after a backslash; \\, \" and \' stand for themselves
JAVA_ESCAPE = re.compile(r"\\(?:u+\+?.{0,4}|[0-3][0-7]{0,2}|[4-7][0-7]?|.?)", re.DOTALL)
JAVA_ESCAPED_VERSIONS = ((3, 0), (3, 1))  # `#Text=` Java-escaped; 3.2 and later escape only the characters listed in TEXT_ESCAPES
NO_LAYER = "file without the layer: all tokens O"
NO_VALUE = "annotation without a value (*) dropped"


def unescape_value(value: str) -> str:
    """A feature value as written, with the format's escapes (`\\|`, `\\_`, `\\*`, ...) undone."""
    return VALUE_ESCAPE.sub(lambda m: VALUE_ESCAPES[m.group()], value)


def unescape_text(text: str) -> str:
    """A `#Text=` line's text with its escapes (`\\t`, `\\n`, `\\\\`, control characters) undone: TSV 3.2 and later."""
    return TEXT_ESCAPE.sub(lambda m: TEXT_ESCAPES[m.group()], text)


def unescape_java_text(text: str) -> str:
    """A `#Text=` line of TSV 3.0 and 3.1, which Java-escaped the text (`Daf\\u00FCr`, `\\r`, `\\"`), unescaped as INCEpTION reads it
    (commons-lang3 `unescapeJava`): `\\uXXXX` (also `\\uuXXXX`, `\\u+XXXX`; surrogate pairs joined), octal `\\0`-`\\377`, `\\b \\t \\n \\f \\r`,
    `\\\\ \\" \\'`, and any other backslash dropped. A `\\u` without four hex digits is a ValueError."""
    units = JAVA_ESCAPE.sub(_java_unit, text)
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _java_unit(match: "re.Match[str]") -> str:
    """One Java escape's UTF-16 unit (a lone surrogate for half of a pair), or what stands for itself."""
    escape = match.group()
    if len(escape) == 1:
        return ""  # a backslash at the end of the line
    if escape[1] == "u":
        body = escape[1:].lstrip("u")
        digits = body[1:] if body.startswith("+") else body
        if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise ValueError(f"'{escape}' is no \\uXXXX escape (four hex digits)")
        return chr(int(digits, 16))
    if escape[1] in "01234567":
        return chr(int(escape[1:], 8))
    return JAVA_ESCAPES.get(escape[1:], escape[1:])


@dataclass(frozen=True)
class Layer:
    """A declared layer: its kind (span, chain, relation), name, and its columns' features (placeholder: empty)."""

    kind: str
    name: str
    features: tuple[str, ...]

    @property
    def width(self) -> int:
        return max(1, len(self.features))


def _layer_column(layers: list[Layer], wanted: str, feature: str, path: Path, header_line: int) -> Optional[int]:
    """The index (among the annotation columns) of `feature` of the span layer named `wanted`; None if no layer has that name."""
    matches = [layer for layer in layers if wanted in (layer.name, layer.name.rsplit(".", 1)[-1])]
    if not matches:
        return None
    if len(matches) > 1:
        raise InputError(path, header_line, f"layer '{wanted}' could be {', '.join(m.name for m in matches)}: give its full name (`layer:`)")
    (layer,) = matches
    if layer.kind != "span":
        raise InputError(path, header_line, f"layer {layer.name} is a {layer.kind} layer; `layer:` names a span layer")
    if feature not in layer.features:
        known = ", ".join(layer.features) or "none"
        raise InputError(path, header_line, f"layer {layer.name} has no feature '{feature}' (its features: {known}); choose one with `feature:`")
    start = 0
    for other in layers:
        if other is layer:
            return start + layer.features.index(feature)
        start += other.width
    raise AssertionError("layer not in its list")


@dataclass
class _Document:
    """What a file holds, in document coordinates: text, tokens by sentence, and the chosen column's annotations."""

    text: list[str] = field(default_factory=list)
    length16: int = 0  # the text's length in UTF-16 units
    sentences: list[list[tuple[int, int, int, str]]] = field(default_factory=list)  # (begin16, end16, line, form) of each token
    annotations: dict[object, list] = field(default_factory=dict)  # key -> [begin16, end16, value, first line, last row]
    subtoken_rows: set[int] = field(default_factory=set)  # the rows (counted over the file, from 1) that are sub-tokens
    subtokens: list[tuple[int, int, int, str]] = field(default_factory=list)  # (begin16, end16, line, form) of each sub-token

    def add_text(self, text: str) -> None:
        self.text.append(text)
        self.length16 += _units(text)


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _char_offsets(text: str) -> list[int]:
    """For each UTF-16 offset into `text` (and its end), the character offset; -1 inside a surrogate pair."""
    offsets = []
    for index, char in enumerate(text):
        offsets.append(index)
        if ord(char) > 0xFFFF:
            offsets.append(-1)
    offsets.append(len(text))
    return offsets


def _header(lines: Iterator[tuple[int, str]], path: Path) -> tuple[tuple[int, int], list[Layer], int]:
    """The format's version, the declared layers, and the line of the last declaration; the format line is checked first."""
    first = next(lines, None)
    if first is None:
        raise InputError(path, 1, "empty file: a WebAnno TSV file starts with #FORMAT=WebAnno TSV 3.3")
    lineno, line = first
    match = FORMAT_LINE.match(line.strip())
    if not match:
        raise InputError(path, lineno, "no '#FORMAT=WebAnno TSV 3.x' line: not a WebAnno TSV 3 file (INCEpTION: export as WebAnno TSV v3.3)")
    if match.group(1) != "3":
        raise InputError(path, lineno, f"WebAnno TSV {match.group(1)}.{match.group(2)}: only version 3.x is read (export as WebAnno TSV v3.3)")
    layers, last = [], lineno
    for lineno, line in lines:
        prefix = line[:6]
        if prefix not in LAYER_PREFIXES:
            if line.strip():
                raise InputError(path, lineno, "expected a layer declaration (#T_SP=, #T_CH=, #T_RL=) or the blank lines before the text")
            break
        name, *features = line[6:].split("|")
        if not name:
            raise InputError(path, lineno, "layer declaration without a layer name")
        layers.append(Layer(LAYER_PREFIXES[prefix], name, tuple(features)))
        last = lineno
    return (int(match.group(1)), int(match.group(2))), layers, last


def _annotations(cell: str, row: int, unit: tuple[int, int], document: _Document, path: Path, lineno: int) -> None:
    """Record the annotations of one cell of the chosen column (stacked ones by `|`; `[N]`: a multi-unit annotation's id,
    whose rows must be adjacent, only sub-token rows between, and keep one value)."""
    if cell == "_":
        return
    for index, item in enumerate(STACK_SEPARATOR.split(cell)):
        match = ANNOTATION_ITEM.fullmatch(item)
        if match is None:
            raise InputError(path, lineno, f"'{item}' is no annotation value: a bracket that is no [N] id (unclosed?); "
                                           "a literal bracket is escaped as \\[ or \\]")
        raw, ident = match.group("value"), match.group("id")
        key: object = (row, index) if ident is None else ("id", int(ident))
        value = None if raw == "*" else unescape_value(raw)
        begin, end = unit
        known = document.annotations.get(key)
        if known is None:
            document.annotations[key] = [begin, end, value, lineno, row]
            continue
        if known[2] != value:
            raise InputError(path, lineno, f"annotation [{ident}] has the value '{raw}' here but another at line {known[3]}: "
                                           "the rows of one annotation share its value")
        if any(between not in document.subtoken_rows for between in range(known[4] + 1, row)):
            raise InputError(path, lineno, f"annotation [{ident}] reappears here after tokens without it (it was last at line "
                                           f"{known[3]}): the rows of one annotation are adjacent")
        known[0], known[1], known[4] = min(known[0], begin), max(known[1], end), row


def read_webanno(path: Path, fmt: FormatSpec, encoding: str, repairs: Counter) -> Iterator[TaggedSentence]:
    """The sentences of one WebAnno TSV 3.x file, tagged in BIO by the chosen layer and feature (module docstring)."""
    lines = iter(read_lines(path, encoding))
    version, layers, header_line = _header(lines, path)
    java_escaped = version in JAVA_ESCAPED_VERSIONS
    column = _layer_column(layers, fmt.layer or NAMED_ENTITY, fmt.feature or DEFAULT_FEATURE, path, header_line)
    width = 3 + sum(layer.width for layer in layers)
    document = _Document()
    sentence_text: list[str] = []
    sentence_start: Optional[tuple[int, int, int]] = None  # (line of its #Text, begin16, end16) of the open sentence
    token_unit: Optional[tuple[int, int]] = None
    row = 0
    for lineno, line in lines:
        if not line.strip():
            sentence_start, token_unit = None, None
            continue
        if line.startswith("#"):
            if sentence_start is not None:
                raise InputError(path, lineno, "a sentence header (#Text=) among token rows: a blank line must end the sentence before it")
            if line.startswith("#Text="):
                sentence_text.append(_text_line(line[len("#Text=") :], java_escaped, path, lineno))
            continue
        fields = line.split("\t")
        if len(fields) == width + 1 and fields[-1] == "":
            fields.pop()  # INCEpTION ends each row with a tab
        if len(fields) != width:
            raise InputError(path, lineno, f"expected {width} tab-separated columns (id, offsets, token and {width - 3} of the declared layers), "
                                           f"found {len(fields)}: a column without its layer declaration, or a row cut short?")
        ident, offsets = ROW_ID.match(fields[0]), OFFSETS.match(fields[1])
        if not ident or not offsets:
            raise InputError(path, lineno, f"'{fields[0]}\t{fields[1]}' is no 'SENTENCE-TOKEN<TAB>BEGIN-END' pair")
        begin, end = int(offsets.group(1)), int(offsets.group(2))
        if end < begin:
            raise InputError(path, lineno, f"offsets {begin}-{end} end before they begin")
        subtoken = ident.group(3) is not None
        if sentence_start is None:
            if subtoken:
                raise InputError(path, lineno, f"sub-token {fields[0]} before any token of its sentence")
            if not sentence_text:
                raise InputError(path, lineno, "token row without a #Text= line before its sentence")
            sentence_start = _open_sentence(document, "\n".join(sentence_text), begin, lineno)
            sentence_text = []
        _, first, last = sentence_start
        if not first <= begin <= end <= last:
            raise InputError(path, lineno, f"offsets {begin}-{end} fall outside the text of their sentence (UTF-16 offsets {first}-{last})")
        if subtoken:
            if token_unit is None or not token_unit[0] <= begin <= end <= token_unit[1]:
                raise InputError(path, lineno, f"sub-token {fields[0]} at {begin}-{end} lies outside its token")
            document.subtokens.append((begin, end, lineno, fields[2]))
        else:
            document.sentences[-1].append((begin, end, lineno, fields[2]))
            token_unit = (begin, end)
        row += 1
        if subtoken:
            document.subtoken_rows.add(row)
        if column is not None:
            _annotations(fields[3 + column], row, (begin, end), document, path, lineno)
    yield from _tagged(document, path, column, repairs)


def _text_line(text: str, java_escaped: bool, path: Path, lineno: int) -> str:
    """A `#Text=` line's text unescaped by the rules of the file's version (3.0 and 3.1: Java's; later: the format's own list)."""
    if not java_escaped:
        return unescape_text(text)
    try:
        return unescape_java_text(text)
    except ValueError as err:
        raise InputError(path, lineno, f"{err} in a WebAnno TSV 3.1 #Text= line (Java escapes)") from None


def _open_sentence(document: _Document, text: str, begin: int, lineno: int) -> tuple[int, int, int]:
    """Place a sentence's text at UTF-16 offset `begin` of the document, as INCEpTION rebuilds a document's text."""
    if document.length16 > begin and document.text and document.text[-1] == "\n":  # no gap: the line break after the last one goes
        document.text.pop()
        document.length16 -= 1
    if document.length16 < begin:
        document.add_text(" " * (begin - document.length16))
    start = document.length16
    document.add_text(text)
    document.add_text("\n")
    document.sentences.append([])
    return lineno, start, start + _units(text)


def _check_form(text: str, token: CharToken, form: str, path: Path, what: str = "token") -> None:
    """A (sub-)token row's form must be the text at its offsets (as written, or with the format's escapes)."""
    found = text[token.start : token.end]
    if found not in (form, unescape_text(form), unescape_value(form)):
        raise InputError(path, token.line, f"{what} '{form}' is not the text at its offsets ('{found}')")


def _tagged(document: _Document, path: Path, column: Optional[int], repairs: Counter) -> list[TaggedSentence]:
    """The document's sentences with the chosen column's annotations as BIO tags (`spans.tagged_sentences`)."""
    text = "".join(document.text)
    chars = _char_offsets(text)

    def char(offset16: int, lineno: int) -> int:
        if offset16 >= len(chars) or chars[offset16] < 0:
            raise InputError(path, lineno, f"UTF-16 offset {offset16} falls inside a character of the text")
        return chars[offset16]

    sentences = []
    for rows in document.sentences:
        tokens = [CharToken(char(b, line), char(e, line), line) for b, e, line, _ in rows]
        for token, (_, _, line, form) in zip(tokens, rows):
            _check_form(text, token, form, path)
        sentences.append(tokens)
    for begin, end, line, form in document.subtokens:
        _check_form(text, CharToken(char(begin, line), char(end, line), line), form, path, "sub-token")
    spans = []
    for begin, end, value, line, _ in document.annotations.values():
        if value is None:
            repairs[NO_VALUE] += 1
            continue
        spans.append(CharSpan(char(begin, line), char(end, line), value, line))
    if column is None and any(sentences):
        repairs[NO_LAYER] += 1
    return tagged_sentences(text, sentences, spans, repairs)
