"""The files of TEXTS and their units, batch by batch: sentences (`--unit sentence` or `window`) or documents.

TEXTS is one file or a folder of files (read in name order, subfolders included); a file is a letter (a document). In a
folder, only corpus files (`units.CORPUS_SUFFIXES`), `.txt` files and files without a suffix are read: the others (a TEI
or HTML edition `predict` wrote beside the letters, images, ...) are passed over and counted on stderr, so their markup
is never ranked as text. With `--unit document` the documents are the files of a folder, or the paragraphs of a single
plain-text file.
"""

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.inference.stream import link
from flairsuite.suggest.units import CORPUS_SUFFIXES, Unit, file_units, paragraph_units

TEXT_SUFFIXES = (".txt", "")  # what a folder's plain-text files end with
log = logging.getLogger("flairsuite")

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
