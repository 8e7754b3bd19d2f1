"""`flairsuite suggest`: the sentences a saved tagger is least sure of, pre-annotated with their context, to annotate next.

TEXTS is one file or a folder of files (read in name order). A file ending `.conll`, `.bio`, `.iob`, `.column`,
`.conllu`, `.jsonl`, `.json` or `.tsv` is read as a corpus of that format (`.tsv`: WebAnno TSV when its first line
says so, else columns; columns: token first, tag last) and its labels are ignored; any other file is plain
text, split into sentences and tokens as `predict` splits it. In a folder, only those corpus files, `.txt` files and
files without a suffix are read: the others (a TEI or HTML edition `predict` wrote beside the letters, images, ...)
are passed over and counted on stderr, so their markup is never ranked as text. A file is a letter (a document).

What is ranked (the candidates) and what is written (`--unit`):

- *Candidates*: the sentences of each file in order, a sentence of fewer than `--min-tokens` tokens (default 5: "Fz.",
  "Feld 4.10.19.") merged with the sentences after it until the group has that many, a short rest at the file's end
  joining the group before it (`Windows`); a candidate's measure is that of its tokens together (`Scores.combined`).
- `--unit sentence`: the candidate itself is written. `--unit window` (the default): the candidate with the
  `--neighbours` (default 2) sentences before and after it in its file; a candidate inside the window of one chosen
  before is passed over (it is written as context already), and the windows of one file that overlap or touch are
  written as one unit. `--unit document`: the candidates are the documents, each file of a folder or each paragraph (text
  between blank lines) of a single plain-text file, ranked by the measure over all their tokens; the document is written
  whole, its most uncertain group of sentences being the selected one.

Candidates are ranked by the model's uncertainty (`flairsuite.models.uncertainty`: for a CRF tagger 1 - p(best
path)^(1/n), for a softmax head the mean token entropy; `--measure entropy`: the mean entropy of the tag marginals),
near-duplicates kept apart (`flairsuite.models.selection`'s rule: word-set Jaccard >= 0.8 with one already chosen;
used only to fill up N), and the top N are written with the model's tags (the Viterbi / arg-max tags, as `predict`
gives them) in an annotation tool's import format. Every format writes the file's own characters: a unit's text runs
from its first token to its last as the file has it (spacing, line breaks and quotes kept; a corpus file's text is its
tokens joined by their recorded spacing, a sentence a line), and its tokens are Flair's at their offsets in that text (a
word joined across a line end as the pieces of its lines, as `predict` writes it). `column` (token TAB tag) and `conll`
write the tokens; `webanno` all units as one document (INCEpTION imports a file as one), the units' texts in rank order
separated by a blank line, each sentence's `#Text=` its characters in the file and offsets into that document;
`jsonl` (doccano) a line per unit and `labelstudio` a task per unit, each with a `meta` object: the file, the line,
the unit's character offsets in the file (`start`, `end`; None for a corpus file), the selected sentences' offsets in
the unit's text (`selected`), their ranks and measures. The same list for every format goes to the side file
`selection` of `Suggestion` (the command writes it beside `--out` as `NAME.selection.json`), with each unit's offset
in the written document (`text_start`; webanno's one document, 0 elsewhere): WebAnno TSV has no place for it that
INCEpTION imports.

Plain texts are read as `predict` reads them (`flairsuite.inference.stream`): in parts of about 100,000 characters cut
at sentence ends, each part scored before the next is read. Of the candidates only a bounded pool is kept (`Pool`):
per set of words the most uncertain candidate, of these the `POOL_FACTOR` * N most uncertain (at least `MIN_POOL`), and
N of the others (exact repeats of a kept candidate's words, which the near-duplicate rule only uses to fill up); each
holds the sentences it would write (its window), as their text, tokens, tags and scores. So a letter formula repeated
ten thousand times holds one place; the choice differs from that over all candidates only where more than the pool's
sets of words are needed to find N that are not near-duplicates of each other. A document is held whole while it is
scored. A progress bar in bytes of TEXTS goes to stderr.

As in `predict`, a plain text's words broken at a line end are joined before tagging (`flairsuite.corpora.line_ends`:
the unit holds "Berlin" for "Ber-\nlin", its `file:line` is where it starts in the file; `join` false,
`--keep-line-ends`: not), and the written tags go through the reader rules (`flairsuite.inference.reader_spans`:
spans trimmed of punctuation tokens, punctuation-only spans and spans across a line break of the file dropped, counted
in the summary line; `reader_spans` false, `--keep-raw-spans`: not). Ranking reads the model's own tags.
"""

import heapq
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import torch
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.stream import Part, link, linked, text_abbreviations, text_parts
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger, Layout, torch_threads
from flairsuite.inference.textfile import BOM, TextInfo, chunks, progress, scan
from flairsuite.markup.annotated import Annotated
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS, annotation_text
from flairsuite.markup.labelstudio import labelstudio_task
from flairsuite.markup.spans import Span
from flairsuite.markup.webanno_writer import one_document
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import emissions
from flairsuite.models.selection import NEAR_DUPLICATE, jaccard, ranked, word_set
from flairsuite.models.uncertainty import MEASURES, Scores, check_supported, scores_from_emissions
from flairsuite.predict import load_tagger, pieces, predicts_spans

FORMATS = ("column", *ANNOTATION_FORMATS)
UNITS = ("sentence", "window", "document")
NEIGHBOURS = 2  # sentences on each side of a candidate that `--unit window` writes
MIN_TOKENS = 5  # a candidate's tokens at least: shorter sentences are merged with the following ones
UNIT_SEPARATOR = "\n\n"  # between the units' texts in webanno's one document
COLUMN_SUFFIXES = (".conll", ".bio", ".iob", ".column")
CORPUS_SUFFIXES = (*COLUMN_SUFFIXES, ".conllu", ".jsonl", ".json", ".tsv")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
TEXT_SUFFIXES = (".txt", "")  # what a folder's plain-text files end with
POOL_FACTOR = 20  # candidates kept for the near-duplicate rule: POOL_FACTOR * N, at least MIN_POOL
MIN_POOL = 1000
PREVIEW_CHARS = 80  # characters of a candidate's text in the ranking
log = logging.getLogger("flairsuite")


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


def folder_files(folder: Path) -> list[Path]:
    """The files of a folder that `suggest` reads (module docstring), in name order; the others are counted on stderr."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    kept = [p for p in found if p.suffix.lower() in (*CORPUS_SUFFIXES, *TEXT_SUFFIXES)]
    skipped = Counter(p.suffix.lower() for p in found if p not in kept)
    if skipped:
        kinds = ", ".join(f"{count} {suffix}" for suffix, count in sorted(skipped.items()))
        log.warning(f"{folder}: passed over {sum(skipped.values())} files that are neither text nor a corpus ({kinds})")
    return kept


def texts_files(texts: Path, unit: str) -> list[Path]:
    """The files of TEXTS to read; a missing TEXTS, or --unit document on one corpus file, is a one-line error."""
    if not texts.exists():
        raise FlairsuiteError(f"{texts}: no such file or folder")
    if unit == "document" and not texts.is_dir() and texts.suffix.lower() in CORPUS_SUFFIXES:
        raise InputError(texts, None, "--unit document needs a folder of files (a document each) or a plain text (a document a paragraph)")
    return folder_files(texts) if texts.is_dir() else [texts]


def unit_batches(texts: Path, files: list[Path], unit: str, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The units of TEXTS batch by batch, with the bytes of TEXTS each batch covers: sentences (`unit` sentence or window),
    or documents (module docstring)."""
    if unit == "document" and not texts.is_dir():
        yield from paragraph_units(texts, segmentation, join)
        return
    for path in files:
        if unit != "document":
            yield from file_units(path, segmentation, join)
            continue
        sentences, covered, originals = [], 0, []
        for units, size in file_units(path, segmentation, join):
            sentences.extend(s for u in units for s in u.sentences)
            originals.extend(o for u in units for o in u.originals)
            covered += size
        if path.suffix.lower() not in CORPUS_SUFFIXES:  # a text is one document: linked throughout, as its parts were while read
            for before, after in zip(sentences, sentences[1:]):
                link(before, after)
        yield ([Unit(f"{path}:1", sentences, originals, path)] if sentences else []), covered


def read_units(texts: Path, unit: str, segmentation: str, join: bool = True) -> list[Unit]:
    """All the units of TEXTS (module docstring) in one list; no text at all is a one-line error naming it."""
    found = [u for units, _ in unit_batches(texts, texts_files(texts, unit), unit, segmentation, join) for u in units]
    if not found:
        raise InputError(texts, None, "no sentences to rank")
    return found


class Scorer:
    """The uncertainty `Scores` of sentences: embeddings and emissions by `FastTagger`'s pieces (built once), the measures in float64."""

    def __init__(self, model: torch.nn.Module, batch_size: int = BATCH_SIZE) -> None:
        self.model = model
        self.tagger = FastTagger(model, batch_size=batch_size)

    def emitted(self, chosen: list[Sentence], pool: ThreadPoolExecutor) -> torch.Tensor:
        """The emission scores of a batch (a normal tensor: the forward-backward marginals need autograd)."""
        lengths = [len(s) for s in chosen]
        with torch.inference_mode():
            embedded = torch.cat([featurizer(chosen).to(self.tagger.device) for featurizer in self.tagger.featurizers], dim=1)
            layout = Layout(lengths, embedded.device)
            if self.tagger.head is not None:
                found = self.tagger.head.emissions(embedded, layout, pool)
            else:
                found = emissions(self.model, layout.batch_major(embedded), torch.tensor(lengths))
        return found.clone()

    def __call__(self, sentences: list[Sentence]) -> list[Scores]:
        found: list[Optional[Scores]] = [None] * len(sentences)
        budget = torch.get_num_threads()
        with torch_threads(max(budget // 2, 1)), ThreadPoolExecutor(min(2, budget)) as pool:
            for batch in self.tagger.batches(sentences):
                chosen = [sentences[i] for i in batch]
                lengths = torch.tensor([len(s) for s in chosen])
                for index, scores in zip(batch, scores_from_emissions(self.model, self.emitted(chosen, pool), lengths)):
                    found[index] = scores
        return found  # type: ignore[return-value]


def sentence_scores(model: torch.nn.Module, sentences: list[Sentence], batch_size: int = BATCH_SIZE) -> list[Scores]:
    """The uncertainty `Scores` of every sentence (`Scorer`)."""
    return Scorer(model, batch_size)(sentences)


@dataclass(frozen=True)
class Scored:
    """A scored sentence as a candidate holds it: its file and place among the file's sentences, the file's characters
    (`Original`), its tokens as tagged, its text as Flair shows it (the ranking's preview) and the model's scores."""

    path: str
    index: int
    original: Original
    words: tuple[str, ...]
    flat: str
    scores: Scores

    def gaps(self) -> list[str]:
        """The file's characters between each two of its tokens."""
        text, tokens = self.original.text, self.original.tokens
        return [text[end:start] for (_, end), (start, _) in zip(tokens, tokens[1:])]


def scored(unit: Unit, scores: Sequence[Scores]) -> list[Scored]:
    """The unit's sentences with their scores."""
    return [Scored(str(unit.path), unit.first + i, original, tuple(token.text for token in sentence), sentence.to_original_text(), found)
            for i, (sentence, original, found) in enumerate(zip(unit.sentences, unit.originals, scores))]


@dataclass(frozen=True)
class Candidate:
    """A candidate as the pool keeps it: its place in TEXTS, source (`file:line`), the tokens and scores of its sentences,
    measure and preview; `context`, the sentences written for it (itself, its window, or its whole document), and
    `selected`, the places of its own first and last sentence in its file."""

    index: int
    source: str
    tokens: list[list[str]]
    scores: list[Scores]
    value: float
    preview: str
    context: tuple[Scored, ...] = ()
    selected: tuple[int, int] = (0, 0)

    @staticmethod
    def of(index: int, source: str, group: Sequence[Scored], measure: str, context: Sequence[Scored] = (),
           selected: Optional[Sequence[Scored]] = None) -> "Candidate":
        """The candidate of the sentences `group` (ranked by their measure together), written with `context`; `selected`:
        the sentences it marks (default: `group`)."""
        scores = [found.scores for found in group]
        preview = ""
        for found in group:
            preview += (" " if preview else "") + found.flat
            if len(preview) >= PREVIEW_CHARS:
                break
        marked = selected if selected is not None else group
        return Candidate(index, source, [list(found.words) for found in group], scores, Scores.combined(scores).measure(measure),
                         preview[:PREVIEW_CHARS], tuple(context) or tuple(group), (marked[0].index, marked[-1].index))

    @property
    def path(self) -> Optional[str]:
        return self.context[0].path if self.context else None

    @property
    def written(self) -> tuple[int, int]:
        """The places of the first and last sentence it writes in its file."""
        return (self.context[0].index, self.context[-1].index) if self.context else self.selected


class Windows:
    """The candidates of one file's sentences as they are scored (`add`, then `finish`): sentences of fewer than
    `min_tokens` tokens merged with the following ones (a short rest at the file's end with the group before it), each
    group with the `neighbours` sentences before and after it, held until those are read."""

    def __init__(self, path: str, min_tokens: int, neighbours: int) -> None:
        self.path, self.min_tokens, self.neighbours = path, min_tokens, neighbours
        self.held: list[Scored] = []  # the recent sentences: the groups not handed on yet and their neighbours
        self.group: list[Scored] = []  # the group being filled
        self.last: Optional[list[Scored]] = None  # the last full group, which a short rest at the file's end joins
        self.ready: list[list[Scored]] = []  # full groups waiting for the sentences after them

    def add(self, found: Sequence[Scored]) -> list[tuple[list[Scored], list[Scored]]]:
        """The (group, window) pairs complete once `found`, the next sentences of the file, are read."""
        done = []
        for sentence in found:
            self.held.append(sentence)
            self.group.append(sentence)
            if sum(len(s.words) for s in self.group) >= self.min_tokens:
                if self.last is not None:
                    self.ready.append(self.last)
                self.last, self.group = self.group, []
            done.extend(self.release(final=False))
        return done

    def finish(self) -> list[tuple[list[Scored], list[Scored]]]:
        """The pairs left at the file's end."""
        rest = (self.last or []) + self.group
        self.last, self.group = None, []
        if rest:
            self.ready.append(rest)
        return self.release(final=True)

    def release(self, final: bool) -> list[tuple[list[Scored], list[Scored]]]:
        newest = self.held[-1].index if self.held else -1
        done = []
        while self.ready and (final or self.ready[0][-1].index + self.neighbours <= newest):
            group = self.ready.pop(0)
            first, last = group[0].index - self.neighbours, group[-1].index + self.neighbours
            done.append((group, [s for s in self.held if first <= s.index <= last]))
        waiting = self.ready[0] if self.ready else (self.last or self.group)
        keep = (waiting[0].index if waiting else newest + 1) - self.neighbours
        self.held = [s for s in self.held if s.index >= keep]
        return done


def document_candidate(index: int, unit: Unit, found: list[Scored], measure: str, min_tokens: int) -> Candidate:
    """A document as a candidate: ranked by its measure over all its tokens, written whole, its most uncertain group of
    sentences (merged as `Windows` merges them) the selected one."""
    windows = Windows(unit.source, min_tokens, 0)
    groups = [group for group, _ in [*windows.add(found), *windows.finish()]]
    best = max(groups, key=lambda group: Scores.combined([s.scores for s in group]).measure(measure))
    return Candidate.of(index, unit.source, found, measure, found, best)


class Pool:
    """The candidates `pick` may need, bounded: per set of words (`word_set`) the most uncertain candidate (ties: the
    earlier), at most `size` of these sets (the most uncertain), and the `fill` best of the others. A candidate whose
    word set an earlier-ranked one has is a near-duplicate of it (Jaccard 1) and is only ever picked to fill up the top
    N, so keeping N of them loses nothing; only the sets beyond `size` are left out. `seen` counts all candidates."""

    def __init__(self, size: int, fill: int) -> None:
        self.size, self.fill = size, fill
        self.seen = 0
        self.best: dict[frozenset[str], Candidate] = {}
        self.heap: list[tuple[tuple[float, int], frozenset[str], Candidate]] = []  # entries of `best`, the least uncertain at the root
        self.others: list[tuple[tuple[float, int], Candidate]] = []  # the `fill` best near-duplicates, the least uncertain at the root

    @staticmethod
    def rank(candidate: Candidate) -> tuple[float, int]:
        """Higher for a candidate ranked earlier: the more uncertain, then the earlier in TEXTS."""
        return candidate.value, -candidate.index

    def add(self, candidate: Candidate) -> None:
        self.seen += 1
        words = word_set([token for tokens in candidate.tokens for token in tokens])
        held = self.best.get(words)
        if held is not None and self.rank(held) >= self.rank(candidate):
            return self.keep_other(candidate)
        if held is not None:
            self.keep_other(held)
        elif len(self.best) >= self.size:
            while self.best.get(self.heap[0][1]) is not self.heap[0][2]:  # entries of candidates replaced since
                heapq.heappop(self.heap)
            if self.heap[0][0] >= self.rank(candidate):
                return None
            del self.best[heapq.heappop(self.heap)[1]]
        self.best[words] = candidate
        heapq.heappush(self.heap, (self.rank(candidate), words, candidate))
        if len(self.heap) > 2 * self.size:
            self.heap = [(self.rank(kept), kept_words, kept) for kept_words, kept in self.best.items()]
            heapq.heapify(self.heap)
        return None

    def keep_other(self, candidate: Candidate) -> None:
        """Keep a near-duplicate if it is among the `fill` best of them."""
        entry = (self.rank(candidate), candidate)
        if len(self.others) < self.fill:
            heapq.heappush(self.others, entry)
        elif entry[0] > self.others[0][0]:
            heapq.heapreplace(self.others, entry)

    def candidates(self) -> list[Candidate]:
        """The kept candidates in the order they were read."""
        return sorted([*self.best.values(), *(entry[1] for entry in self.others)], key=lambda candidate: candidate.index)


def scored_pool(model: torch.nn.Module, texts: Path, n: int, unit: str, measure: str, batch_size: Optional[int], join: bool = True,
                neighbours: int = NEIGHBOURS, min_tokens: int = MIN_TOKENS) -> Pool:
    """TEXTS read and scored batch by batch, the most uncertain candidates kept (module docstring; `join`: words broken at line
    ends joined); no candidates: a one-line error."""
    files = texts_files(texts, unit)
    scorer = Scorer(model, batch_size or BATCH_SIZE)
    pool = Pool(max(POOL_FACTOR * n, MIN_POOL), n)
    windows: Optional[Windows] = None
    with progress(sum(path.stat().st_size for path in files), "suggest") as bar:
        for units, covered in unit_batches(texts, files, unit, model_segmentation(model), join):
            flat = scorer([s for u in units for s in u.sentences]) if units else []
            position = 0
            for found in units:
                sentences = scored(found, flat[position : position + len(found.sentences)])
                position += len(found.sentences)
                if unit == "document":
                    pool.add(document_candidate(pool.seen, found, sentences, measure, min_tokens))
                    continue
                if windows is None or windows.path != str(found.path):
                    add_windows(pool, windows, [], measure)
                    windows = Windows(str(found.path), min_tokens, neighbours if unit == "window" else 0)
                add_windows(pool, windows, sentences, measure)
            bar.update(covered)
        add_windows(pool, windows, [], measure)
    if not pool.seen:
        raise InputError(texts, None, "no sentences to rank")
    return pool


def add_windows(pool: "Pool", windows: Optional[Windows], sentences: list[Scored], measure: str) -> None:
    """The candidates `sentences` complete into the pool; no sentences: the file's end (the rest goes in)."""
    if windows is None:
        return
    for group, context in windows.add(sentences) if sentences else windows.finish():
        pool.add(Candidate.of(pool.seen, f"{group[0].path}:{group[0].original.line}", group, measure, context))


def choose(candidates: Sequence[Candidate], order: Sequence[int], n: int) -> tuple[list[int], int, int]:
    """The first `n` of `order` (indices into `candidates`) by the near-duplicate rule of `flairsuite.models.selection.pick`
    (a candidate whose word set has a Jaccard similarity of at least NEAR_DUPLICATE with one chosen before is skipped, and
    used only to fill up), passing over a candidate that lies inside what one chosen before writes (its window); with the
    numbers of near-duplicates and of candidates inside a chosen window passed over."""
    chosen: list[int] = []
    sets: list[frozenset[str]] = []
    written: dict[Optional[str], list[tuple[int, int]]] = {}
    skipped, inside = [], 0

    def within(candidate: Candidate) -> bool:
        first, last = candidate.selected
        return candidate.path is not None and any(a <= first and last <= b for a, b in written.get(candidate.path, []))

    def take(index: int, words: frozenset[str]) -> None:
        chosen.append(index)
        sets.append(words)
        if candidates[index].path is not None:
            written.setdefault(candidates[index].path, []).append(candidates[index].written)

    for index in order:
        if len(chosen) == n:
            break
        candidate = candidates[index]
        words = word_set([token for tokens in candidate.tokens for token in tokens])
        if within(candidate):
            inside += 1
        elif any(jaccard(words, other) >= NEAR_DUPLICATE for other in sets):
            skipped.append((index, words))
        else:
            take(index, words)
    filled = 0
    for index, words in skipped:
        if len(chosen) < n and not within(candidates[index]):
            take(index, words)
            filled += 1
    return chosen, len(skipped) - filled, inside


@dataclass(frozen=True)
class Suggestion:
    """What `suggest` writes (`text`), the ranking it prints, its numbers, and the list of what was written where (`selection`)."""

    text: str
    ranking: str
    units: int  # candidates ranked
    chosen: int
    passed_over: int  # near-duplicates skipped on the way to the top N
    rules: str = ""  # what the reader rules did to the written tags (`flairsuite.inference.reader_spans.summary`)
    inside: int = 0  # candidates passed over inside the window of one chosen before
    written: int = 0  # units written (windows of one file that overlap or touch are one)
    sentences: int = 0
    tokens: int = 0
    selection: dict[str, Any] = field(default_factory=dict)

    def summary(self, measure: str, unit: str, seconds: float) -> str:
        kind = "documents" if unit == "document" else "sentences"
        inside = f" and {self.inside:,} inside a chosen window" if self.inside else ""
        return (f"ranked {self.units:,} {kind} by {measure}; chose {self.chosen:,}, passing over {self.passed_over:,} near-duplicates{inside}, "
                f"in {seconds:.1f} s; wrote {self.written:,} {unit}s ({self.sentences:,} sentences, {self.tokens:,} tokens){self.rules}")


def token_spans(tags: Sequence[tuple[str, float]]) -> list[tuple[int, int, str, float]]:
    """The spans of a sentence's BIO tags as (first token, token after the last, type, mean confidence), as Flair reads them."""
    return [(indices[0], indices[-1] + 1, kind, confidence)
            for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags])]


def written_units(chosen: Sequence[Candidate], join: bool = True) -> list[list[Candidate]]:
    """The chosen candidates (in rank order) grouped into the units written: with `join` (windows), those of one file whose
    sentences overlap or touch are one unit; the units in the order of their best-ranked candidate."""
    units: list[list[Candidate]] = []
    for candidate in chosen:
        first, last = candidate.written
        touching = [unit for unit in units if join and candidate.path is not None and unit[0].path == candidate.path
                    and first <= max(c.written[1] for c in unit) + 1 and last + 1 >= min(c.written[0] for c in unit)]
        if not touching:
            units.append([candidate])
            continue
        touching[0].append(candidate)
        for other in touching[1:]:
            touching[0].extend(other)
            units.remove(other)
    return units


def unit_document(sentences: Sequence[Scored], rules: ReaderRules) -> tuple[Annotated, list[int], list[list[tuple[str, float]]]]:
    """A unit's text (its file's characters from the first sentence's first token to the last one's last), its tokens and
    the spans of its tags through the reader `rules`; where each sentence starts in the text; the tags."""
    text, starts = "", []
    for position, sentence in enumerate(sentences):
        text += sentence.original.lead if position else ""
        starts.append(len(text))
        text += sentence.original.text if position + 1 < len(sentences) else sentence.original.text[: sentence.original.end]
    offsets, spans, tagged = [], [], []
    for sentence, start in zip(sentences, starts):
        tags = rules.apply_words([sentence.scores.tags], [sentence.words], [sentence.gaps()])[0]
        tokens = [(start + a, start + b) for a, b in sentence.original.tokens]
        offsets.append([piece for token in tokens for piece in pieces(text, *token)])
        spans.extend(Span(tokens[first][0], tokens[after - 1][1], kind, confidence) for first, after, kind, confidence in token_spans(tags))
        tagged.append(tags)
    return Annotated(text, offsets, spans), starts, tagged


def unit_meta(members: Sequence[Candidate], sentences: Sequence[Scored], starts: Sequence[int], text: str, ranks: dict[int, int],
              measure: str) -> dict[str, Any]:
    """Where a written unit comes from: its file, line and character offsets there (None for a corpus file), and per selected
    candidate its rank, measure, line, offsets in the file and in the unit's text (`in_unit`)."""
    place = {sentence.index: position for position, sentence in enumerate(sentences)}
    origin = sentences[0].original.start
    selected = []
    for candidate in sorted(members, key=lambda c: ranks[c.index]):
        first, last = place[candidate.selected[0]], place[candidate.selected[1]]
        begin, end = starts[first], starts[last] + sentences[last].original.end
        selected.append({"rank": ranks[candidate.index], measure: round(candidate.value, 4), "line": sentences[first].original.line,
                         "start": None if origin is None else origin + begin, "end": None if origin is None else origin + end, "in_unit": [begin, end]})
    return {"file": sentences[0].path, "line": sentences[0].original.line, "start": origin,
            "end": None if origin is None else origin + len(text), "selected": selected}


def formatted(documents: list[Annotated], metas: list[dict[str, Any]], rows: list[tuple[list[Scored], list[Any]]], fmt: str,
              model_version: str) -> str:
    """The written units in `fmt` (module docstring)."""
    if fmt == "column":
        blocks = ["\n".join(f"{word}\t{tag}" for word, (tag, _) in zip(sentence.words, tags))
                  for sentences, tagged in rows for sentence, tags in zip(sentences, tagged)]
        return "\n\n".join(blocks) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps({"text": document.text, "label": [[s.start, s.end, s.type] for s in document.spans], "meta": meta},
                                  ensure_ascii=False) + "\n" for document, meta in zip(documents, metas))
    if fmt == "labelstudio":
        tasks = [{**labelstudio_task(document, model_version), "meta": meta} for document, meta in zip(documents, metas)]
        return json.dumps(tasks, ensure_ascii=False, indent=1) + "\n"
    if fmt == "webanno":  # one document per file, as INCEpTION imports it
        documents = [one_document(documents, UNIT_SEPARATOR)]
    return annotation_text(documents, fmt, model_version)


def write_units(chosen: Sequence[Candidate], fmt: str, model_version: str, measure: str, rules: Optional[ReaderRules] = None,
                join: bool = True) -> tuple[str, list[dict[str, Any]], int, int]:
    """The chosen candidates (in rank order) written as units in `fmt`, their tags through the reader `rules` when given
    (`join`: windows that overlap or touch written as one); the list of the units written (`unit_meta`, with each one's
    place in the output), and their sentences and tokens."""
    rules = rules or ReaderRules(False)
    ranks = {candidate.index: rank for rank, candidate in enumerate(chosen, 1)}
    documents, metas, rows = [], [], []
    for members in written_units(chosen, join):
        sentences = sorted({s.index: s for candidate in members for s in candidate.context}.values(), key=lambda s: s.index)
        document, starts, tagged = unit_document(sentences, rules)
        documents.append(document)
        metas.append(unit_meta(members, sentences, starts, document.text, ranks, measure))
        rows.append((sentences, tagged))
    listed, position = [], 0
    for number, (document, meta) in enumerate(zip(documents, metas)):
        listed.append({"position": number, "text_start": position if fmt == "webanno" else 0, **meta})
        position += len(document.text) + len(UNIT_SEPARATOR)
    text = formatted(documents, metas, rows, fmt, model_version)
    return text, listed, sum(len(sentences) for sentences, _ in rows), sum(len(s.words) for sentences, _ in rows for s in sentences)


def suggest(model_path: Path, texts: Path, n: int, fmt: str, unit: str = "window", measure: str = "uncertainty",
            batch_size: Optional[int] = None, join_lines: bool = True, reader_spans: bool = True, neighbours: int = NEIGHBOURS,
            min_tokens: int = MIN_TOKENS) -> Suggestion:
    """The top `n` candidates of `texts` by `measure` of the model at `model_path`, written as `unit`s pre-annotated in `fmt`
    (module docstring; `join_lines`: words broken at line ends joined, `reader_spans`: the reader rules applied to the
    written tags; `neighbours`: a window's sentences on each side; `min_tokens`: shorter sentences are merged)."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if measure not in MEASURES:
        raise FlairsuiteError(f"unknown measure '{measure}' (known: {', '.join(MEASURES)})")
    if unit not in UNITS:
        raise FlairsuiteError(f"unknown unit '{unit}' (known: {', '.join(UNITS)})")
    model = load_tagger(model_path)
    check_supported(model, str(model_path))
    pool = scored_pool(model, texts, n, unit, measure, batch_size, join_lines, neighbours, max(min_tokens, 1))
    candidates = pool.candidates()
    chosen, passed, inside = choose(candidates, ranked([c.value for c in candidates]), n)
    lines = ["rank\t" + measure + "\tsource\ttext"]
    for rank, index in enumerate(chosen, 1):
        lines.append(f"{rank}\t{candidates[index].value:.4f}\t{candidates[index].source}\t{candidates[index].preview}")
    rules = ReaderRules(reader_spans and predicts_spans(model))
    text, listed, sentences, tokens = write_units([candidates[i] for i in chosen], fmt, model_path.name, measure, rules, unit == "window")
    selection = {"model": str(model_path), "measure": measure, "unit": unit, "neighbours": neighbours if unit == "window" else 0,
                 "min_tokens": min_tokens, "format": fmt, "units": listed}
    return Suggestion(text, "\n".join(lines) + "\n", pool.seen, len(chosen), passed, rules.summary(), inside, len(listed), sentences, tokens,
                      selection)
