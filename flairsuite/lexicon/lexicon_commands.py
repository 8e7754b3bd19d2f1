"""Glue of `discover-words` and `match-lexicon`: the text read, the lexicon written, the summary printed."""

import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

from tqdm import tqdm

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset, language_segmentation
from flairsuite.errors import FlairsuiteError, read_utf8
from flairsuite.lexicon.coverage import Coverage, language_coverage
from flairsuite.lexicon.discover import discover
from flairsuite.lexicon.match import LexiconMatcher
from flairsuite.lexicon.ngrams import unit_text
from flairsuite.lexicon.settings import SETTINGS, DiscoverySettings
from flairsuite.lexicon.store import Lexicon, read_lexicon, write_lexicon
from flairsuite.rawtext.language import prepare_language, raw_set
from flairsuite.rawtext.tokens import tokenize


def text_documents(path: Path, characters: bool) -> Iterator[list[str]]:
    """The units of every line (document) of the prepared text `path`."""
    with path.open(encoding="utf-8") as handle:
        for line in tqdm(handle, desc="read text", unit=" documents", mininterval=1.0):
            yield tokenize(line, characters)


def dataset_train_path(name: str, language: str, root: Path, raw_files: dict[Path, str]) -> Path:
    """The train file of labeled dataset `name` of `language`; another language's or an unlabeled set, a missing file,
    or one the raw text already holds (`raw_files`: resolved path -> raw set and source, so it is not counted twice),
    is a one-line error."""
    spec = dataset(name)
    if spec.task == "raw":
        raise FlairsuiteError(f"--add-dataset {name}: a raw-text set, not a labeled dataset (raw text comes from --corpus or the language's raw set)")
    if spec.language != language:
        raise FlairsuiteError(f"--add-dataset {name}: a {spec.language} dataset, and the lexicon is for --lang {language}")
    entry = spec.splits.get("train")
    path = spec.locate(entry, root) if entry is not None else None
    if path is None:
        raise FlairsuiteError(f"--add-dataset {name}: its train split is not under {spec.directory(root)}")
    if path.resolve() in raw_files:
        raise FlairsuiteError(f"--add-dataset {name}: its train text is already in the raw text ({raw_files[path.resolve()]}); leave the option out")
    return path


def dataset_documents(name: str, path: Path, characters: bool) -> Iterator[list[str]]:
    """The sentences of labeled dataset `name`'s train file as unlabeled documents (labels ignored), split into the units
    of raw text (`rawtext.tokens`: `W.` -> `W`, `.`), so that entries found in them read back and match as those of raw text."""
    for sentence in read_split(dataset(name), path).sentences:
        yield tokenize(" ".join(sentence.tokens), characters)


def raw_source_files(language: str, root: Path) -> dict[Path, str]:
    """The local files of the language's raw-text set: resolved path -> `raw-set source`."""
    spec = dataset(raw_set(language))
    found = {}
    for name, source in spec.sources.items():
        path = spec.locate(source, root)
        if path is not None:
            found[path.resolve()] = f"{spec.name} source {name}"
    return found


def settings_from(options: dict[str, Any], units: str) -> DiscoverySettings:
    base = SETTINGS[units]
    chosen = {key: options[key] for key in ("shortest", "longest", "min_count", "common_share", "keep", "keep_by") if options.get(key) is not None}
    return DiscoverySettings(**{**base.__dict__, **chosen})


def discover_command(options: dict[str, Any], root: Path, out: Path) -> Iterator[str]:
    """Run `discover-words`; yields the summary lines."""
    language = options["lang"]
    units = language_segmentation(language)
    settings = settings_from(options, units)
    if out.exists() and not options["force"]:
        raise FlairsuiteError(f"{out} exists: pass --force to replace it")
    raw_files = {} if options["corpus"] else raw_source_files(language, root)
    added = {name: dataset_train_path(name, language, root, raw_files) for name in options["add_dataset"]}
    corpus = prepare_language(language, options["corpus"], options["corpora_dir"])
    started = time.perf_counter()
    documents: list[Iterable[list[str]]] = [text_documents(corpus.text_path("train"), units == "characters")]
    documents += [dataset_documents(name, path, units == "characters") for name, path in added.items()]
    text = unit_text(document for source in documents for document in source)
    table = discover(text, settings, "" if units == "characters" else " ")
    if table.empty:
        raise FlairsuiteError(empty_lexicon_reason(text.size, text.document_count, settings))
    write_lexicon(out, table, units, language)
    seconds = time.perf_counter() - started
    yield (f"{out}: {len(table):,} entries ({units}, {settings.shortest}-{settings.longest} units, count >= {settings.min_count}, "
           f"in at most {settings.common_share:.0%} of the documents, top {settings.keep:.0%}{' of each length' if settings.keep_by == 'length' else ''} "
           f"by MI + left + right entropy) "
           f"from {text.size:,} units in {text.document_count:,} documents, {seconds:.0f} s")
    lexicon = read_lexicon(out)
    matcher = LexiconMatcher(lexicon)
    # train and dev: a raw text may hold a train set's own text (raw-zh holds CLUENER's), so its train coverage runs high
    yield from coverage_lines([found for split in ("train", "dev") for found in language_coverage(lexicon, matcher, language, root, split)])


def empty_lexicon_reason(units: int, documents: int, settings: DiscoverySettings) -> str:
    """Why discovery kept nothing, and which option to change: a corpus of few documents lets no n-gram in over
    `common_share` of them (a common word) reach `min_count` unless it repeats inside one document."""
    reason = (f"no entry found in {units:,} units of {documents:,} documents (an entry must occur >= {settings.min_count} times "
              f"and in at most {settings.common_share:.0%} of the documents")
    if settings.common_share * documents < settings.min_count:
        return (f"{reason}: with {documents:,} documents that leaves only n-grams repeated inside one document); give more "
                f"text (a document per line), or raise --common-share or lower --min-count")
    return f"{reason}); give more text, or lower --min-count"


def coverage_lines(found: list[Coverage]) -> Iterator[str]:
    """A table of coverage and hit precision per labeled split, with examples of hits and misses."""
    if not found:
        yield "no labeled NER train set of this language under the corpora folder: coverage not measured"
        return
    yield f"{'dataset':<14}{'split':<7}{'mentions':>10}{'covered':>9}{'distinct':>10}{'covered':>9}{'matches':>9}{'exact':>8}"
    for c in found:
        yield (f"{c.dataset:<14}{c.split:<7}{c.mentions:>10,}{c.mention_share:>9.1%}{c.distinct:>10,}{c.distinct_share:>9.1%}"
               f"{c.matches:>9,}{c.precision:>8.1%}")
    for c in found:
        yield f"{c.dataset} {c.split}: hits {', '.join(c.hits) or '-'}; misses {', '.join(c.misses) or '-'}"


def match_lines(lexicon: Lexicon, rule: str, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """One record per line: its number and its matches as character spans with the entry they matched."""
    lines = list(lines)
    found = LexiconMatcher(lexicon, rule).bulk.text_spans(lines)
    for number, (line, spans) in enumerate(zip(lines, found), start=1):
        yield {"line": number, "spans": [
            {"start": start, "end": end, "text": line[start:end], "entry": lexicon.text(lexicon.entries[index])} for start, end, index in spans
        ]}


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file; a missing or undecodable file is a one-line error."""
    return read_utf8(path).splitlines()


def match_command(lexicon_path: Path, file: Path, rule: str, out: Optional[Path]) -> Iterator[str]:
    """`match-lexicon`: JSON lines to `out` (or yielded); the closing summary as the last line."""
    lexicon, lines = read_lexicon(lexicon_path), read_lines(file)
    started = time.perf_counter()
    records = [json.dumps(record, ensure_ascii=False) for record in match_lines(lexicon, rule, lines)]
    seconds = time.perf_counter() - started
    if out is None:
        yield from records
    else:
        from flairsuite.files.atomic import write_text

        write_text(out, "\n".join(records) + ("\n" if records else ""))
    matches = sum(record.count('"start"') for record in records)
    characters = sum(map(len, lines))
    yield f"matched {matches:,} spans in {len(lines):,} lines ({characters:,} characters) by the {rule} rule in {seconds:.2f} s"
