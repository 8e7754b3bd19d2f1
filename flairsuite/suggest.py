"""`flairsuite suggest`: the sentences (or documents) a saved tagger is least sure of, pre-annotated, to annotate next.

TEXTS is one file or a folder of files (read in name order). A file ending `.conll`, `.bio`, `.iob`, `.column`,
`.conllu`, `.jsonl`, `.json` or `.tsv` is read as a corpus of that format (`.tsv`: WebAnno TSV when its first line
says so, else columns; columns: token first, tag last) and its labels are ignored; any other file is plain
text, split into sentences and tokens as `predict` splits it. In a folder, only those corpus files, `.txt` files and
files without a suffix are read: the others (a TEI or HTML edition `predict` wrote beside the letters, images, ...)
are passed over and counted on stderr, so their markup is never ranked as text. A unit is a sentence, or with `--unit document`
a document: each file of a folder, or each paragraph (text between blank lines) of a single plain-text file.

Units are ranked by the model's uncertainty (`flairsuite.models.uncertainty`: for a CRF tagger 1 - p(best
path)^(1/n), for a softmax head the mean token entropy; `--measure entropy`: the mean entropy of the tag
marginals), near-duplicates kept apart (`flairsuite.models.selection`: word-set Jaccard >= 0.8 with a unit
already chosen), and the top N are written with the model's tags (the Viterbi / arg-max tags, as `predict` gives
them) in an annotation tool's import format: `column` (token TAB tag), or `flairsuite.markup`'s `webanno` (all
units in one document), `jsonl` (doccano, a line per unit), `labelstudio`, `conll`.

Plain texts are read as `predict` reads them (`flairsuite.inference.stream`): in parts of about 100,000 characters cut
at sentence ends, each part scored before the next is read, so a sentence unit is held only while its part is scored.
Of the scored units only a bounded pool is kept (`Pool`), as token texts, tags and scores: per set of words the most
uncertain unit, of these the `POOL_FACTOR` * N most uncertain (at least `MIN_POOL`), and N of the others (exact
repeats of a kept unit's words, which the near-duplicate rule only uses to fill up); `pick` chooses the top N from the
pool. So a letter formula repeated ten thousand times holds one place; the choice differs from that over all units only
where more than the pool's sets of words are needed to find N units that are not near-duplicates of each other.
A document unit is held whole while it is scored. A progress bar in bytes of TEXTS goes to stderr.

As in `predict`, a plain text's words broken at a line end are joined before tagging (`flairsuite.corpora.line_ends`:
the unit holds "Berlin" for "Ber-\nlin", its `file:line` is where it starts in the file; `join` false,
`--keep-line-ends`: not), and the written tags go through the reader rules (`flairsuite.inference.reader_spans`:
spans trimmed of punctuation tokens, punctuation-only spans and spans across a line break of the file dropped, counted
in the summary line; `reader_spans` false, `--keep-raw-spans`: not). Ranking reads the model's own tags.
"""

import heapq
import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.reader_spans import ReaderRules, words_and_gaps
from flairsuite.inference.stream import link, linked, text_abbreviations, text_parts
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger, Layout, torch_threads
from flairsuite.inference.textfile import BOM, TextInfo, chunks, progress, scan
from flairsuite.markup.annotated import from_tokens
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS, annotation_text
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import emissions
from flairsuite.models.selection import pick, ranked, word_set
from flairsuite.models.uncertainty import MEASURES, Scores, check_supported, scores_from_emissions
from flairsuite.predict import load_tagger, predicts_spans

FORMATS = ("column", *ANNOTATION_FORMATS)
UNITS = ("sentence", "document")
COLUMN_SUFFIXES = (".conll", ".bio", ".iob", ".column")
CORPUS_SUFFIXES = (*COLUMN_SUFFIXES, ".conllu", ".jsonl", ".json", ".tsv")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
TEXT_SUFFIXES = (".txt", "")  # what a folder's plain-text files end with
POOL_FACTOR = 20  # units kept for the near-duplicate rule: POOL_FACTOR * N, at least MIN_POOL
MIN_POOL = 1000
PREVIEW_CHARS = 80  # characters of a unit's text in the ranking
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
class Unit:
    """A sentence or a document of TEXTS: where it starts (`file:line`), its sentences and, for a plain text, per sentence
    the file's text between each two tokens (None: a corpus file, whose tokens have no line breaks between them)."""

    source: str
    sentences: list[Sentence]
    gaps: Optional[list[list[str]]] = None


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
    units = []
    for tagged in read_tagged(path, corpus_format(path), "utf-8", Counter()):
        if not tagged.tokens:
            continue
        sentence = Sentence(list(tagged.tokens))
        for token, space in zip(sentence.tokens, tagged.whitespace_after):
            token.whitespace_after = int(space)
        line = tagged.lines[0] if tagged.lines else 0
        units.append(Unit(f"{path}:{line}", [sentence]))
    return units


def text_part_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The sentences of a plain-text file part by part (`flairsuite.inference.stream`; `join`: words broken at line ends
    joined), each with the line it starts on, and the bytes of the file each part covers."""
    lines, bom = 1, bom_bytes(checked_text_file(path))
    learned = text_abbreviations(chunks(path, path), join) if segmentation == "words" else ()  # a first pass over the file
    for part in linked(text_parts(chunks(path, path), segmentation, join=join, abbreviations=learned)):
        units = []
        for sentence in part.sentences:
            start = part.local(sentence.start_position, sentence.start_position + 1)[0]
            gaps = words_and_gaps(sentence, part.text, part.local)[1]
            units.append(Unit(f"{path}:{lines + part.text.count(chr(10), 0, start)}", [sentence], [gaps]))
        lines += part.text.count("\n")
        yield units, len(part.text.encode("utf-8")) + (bom if part.start == 0 else 0)


def text_units(path: Path, text: str, segmentation: str, offset_line: int = 1, join: bool = True) -> list[Unit]:
    """The sentences of a plain text held whole (a paragraph), each with the line it starts on."""
    units = []
    learned = text_abbreviations([text], join) if segmentation == "words" else ()
    for part in text_parts([text], segmentation, join=join, abbreviations=learned):
        for sentence in part.sentences:
            start = part.original(sentence.start_position, sentence.start_position + 1)[0]
            gaps = words_and_gaps(sentence, part.text, part.local)[1]
            units.append(Unit(f"{path}:{offset_line + text.count(chr(10), 0, start)}", [sentence], [gaps]))
    Sentence.set_context_for_sentences([s for unit in units for s in unit.sentences])
    return units


def file_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The sentences of one file of TEXTS (a corpus file whole, or plain text part by part), with the bytes each batch covers."""
    if path.suffix.lower() in CORPUS_SUFFIXES:
        yield corpus_units(path), path.stat().st_size
    else:
        yield from text_part_units(path, segmentation, join)


def paragraphs(path: Path) -> Iterator[tuple[int, int, str]]:
    """The paragraphs (text between blank lines) of a plain-text file, read block by block: (line it starts on, bytes covered
    (a BOM not counted), text); each is held whole."""
    lines, pending = 1, ""
    for chunk in chunks(path, path):
        pending += chunk
        cut = 0
        for found in PARAGRAPH_BREAK.finditer(pending):
            block = pending[cut : found.start()]
            yield lines + len(block) - len(block.lstrip("\n")), len(pending[cut : found.end()].encode("utf-8")), block
            lines, cut = lines + pending.count("\n", cut, found.end()), found.end()
        pending = pending[cut:]
    yield lines + len(pending) - len(pending.lstrip("\n")), len(pending.encode("utf-8")), pending


def paragraph_units(path: Path, segmentation: str, join: bool = True) -> Iterator[tuple[list[Unit], int]]:
    """The paragraphs of a plain-text file as documents, one at a time, with the bytes each covers."""
    bom = bom_bytes(checked_text_file(path))
    for line, covered, block in paragraphs(path):
        covered, bom = covered + bom, 0
        units = text_units(path, block, segmentation, line, join) if block.strip() else []
        sentences = [s for unit in units for s in unit.sentences]
        yield ([Unit(f"{path}:{line}", sentences, unit_gaps(units))] if sentences else []), covered


def unit_gaps(units: list[Unit]) -> Optional[list[list[str]]]:
    """The gaps of the units' sentences, in order, as one unit holds them (None where a unit has none: a corpus file's)."""
    if any(unit.gaps is None for unit in units):
        return None
    return [gaps for unit in units for gaps in unit.gaps or []]


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
    """The units of TEXTS (module docstring) batch by batch, with the bytes of TEXTS each batch covers."""
    if unit == "document" and not texts.is_dir():
        yield from paragraph_units(texts, segmentation, join)
        return
    for path in files:
        if unit == "sentence":
            yield from file_units(path, segmentation, join)
            continue
        sentences, covered, read = [], 0, []
        for units, size in file_units(path, segmentation, join):
            sentences.extend(s for u in units for s in u.sentences)
            read.extend(units)
            covered += size
        if path.suffix.lower() not in CORPUS_SUFFIXES:  # a text is one document: linked throughout, as its parts were while read
            for before, after in zip(sentences, sentences[1:]):
                link(before, after)
        yield ([Unit(f"{path}:1", sentences, unit_gaps(read))] if sentences else []), covered


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
class Candidate:
    """A scored unit as the pool keeps it: its place in TEXTS, source, tokens and scores per sentence, measure and preview."""

    index: int
    source: str
    tokens: list[list[str]]
    scores: list[Scores]
    value: float
    preview: str
    gaps: Optional[list[list[str]]] = None  # the unit's (`Unit.gaps`)

    def tags(self, rules: Optional[ReaderRules] = None) -> list[list[tuple[str, float]]]:
        """Its sentences' tags, through the reader `rules` when given (a corpus file's tokens: one space between each two)."""
        tagged = [scores.tags for scores in self.scores]
        if rules is None:
            return tagged
        gaps = self.gaps if self.gaps is not None else [[" "] * (len(tokens) - 1) for tokens in self.tokens]
        return rules.apply_words(tagged, self.tokens, gaps)

    @staticmethod
    def of(index: int, unit: Unit, scores: list[Scores], measure: str) -> "Candidate":
        tokens = [[token.text for token in sentence] for sentence in unit.sentences]
        preview = ""
        for sentence in unit.sentences:
            preview += (" " if preview else "") + sentence.to_original_text()
            if len(preview) >= PREVIEW_CHARS:
                break
        return Candidate(index, unit.source, tokens, scores, Scores.combined(scores).measure(measure), preview[:PREVIEW_CHARS], unit.gaps)


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


@dataclass(frozen=True)
class Suggestion:
    """What `suggest` writes (`text`), the ranking it prints, and its numbers."""

    text: str
    ranking: str
    units: int
    chosen: int
    passed_over: int  # near-duplicates skipped on the way to the top N
    rules: str = ""  # what the reader rules did to the written tags (`flairsuite.inference.reader_spans.summary`)

    def summary(self, measure: str, unit: str, seconds: float) -> str:
        return (f"ranked {self.units:,} {unit}s by {measure}; chose {self.chosen:,}, passing over {self.passed_over:,} near-duplicates, "
                f"in {seconds:.1f} s{self.rules}")


def token_spans(tags: Sequence[tuple[str, float]]) -> list[tuple[int, int, str, float]]:
    """The spans of a sentence's BIO tags as (first token, token after the last, type, mean confidence), as Flair reads them."""
    return [(indices[0], indices[-1] + 1, kind, confidence)
            for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags])]


def write_units(chosen: list[Candidate], fmt: str, model_version: str, rules: Optional[ReaderRules] = None) -> str:
    """The chosen units with their tags in `fmt` (through the reader `rules` when given)."""
    tagged = [found.tags(rules) for found in chosen]
    if fmt == "column":
        blocks = ["\n".join(f"{token}\t{tag}" for token, (tag, _) in zip(tokens, tags))
                  for found, rows in zip(chosen, tagged) for tokens, tags in zip(found.tokens, rows)]
        return "\n\n".join(blocks) + "\n"
    documents = [from_tokens(found.tokens, [token_spans(tags) for tags in rows]) for found, rows in zip(chosen, tagged)]
    if fmt == "webanno":  # one document per file, as INCEpTION imports it
        documents = [from_tokens([tokens for found in chosen for tokens in found.tokens], [token_spans(tags) for rows in tagged for tags in rows])]
    return annotation_text(documents, fmt, model_version)


def scored_pool(model: torch.nn.Module, texts: Path, n: int, unit: str, measure: str, batch_size: Optional[int], join: bool = True) -> Pool:
    """TEXTS read and scored batch by batch, the most uncertain units kept (module docstring; `join`: words broken at line
    ends joined); no units: a one-line error."""
    files = texts_files(texts, unit)
    scorer = Scorer(model, batch_size or BATCH_SIZE)
    pool = Pool(max(POOL_FACTOR * n, MIN_POOL), n)
    with progress(sum(path.stat().st_size for path in files), "suggest") as bar:
        for units, covered in unit_batches(texts, files, unit, model_segmentation(model), join):
            flat = scorer([s for u in units for s in u.sentences]) if units else []
            position = 0
            for found in units:
                pool.add(Candidate.of(pool.seen, found, flat[position : position + len(found.sentences)], measure))
                position += len(found.sentences)
            bar.update(covered)
    if not pool.seen:
        raise InputError(texts, None, "no sentences to rank")
    return pool


def suggest(model_path: Path, texts: Path, n: int, fmt: str, unit: str = "sentence", measure: str = "uncertainty",
            batch_size: Optional[int] = None, join_lines: bool = True, reader_spans: bool = True) -> Suggestion:
    """The top `n` units of `texts` by `measure` of the model at `model_path`, pre-annotated in `fmt` (module docstring;
    `join_lines`: words broken at line ends joined, `reader_spans`: the reader rules applied to the written tags)."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if measure not in MEASURES:
        raise FlairsuiteError(f"unknown measure '{measure}' (known: {', '.join(MEASURES)})")
    model = load_tagger(model_path)
    check_supported(model, str(model_path))
    pool = scored_pool(model, texts, n, unit, measure, batch_size, join_lines)
    candidates = pool.candidates()
    order = ranked([c.value for c in candidates])
    chosen = pick(order, [[t for tokens in c.tokens for t in tokens] for c in candidates], n)
    taken = set(chosen)
    passed = sum(1 for i in order[: order.index(chosen[-1]) + 1] if i not in taken) if chosen else 0
    lines = ["rank\t" + measure + "\tsource\ttext"]
    for rank, index in enumerate(chosen, 1):
        lines.append(f"{rank}\t{candidates[index].value:.4f}\t{candidates[index].source}\t{candidates[index].preview}")
    rules = ReaderRules(reader_spans and predicts_spans(model))
    text = write_units([candidates[i] for i in chosen], fmt, model_path.name, rules)
    return Suggestion(text, "\n".join(lines) + "\n", pool.seen, len(chosen), passed, rules.summary())
