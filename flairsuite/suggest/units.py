"""The texts of `suggest` read into units: the sentences of a corpus file, or of a plain text part by part, or its paragraphs.

A file ending `.conll`, `.bio`, `.iob`, `.column`, `.conllu`, `.jsonl`, `.json` or `.tsv` is read as a corpus of that
format (`.tsv`: WebAnno TSV when its first line says so, else columns; columns: token first, tag last) and its labels are
ignored; any other file is plain text, split into sentences and tokens as `predict` splits it. Each sentence keeps the
file's own characters (`Original`): its text runs from its first token to its last as the file has it (spacing, line
breaks and quotes kept; a corpus file's text is its tokens joined by their recorded spacing, a sentence a line), and its
tokens are Flair's at their offsets in that text.

Plain texts are read as `predict` reads them (`flairsuite.inference.stream`): in parts of about 100,000 characters cut
at sentence ends, each part scored before the next is read; a document (`--unit document`: a paragraph, text between
blank lines, of a single plain-text file) is held whole. As in `predict`, a plain text's words broken at a line end
are joined before tagging (`flairsuite.corpora.line_ends`: the unit holds "Berlin" for "Ber-\\nlin", its `file:line`
is where it starts in the file; `join` false, `--keep-line-ends`: not).
"""

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flair.data import Sentence

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import InputError
from flairsuite.inference.stream import Part, linked, text_abbreviations, text_parts
from flairsuite.inference.textfile import BOM, TextInfo, chunks, scan

COLUMN_SUFFIXES = (".conll", ".bio", ".iob", ".column")
CORPUS_SUFFIXES = (*COLUMN_SUFFIXES, ".conllu", ".jsonl", ".json", ".tsv")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def checked_text_file(path: Path) -> TextInfo:
    """A plain-text file of TEXTS checked in one pass (UTF-8; an unreadable or blank one is a one-line error)."""
    info = scan(path, path)
    if info.blank:
        raise InputError(path, None, "no text: the file is empty or blank")
    return info


def bom_bytes(info: TextInfo) -> int:
    """The bytes of the file's BOM (0 without one): read, but before the text's first character."""
    return len(BOM.encode("utf-8")) if info.bom else 0


@dataclass(frozen=True)
class Original:
    """A sentence as its file holds it: `text`, the file's characters from its first token up to the next sentence's first
    token (or the end of what was read with it); `end`, where its last token ends in `text`; `tokens`, each token's (start,
    end) in `text` (a word joined across a line end covers "Ber-\\nlin"); `lead`, the characters before it that no sentence
    holds (the head of a part, its first sentence only); `start`, where `text` starts in the file (characters after a BOM;
    None: a corpus file, whose text is its tokens joined by their spacing and a line break); `line`, the line it starts on."""

    text: str
    end: int
    tokens: tuple[tuple[int, int], ...]
    lead: str = ""
    start: Optional[int] = None
    line: int = 1


def part_originals(part: Part, lines: int, offset: int = 0) -> list[Original]:
    """Every sentence of a part as the file holds it (`lines`: the file's line at the part's start; `offset`: where the text
    the parts were cut from starts in the file)."""
    spans = [[part.local(s.start_position + t.start_position, s.start_position + t.end_position) for t in s] for s in part.sentences]
    found = []
    for index, tokens in enumerate(spans):
        start = tokens[0][0]
        stop = spans[index + 1][0][0] if index + 1 < len(spans) else len(part.text)
        found.append(Original(part.text[start:stop], tokens[-1][1] - start, tuple((a - start, b - start) for a, b in tokens),
                              part.text[:start] if index == 0 else "", offset + part.start + start, lines + part.text.count("\n", 0, start)))
    return found


def corpus_original(tokens: Sequence[str], spaces: Sequence[bool], line: int) -> Original:
    """A corpus file's sentence as text: its tokens joined by their recorded spacing, then a line break."""
    offsets, text = [], ""
    for token, space in zip(tokens, spaces):
        offsets.append((len(text), len(text) + len(token)))
        text += token + (" " if space else "")
    end = offsets[-1][1]
    return Original(text[:end] + "\n", end, tuple(offsets), "", None, line)


@dataclass(frozen=True)
class Unit:
    """A sentence or a document of TEXTS: where it starts (`file:line`), its sentences and each as its file holds it
    (`originals`); `path`, its file, and `first`, the place of its first sentence among the file's sentences."""

    source: str
    sentences: list[Sentence]
    originals: list[Original] = field(default_factory=list)
    path: Optional[Path] = None
    first: int = 0


def corpus_format(path: Path) -> FormatSpec:
    """How a corpus file of TEXTS is read, by its name (and for `.tsv` its first line)."""
    suffix = path.suffix.lower()
    if suffix == ".conllu":
        return FormatSpec("conllu")
    if suffix in (".jsonl", ".json"):
        return FormatSpec("jsonl")
    if suffix == ".tsv" and scan(path, path).head.startswith("#FORMAT=WebAnno"):
        return FormatSpec("webanno")
    return FormatSpec("column", "whitespace", 0, -1, "#", "-DOCSTART-")


def corpus_units(path: Path) -> list[Unit]:
    """The sentences of a corpus file, labels ignored, each as a Flair sentence of its tokens."""
    units: list[Unit] = []
    for tagged in read_tagged(path, corpus_format(path), "utf-8", Counter()):
        if not tagged.tokens:
            continue
        sentence = Sentence(list(tagged.tokens))
        for token, space in zip(sentence.tokens, tagged.whitespace_after):
            token.whitespace_after = int(space)
        line = tagged.lines[0] if tagged.lines else 0
        original = corpus_original(tagged.tokens, tagged.whitespace_after, line)
        units.append(Unit(f"{path}:{line}", [sentence], [original], path, len(units)))
    return units


def text_part_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The sentences of a plain-text file part by part (`flairsuite.inference.stream`; `join`: words broken at line ends
    joined), each with the line it starts on, and the bytes of the file each part covers."""
    lines, bom, count = 1, bom_bytes(checked_text_file(path)), 0
    learned = text_abbreviations(chunks(path, path), join) if segmentation == "words" else ()  # a first pass over the file
    for part in linked(text_parts(chunks(path, path), segmentation, join=join, abbreviations=learned)):
        units = []
        for sentence, original in zip(part.sentences, part_originals(part, lines)):
            units.append(Unit(f"{path}:{original.line}", [sentence], [original], path, count))
            count += 1
        lines += part.text.count("\n")
        yield units, len(part.text.encode("utf-8")) + (bom if part.start == 0 else 0)


def text_units(path: Path, text: str, segmentation: str, offset_line: int = 1, join: bool = True, offset: int = 0) -> list[Unit]:
    """The sentences of a plain text held whole (a paragraph, at character `offset` and line `offset_line` of the file),
    each with the line it starts on."""
    units: list[Unit] = []
    learned = text_abbreviations([text], join) if segmentation == "words" else ()
    for part in text_parts([text], segmentation, join=join, abbreviations=learned):
        for sentence, original in zip(part.sentences, part_originals(part, offset_line + text.count("\n", 0, part.start), offset)):
            units.append(Unit(f"{path}:{original.line}", [sentence], [original], path, len(units)))
    Sentence.set_context_for_sentences([s for unit in units for s in unit.sentences])
    return units


def file_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The sentences of one file of TEXTS (a corpus file whole, or plain text part by part), with the bytes each batch covers."""
    if path.suffix.lower() in CORPUS_SUFFIXES:
        yield corpus_units(path), path.stat().st_size
    else:
        yield from text_part_units(path, segmentation, join)


def paragraphs(path: Path) -> Iterator[tuple[int, int, int, str]]:
    """The paragraphs (text between blank lines) of a plain-text file, read block by block: (line it starts on, its
    character offset in the file, bytes covered (a BOM not counted), text); each is held whole."""
    lines, pending, consumed = 1, "", 0
    for chunk in chunks(path, path):
        pending += chunk
        cut = 0
        for found in PARAGRAPH_BREAK.finditer(pending):
            block = pending[cut : found.start()]
            yield lines + len(block) - len(block.lstrip("\n")), consumed + cut, len(pending[cut : found.end()].encode("utf-8")), block
            lines, cut = lines + pending.count("\n", cut, found.end()), found.end()
        pending, consumed = pending[cut:], consumed + cut
    yield lines + len(pending) - len(pending.lstrip("\n")), consumed, len(pending.encode("utf-8")), pending


def paragraph_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The paragraphs of a plain-text file as documents, one at a time, with the bytes each covers."""
    bom, count = bom_bytes(checked_text_file(path)), 0
    for line, offset, covered, block in paragraphs(path):
        covered, bom = covered + bom, 0
        units = text_units(path, block, segmentation, line, join, offset) if block.strip() else []
        sentences = [s for unit in units for s in unit.sentences]
        originals = [o for unit in units for o in unit.originals]
        yield ([Unit(f"{path}:{line}", sentences, originals, path, count)] if sentences else []), covered
        count += len(sentences)
