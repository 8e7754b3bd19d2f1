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
"""

import logging
import re
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.registry import FormatSpec
from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.inference.segmentation import flair_view, split_text
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger, Layout, torch_threads
from flairsuite.markup.annotated import from_tokens
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS, annotation_text
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import emissions
from flairsuite.models.selection import pick, ranked
from flairsuite.models.uncertainty import MEASURES, Scores, check_supported, scores_from_emissions
from flairsuite.predict import load_tagger

FORMATS = ("column", *ANNOTATION_FORMATS)
UNITS = ("sentence", "document")
COLUMN_SUFFIXES = (".conll", ".bio", ".iob", ".column")
CORPUS_SUFFIXES = (*COLUMN_SUFFIXES, ".conllu", ".jsonl", ".json", ".tsv")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
TEXT_SUFFIXES = (".txt", "")  # what a folder's plain-text files end with
log = logging.getLogger("flairsuite")


def read_text(path: Path) -> str:
    """A file of TEXTS (UTF-8, a BOM dropped); an unreadable or blank one is a one-line error."""
    text = read_utf8(path).removeprefix("\ufeff")
    if not text.strip():
        raise InputError(path, None, "no text: the file is empty or blank")
    return text


@dataclass(frozen=True)
class Unit:
    """A sentence or a document of TEXTS: where it starts (`file:line`) and its sentences."""

    source: str
    sentences: list[Sentence]


def corpus_format(path: Path) -> FormatSpec:
    """How a corpus file of TEXTS is read, by its name (and for `.tsv` its first line)."""
    suffix = path.suffix.lower()
    if suffix == ".conllu":
        return FormatSpec("conllu")
    if suffix in (".jsonl", ".json"):
        return FormatSpec("jsonl")
    if suffix == ".tsv" and read_text(path).lstrip("\ufeff").startswith("#FORMAT=WebAnno"):
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


def text_units(path: Path, text: str, segmentation: str, offset_line: int = 1) -> list[Unit]:
    """The sentences of a plain text, each with the line it starts on."""
    view = flair_view(text)
    units = []
    for sentence in split_text(view.text, segmentation):
        start = view.original(sentence.start_position, sentence.start_position + 1)[0]
        units.append(Unit(f"{path}:{offset_line + text.count(chr(10), 0, start)}", [sentence]))
    return units


def file_units(path: Path, segmentation: str) -> list[Unit]:
    """The sentences of one file of TEXTS (a corpus file or plain text)."""
    if path.suffix.lower() in CORPUS_SUFFIXES:
        return corpus_units(path)
    return text_units(path, read_text(path), segmentation)


def paragraph_units(path: Path, segmentation: str) -> list[Unit]:
    """The paragraphs (text between blank lines) of a plain-text file as documents."""
    text, documents, start = read_text(path), [], 0
    for piece in [*PARAGRAPH_BREAK.finditer(text), None]:
        end = piece.start() if piece is not None else len(text)
        block = text[start:end]
        if block.strip():
            sentences = [s for unit in text_units(path, block, segmentation, 1 + text.count("\n", 0, start)) for s in unit.sentences]
            if sentences:
                documents.append(Unit(f"{path}:{1 + text.count(chr(10), 0, start) + len(block) - len(block.lstrip(chr(10)))}", sentences))
        start = piece.end() if piece is not None else len(text)
    return documents


def folder_files(folder: Path) -> list[Path]:
    """The files of a folder that `suggest` reads (module docstring), in name order; the others are counted on stderr."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    kept = [p for p in found if p.suffix.lower() in (*CORPUS_SUFFIXES, *TEXT_SUFFIXES)]
    skipped = Counter(p.suffix.lower() for p in found if p not in kept)
    if skipped:
        kinds = ", ".join(f"{count} {suffix}" for suffix, count in sorted(skipped.items()))
        log.warning(f"{folder}: passed over {sum(skipped.values())} files that are neither text nor a corpus ({kinds})")
    return kept


def read_units(texts: Path, unit: str, segmentation: str) -> list[Unit]:
    """The units of TEXTS (module docstring); no text at all is a one-line error naming it."""
    if not texts.exists():
        raise FlairsuiteError(f"{texts}: no such file or folder")
    files = folder_files(texts) if texts.is_dir() else [texts]
    if unit == "document" and not texts.is_dir():
        if texts.suffix.lower() in CORPUS_SUFFIXES:
            raise InputError(texts, None, "--unit document needs a folder of files (a document each) or a plain text (a document a paragraph)")
        found = paragraph_units(texts, segmentation)
    elif unit == "document":
        found = []
        for path in files:
            sentences = [s for u in file_units(path, segmentation) for s in u.sentences]
            if sentences:
                found.append(Unit(f"{path}:1", sentences))
    else:
        found = [u for path in files for u in file_units(path, segmentation)]
    if not found:
        raise InputError(texts, None, "no sentences to rank")
    return found


def sentence_scores(model: torch.nn.Module, sentences: list[Sentence], batch_size: int = BATCH_SIZE) -> list[Scores]:
    """The uncertainty `Scores` of every sentence: embeddings and emissions by `FastTagger`'s pieces, the measures in float64."""
    tagger = FastTagger(model, batch_size=batch_size)
    found: list[Optional[Scores]] = [None] * len(sentences)
    budget = torch.get_num_threads()
    with torch_threads(max(budget // 2, 1)), ThreadPoolExecutor(min(2, budget)) as pool:
        for batch in tagger.batches(sentences):
            chosen = [sentences[i] for i in batch]
            lengths = [len(s) for s in chosen]
            with torch.inference_mode():
                embedded = torch.cat([featurizer(chosen).to(tagger.device) for featurizer in tagger.featurizers], dim=1)
                layout = Layout(lengths, embedded.device)
                if tagger.head is not None:
                    emitted = tagger.head.emissions(embedded, layout, pool)
                else:
                    emitted = emissions(model, layout.batch_major(embedded), torch.tensor(lengths))
            emitted = emitted.clone()  # a normal tensor: the forward-backward marginals need autograd
            for index, scores in zip(batch, scores_from_emissions(model, emitted, torch.tensor(lengths))):
                found[index] = scores
    return found  # type: ignore[return-value]


@dataclass(frozen=True)
class Suggestion:
    """What `suggest` writes (`text`), the ranking it prints, and its numbers."""

    text: str
    ranking: str
    units: int
    chosen: int
    passed_over: int  # near-duplicates skipped on the way to the top N

    def summary(self, measure: str, unit: str, seconds: float) -> str:
        return (f"ranked {self.units:,} {unit}s by {measure}; chose {self.chosen:,}, passing over {self.passed_over:,} near-duplicates, "
                f"in {seconds:.1f} s")


def token_spans(tags: Sequence[tuple[str, float]]) -> list[tuple[int, int, str, float]]:
    """The spans of a sentence's BIO tags as (first token, token after the last, type, mean confidence), as Flair reads them."""
    return [(indices[0], indices[-1] + 1, kind, confidence)
            for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags])]


def write_units(units: list[Unit], scores: list[list[Scores]], fmt: str, model_version: str) -> str:
    """The chosen units with their tags in `fmt`."""
    if fmt == "column":
        blocks = ["\n".join(f"{token.text}\t{tag}" for token, (tag, _) in zip(sentence, s.tags))
                  for unit, found in zip(units, scores) for sentence, s in zip(unit.sentences, found)]
        return "\n\n".join(blocks) + "\n"
    documents = [from_tokens([[t.text for t in s] for s in unit.sentences], [token_spans(s.tags) for s in found]) for unit, found in zip(units, scores)]
    if fmt == "webanno":  # one document per file, as INCEpTION imports it
        documents = [from_tokens([[t.text for t in s] for unit in units for s in unit.sentences],
                                 [token_spans(s.tags) for found in scores for s in found])]
    return annotation_text(documents, fmt, model_version)


def suggest(model_path: Path, texts: Path, n: int, fmt: str, unit: str = "sentence", measure: str = "uncertainty",
            batch_size: Optional[int] = None) -> Suggestion:
    """The top `n` units of `texts` by `measure` of the model at `model_path`, pre-annotated in `fmt` (module docstring)."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if measure not in MEASURES:
        raise FlairsuiteError(f"unknown measure '{measure}' (known: {', '.join(MEASURES)})")
    model = load_tagger(model_path)
    check_supported(model, str(model_path))
    units = read_units(texts, unit, model_segmentation(model))
    sentences = [s for u in units for s in u.sentences]
    flat = sentence_scores(model, sentences, batch_size or BATCH_SIZE)
    per_unit, position = [], 0
    for u in units:
        per_unit.append(flat[position : position + len(u.sentences)])
        position += len(u.sentences)
    values = [Scores.combined(found).measure(measure) for found in per_unit]
    order = ranked(values)
    chosen = pick(order, [[t.text for s in u.sentences for t in s] for u in units], n)
    taken = set(chosen)
    passed = sum(1 for i in order[: order.index(chosen[-1]) + 1] if i not in taken) if chosen else 0
    lines = ["rank\t" + measure + "\tsource\ttext"]
    for rank, index in enumerate(chosen, 1):
        text = " ".join(s.to_original_text() for s in units[index].sentences)
        lines.append(f"{rank}\t{values[index]:.4f}\t{units[index].source}\t{text[:80]}")
    text = write_units([units[i] for i in chosen], [per_unit[i] for i in chosen], fmt, model_path.name)
    return Suggestion(text, "\n".join(lines) + "\n", len(units), len(chosen), passed)
