"""`flairsuite predict MODEL INPUT...` on many files: a folder, a glob or several files, tagged after one model load.

The rules:

- *Which files*: a folder gives its text files, found in its subfolders too, in name order: `.txt` files and files
  without a suffix, and for `--format tei` and `html` also `.xml` and `.tei` files; hidden files and folders are left
  out, and the other files (editions written beside the letters, images, ...) are passed over and counted on stderr. A
  file named on the command line, or matched by a glob that flairsuite expands (`'letters/*.txt'` quoted; `**` reaches
  into subfolders), is tagged whatever its name. A file given twice is tagged once. `-` (stdin) is no input here.
- *Which outputs*: one file per input in `--out DIR` (created if missing): the input's stem and the format's extension
  (`EXTENSIONS`); with `--format tei` a TEI/XML input (`.xml`, `.tei`) keeps its name. A file of a folder keeps its
  path below the folder (`letters/1913/a.txt` -> `DIR/1913/a.xml`); a file named or globbed goes to DIR itself. Two
  inputs that would write one output, or an output that would replace an input, are a one-line error before anything
  is tagged. Each output is written atomically (`flairsuite.files.atomic`): a file interrupted or failed has no output.
- *What is written*: for each input exactly what `flairsuite predict MODEL INPUT --format F` writes for it alone, with the
  same options (`flairsuite.predict.inputs.predict_to` with the model loaded once, `loaded_tagger`).
- *Errors*: bad content of one input (what `predict` on that file alone reports as a one-line error: not UTF-8, empty
  or blank, no tokens, malformed XML) skips it: one line on stderr names it and why, nothing is written for it, the run
  goes on, and at the end, after the summary line, the command fails (exit status 1) with an `Error:` line counting
  the skipped files and naming the first. Any other error (the model, `--markup-map`, writing to DIR) stops the run
  with its one-line error; the outputs already written stay.
- *Streams*: nothing goes to stdout; stderr gets a progress bar over the files (on a terminal, after a second), the lines
  of skipped files and one summary line: files, sentences, tokens, seconds (and those of loading the libraries and the
  model), files per second after the load.
"""

import glob
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError

EXTENSIONS = {"column": ".tsv", "json": ".jsonl", "tei": ".xml", "html": ".html", "webanno": ".tsv", "jsonl": ".jsonl",
              "labelstudio": ".json", "conll": ".conll"}
TEXT_SUFFIXES = (".txt", "")
XML_SUFFIXES = (".xml", ".tei")
GLOB_CHARACTERS = frozenset("*?[")
PROGRESS_DELAY = 1.0  # seconds before the bar over the files shows


def is_glob(argument: str) -> bool:
    """Whether an input that names no file is a pattern for flairsuite to expand."""
    return bool(GLOB_CHARACTERS & set(argument))


def names_many(inputs: Sequence[str], out: Optional[str]) -> bool:
    """Whether the inputs are tagged file by file into a folder: several inputs, a folder, a glob, or `--out` an existing folder."""
    if len(inputs) != 1 or (out is not None and Path(out).is_dir()):
        return True
    path = Path(inputs[0])
    return path.is_dir() or (inputs[0] != "-" and not path.exists() and is_glob(inputs[0]))


def output_name(path: Path, fmt: str) -> str:
    """The output's name for the input `path` (module docstring)."""
    if fmt == "tei" and path.suffix.lower() in XML_SUFFIXES:
        return path.name
    return path.stem + EXTENSIONS[fmt]


def folder_files(folder: Path, fmt: str) -> list[Path]:
    """The files of a folder that are tagged, in name order; the others are counted on stderr."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    wanted = (*TEXT_SUFFIXES, *(XML_SUFFIXES if fmt in ("tei", "html") else ()))
    kept = [p for p in found if p.suffix.lower() in wanted]
    passed = Counter(p.suffix.lower() for p in found if p.suffix.lower() not in wanted)
    if passed:
        kinds = ", ".join(f"{count} {suffix}" for suffix, count in sorted(passed.items()))
        print(f"{folder}: passed over {sum(passed.values())} files that are not text for --format {fmt} ({kinds})", file=sys.stderr)
    return kept


def inputs_and_outputs(inputs: Sequence[str], out: Path, fmt: str) -> list[tuple[Path, Path]]:
    """Every input file with its output file (module docstring); a missing input, no file at all, two inputs for one
    output or an output over an input: a one-line error."""
    pairs: list[tuple[Path, Path]] = []
    for argument in inputs:
        path = Path(argument)
        if argument == "-":
            raise FlairsuiteError("- (stdin) can only be the one input of predict, not one of several or a folder's")
        if path.is_dir():
            files = folder_files(path, fmt)
            if not files:
                raise FlairsuiteError(f"{path}: no file to tag in this folder (.txt or no suffix{', .xml, .tei' if fmt in ('tei', 'html') else ''})")
            pairs.extend((file, out / file.relative_to(path).parent / output_name(file, fmt)) for file in files)
        elif path.exists():
            pairs.append((path, out / output_name(path, fmt)))
        elif is_glob(argument):
            matched = sorted(Path(name) for name in glob.glob(argument, recursive=True) if Path(name).is_file())
            if not matched:
                raise FlairsuiteError(f"{argument}: no file matches this pattern")
            pairs.extend((file, out / output_name(file, fmt)) for file in matched)
        else:
            raise FlairsuiteError(f"{path}: no such file or folder")
    return checked_pairs(pairs)


def checked_pairs(pairs: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """The pairs with repeated inputs dropped; two inputs for one output, or an output that is an input, is an error."""
    unique, writers = {}, {}
    for source, target in pairs:
        unique.setdefault(source.resolve(), (source, target))
    sources = set(unique)
    for source, target in unique.values():
        resolved = target.resolve()
        if resolved in sources:
            raise FlairsuiteError(f"{source}: its output {target} would replace an input: choose another --out folder")
        if resolved in writers:
            raise FlairsuiteError(f"{writers[resolved]} and {source} would both be written to {target}: tag them into different --out folders")
        writers[resolved] = source
    return list(unique.values())


@dataclass
class Totals:
    """What the inputs tagged so far add up to (the fields of `flairsuite.predict.prediction.Prediction`, summed)."""

    files: int = 0
    sentences: int = 0
    tokens: int = 0
    inserted: Optional[int] = None
    skipped: int = 0
    already_marked: Optional[int] = None
    xml_as_text: int = 0
    rules: Counter = field(default_factory=Counter)

    def add(self, found: Any) -> None:
        self.files += 1
        self.sentences += found.sentences
        self.tokens += found.tokens
        if found.inserted is not None:
            self.inserted = (self.inserted or 0) + found.inserted
            self.skipped += found.skipped
        if found.already_marked is not None:
            self.already_marked = (self.already_marked or 0) + found.already_marked
        self.xml_as_text += found.xml_as_text
        self.rules.update(found.rules)

    def summary(self, out: Path, seconds: float, loading: float, failed: int) -> str:
        """The summary line on stderr."""
        from flairsuite.inference.reader_spans import summary as rules_summary

        rate = self.files / max(seconds - loading, 1e-9)
        line = (f"tagged {self.files:,} files, {self.sentences:,} sentences, {self.tokens:,} tokens in {seconds:.1f} s "
                f"(libraries and model loaded in {loading:.1f} s, then {rate:.2f} files/s) into {out}/")
        if self.inserted is not None:
            line += f"; inserted {self.inserted:,} entities, skipped {self.skipped:,} crossing markup"
        if self.already_marked is not None:
            line += f", {self.already_marked:,} already marked"
        if self.xml_as_text:
            line += f"; {self.xml_as_text:,} files look like TEI/XML and were read as plain text, markup included"
        if failed:
            line += f"; {failed:,} files not tagged (named above)"
        return line + rules_summary(self.rules)


def planned(inputs: Sequence[str], out: Optional[str], fmt: str) -> tuple[list[tuple[Path, Path]], Path]:
    """Every input with its output, and the output folder (module docstring), checked before the model loads; no `--out`: an error."""
    if out is None:
        what = f"{inputs[0]}: a folder" if len(inputs) == 1 and Path(inputs[0]).is_dir() else f"{len(inputs)} inputs"
        raise FlairsuiteError(f"{what}: give --out DIR, the folder for their outputs (one file per input)")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise FlairsuiteError(f"{folder}: a file, not a folder: --out names the folder for the outputs when predict tags several inputs")
    return inputs_and_outputs(inputs, folder, fmt), folder


def predict_files(model: Path, pairs: list[tuple[Path, Path]], out: Path, fmt: str, options: dict[str, Any]) -> None:
    """Load the model once, then tag each input into its output (`planned`), the summary line at the end (module docstring);
    `options`: `predict_to`'s keywords after the format."""
    start = time.perf_counter()
    from tqdm import tqdm

    from flairsuite.errors import InputError
    from flairsuite.files.atomic import atomic_file
    from flairsuite.predict.formats import checked_options
    from flairsuite.predict.inputs import predict_to  # torch and Flair: part of the load's time
    from flairsuite.predict.loading import loaded_tagger

    checked_options(fmt, options.get("markup_map"), options.get("tei_blocks"))
    loaded = loaded_tagger(model, fmt, options["fast"], options["batch_size"], options["entity_fix"])
    loading = time.perf_counter() - start
    totals, failed = Totals(), []
    bar = tqdm(pairs, desc="predict", unit="file", file=sys.stderr, delay=PROGRESS_DELAY, leave=False, disable=None)  # none off a terminal
    for source, target in bar:
        try:
            with atomic_file(target) as temp, temp.open("w", encoding="utf-8") as handle:
                totals.add(predict_to(handle.write, model, source, fmt, loaded=loaded, **options))
        except InputError as err:
            if err.path != source:
                raise
            failed.append(str(err))
            tqdm.write(f"not tagged: {err}", file=sys.stderr)
    print(totals.summary(out, time.perf_counter() - start, loading, len(failed)), file=sys.stderr)
    if failed:
        raise FlairsuiteError(f"{len(failed)} of {len(pairs)} files not tagged (named above), the first: {failed[0]}")
