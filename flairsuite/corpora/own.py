"""Own corpora: a folder of train/dev/test files, described by the keys of an experiment's `corpora:` entry.

`own_corpus(entry, base)` finds the files, reads them once (label set, scheme, checksums) and
returns a `DatasetSpec` that every loader, `corpora stats` and the tagging runner use as they use
a registered one. Where nothing names the splits (no `train:`, `dev:`, `test:` and no file or subfolder named so),
the suite splits the corpus itself and records how (`document_splits.py`: by document, or by sentence for fewer than
3 documents; a `SplitCorpusSpec`): a folder's files are its documents, a single file is one document, and an
INCEpTION project export (a ZIP or its folder, `inception_project.py`) gives one version of each of its documents.
The keys, with their defaults:

    path          the folder, a single file, or an INCEpTION project export (relative to `base`: the experiment
                  file's folder, or the current one)
    name          the corpus in run ids and tables (default: the folder's name; a file's name without its suffix)
    format        column (default), conllu, spans_json (CLUENER-style JSON lines), webanno (WebAnno TSV 3.x,
                  INCEpTION's export) or jsonl (doccano JSONL, Label Studio JSON): `formats.READERS`; or a preset
                  (`format_names.PRESETS`), column with its keys: hipe (HIPE-2020/2022 TSV), the entry's own keys winning
    sep           column: whitespace (default: any run of whitespace), tab or space
    text, label   column: token and tag column, counted from 0, negative from the end (0, -1), or named as in
                  the header; conllu: label is a column (index or name, e.g. xpos) or misc:KEY (no default)
    header        column: auto (default: a first line whose label cell is no tag is a header, skipped; with
                  scheme io or task pos only where a column is named), true or false
    sentence_end  column: COLUMN:FLAG|FLAG (a header name or number): a token whose cell holds a flag ends its
                  sentence, except where an entity continues; NoSpaceAfter there: no whitespace after the token
    line_break    column: COLUMN:FLAG|FLAG: a hyphen token whose cell holds a flag, between two pieces of a word, is a
                  line-end break the character LMs read joined (`break_marks.py`; default none; hipe: MISC:EndOfLine)
    layer, feature  webanno: the span layer (full or short name; default the NamedEntity layer) and its feature
                  holding the type (default value)
    scheme        auto (default: the rule of `tags.SchemeEvidence`), bio, iob1, bioes or io (column, conllu:
                  bare types, an entity starting at each change of type); all read as BIO
    max_tokens    a longer sentence is split (`long_sentences.py`; default 250); null keeps every sentence whole
    train, dev, test   a file, a folder (its files, subfolders too, in name order), a glob (`train/*.tsv`) or a
                  list of them (default: the one file whose name holds `train`, `dev` or `valid`, `test`, or a
                  subfolder named train, dev or valid, test); every file's checksum goes into the fingerprint
    dev_fraction  without a dev file: dev is this share of train (a fixed sample, labeled.DEV_SEED)
    encoding      utf-8 (default)
    comment       column: lines starting with this text are skipped (default: none)
    docstart      column: a line with this token is a document marker, no sentence (-DOCSTART-)
    document_comment  column: a comment line starting with this text begins a document (default: none; hipe:
                  `# hipe2022:document_id`)
    task          ner (default: BIO/IOB1/BIOES entity tags) or pos (any tag per token, e.g. PoS:
                  the label set is every tag the files hold; no scheme; scored by token accuracy)
    annotator     INCEpTION project export: read this annotator's version of each document (default: the curated one)
"""

import codecs
import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

from flairsuite.corpora.document_splits import MIN_DOCUMENTS, SPLIT_SEED, SplitCorpusSpec, SplitRecord, split_documents, split_record, split_sentences
from flairsuite.corpora.format_names import INPUT_FORMATS, with_preset
from flairsuite.corpora.formats import READERS, SPAN_FORMATS, read_tagged
from flairsuite.corpora.inception_project import ExportReading, export_error, is_export, read_export
from flairsuite.corpora.long_sentences import MAX_TOKENS
from flairsuite.corpora.readers import CONLLU_COLUMNS, SEPARATORS, TaggedSentence
from flairsuite.corpora.registry import SPLITS, DatasetSpec, FileSpec, FormatSpec, names
from flairsuite.corpora.tags import AS_BIO, PREFIXES, SchemeEvidence, split_tag
from flairsuite.corpora.webanno_reader import DEFAULT_FEATURE, NAMED_ENTITY
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.settings_schema import checked_keys, interval, refuse
from flairsuite.values import is_int, show

FORMATS = tuple(READERS)
SCHEMES = ("auto", *PREFIXES)
KEYS = ("name", "path", "format", "sep", "text", "label", "scheme", "train", "dev", "test", "dev_fraction", "encoding", "comment", "docstart",
        "task", "header", "sentence_end", "layer", "feature", "max_tokens", "annotator", "document_comment", "line_break")
OWN_TASKS = ("ner", "pos")
ONLY_FOR = {"sep": ("column",), "text": ("column",), "comment": ("column",), "docstart": ("column",), "label": ("column", "conllu"),
            "header": ("column",), "sentence_end": ("column",), "layer": ("webanno",), "feature": ("webanno",),
            "document_comment": ("column",), "line_break": ("column",)}
FILE_WORDS = {"train": ("train",), "dev": ("dev", "valid"), "test": ("test",)}
DOCSTART = "-DOCSTART-"
FORMAT_RECORD = ("kind", "sep", "text", "label", "comment", "docstart")  # the FormatSpec keys an own corpus sets
# recorded where set (so earlier records stay as they were)
NEW_FORMAT_RECORD = ("header", "sentence_end", "layer", "feature", "document_comment", "line_break")
HEADERS = {"auto": None, "true": True, "false": False}
GLOB_CHARACTERS = frozenset("*?[")
DEV_SHARE = interval(0, 1, low_open=True, high_open=True, noun="a share of train").noted(", e.g. 0.1")  # own corpora and registered ones


def _choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise FlairsuiteError(f"{key}: {show(value)} is not one of {', '.join(choices)}")
    return value


def _column(key: str, value: Any) -> Union[int, str]:
    if not is_int(value) and not (isinstance(value, str) and value.strip()):
        raise FlairsuiteError(f"{key}: {show(value)} is not a column number (0 is the first, -1 the last) nor a header's column name")
    return value


def _header(value: Any) -> Optional[bool]:
    """`header:` as True, False or None (auto)."""
    key = str(value).lower() if isinstance(value, (bool, str)) else None
    if key not in HEADERS:
        raise FlairsuiteError(f"header: {show(value)} is not one of auto, true, false")
    return HEADERS[key]


def _column_flags(key: str, value: Any, example: str) -> Optional[str]:
    """`sentence_end` or `line_break`: `COLUMN:FLAG|FLAG`, checked (`example`: such a value)."""
    if value is None:
        return None
    column, _, flags = str(value).partition(":") if isinstance(value, str) else ("", "", "")
    if not column.strip() or not all(flag.strip() for flag in flags.split("|")):
        raise FlairsuiteError(f"{key}: {show(value)} is not COLUMN:FLAG|FLAG, e.g. {example} (a header name or a column number)")
    return value


def _max_tokens(value: Any) -> Optional[int]:
    if value is not None and (not is_int(value) or value < 1):
        raise FlairsuiteError(f"max_tokens: {show(value)} is not a number of tokens (at least 1), or null to keep long sentences whole")
    return value


def _conllu_label(value: Any) -> Any:
    if value is None:
        raise FlairsuiteError("label: format conllu needs the tag column: misc:KEY (e.g. misc:NE), a column name (e.g. xpos) or its index")
    if is_int(value) and 0 <= value < len(CONLLU_COLUMNS) or value in CONLLU_COLUMNS:
        return value
    if isinstance(value, str) and value.startswith("misc:") and len(value) > len("misc:"):
        return value
    raise FlairsuiteError(f"label: {show(value)} is no CoNLL-U column (0-9 or {', '.join(CONLLU_COLUMNS)}) nor misc:KEY")


def _text(key: str, value: Any) -> Optional[str]:
    if value is not None and (not isinstance(value, str) or not value):
        raise FlairsuiteError(f"{key}: {show(value)} is not a non-empty text")
    return value


def _format(entry: Mapping[str, Any]) -> FormatSpec:
    """The reading settings of the entry (scheme still `bio`: it is chosen once the files are read)."""
    kind = _choice("format", entry.get("format", "column"), FORMATS)
    for key, kinds in ONLY_FOR.items():
        if key in entry and kind not in kinds:
            raise FlairsuiteError(f"{key}: applies to format {' or '.join(kinds)} only, not to {kind}")
    if kind == "conllu":
        return FormatSpec(kind, label=_conllu_label(entry.get("label")))
    if kind in ("spans_json", "jsonl"):
        return FormatSpec(kind)
    if kind == "webanno":
        return FormatSpec(kind, layer=_text("layer", entry.get("layer", NAMED_ENTITY)), feature=_text("feature", entry.get("feature", DEFAULT_FEATURE)))
    text, label = _column("text", entry.get("text", 0)), _column("label", entry.get("label", -1))
    if text == label:
        raise FlairsuiteError(f"text and label are the same column ({text})")
    sep = _choice("sep", entry.get("sep", "whitespace"), tuple(SEPARATORS))
    return FormatSpec(kind, sep, text, label, _text("comment", entry.get("comment")), _text("docstart", entry.get("docstart", DOCSTART)),
                      header=_header(entry.get("header", "auto")), sentence_end=_column_flags("sentence_end", entry.get("sentence_end"), "MISC:EndOfSentence"),
                      document_comment=_text("document_comment", entry.get("document_comment")),
                      line_break=_column_flags("line_break", entry.get("line_break"), "MISC:EndOfLine"))


def _resolved_header(fmt: FormatSpec, task: str, scheme: str) -> FormatSpec:
    """`header: auto` as the reader applies it: by the label cell (readers.is_tag) for BIO-like NER tags; with scheme io or
    task pos, where every cell could be a tag, a header only where a column is named."""
    if fmt.kind != "column" or fmt.header is not None or (task == "ner" and scheme != "io"):
        return fmt
    flag_columns = ((fmt.sentence_end or "0").partition(":")[0], (fmt.line_break or "0").partition(":")[0])
    named = any(isinstance(c, str) and not c.lstrip("-").isdigit() for c in (fmt.text, fmt.label, *flag_columns))
    return replace(fmt, header=named)


def _dev_fraction(value: Any) -> Optional[float]:
    if value is not None:
        refuse("dev_fraction", DEV_SHARE, value)
    return None if value is None else float(value)


def _encoding(value: Any) -> str:
    try:
        return codecs.lookup(_text("encoding", value)).name
    except (LookupError, TypeError):
        raise FlairsuiteError(f"encoding: {show(value)} is not a known text encoding, e.g. utf-8") from None


def _files_below(folder: Path) -> list[Path]:
    """The files in `folder` and its subfolders, hidden ones aside, in name order (`a/1.tsv` before `b.tsv`)."""
    return sorted(
        (p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)),
        key=lambda p: p.relative_to(folder).parts,
    )


def _given_files(folder: Path, split: str, value: Any) -> list[Path]:
    """The files `split: VALUE` names: a file, a folder (its files), a glob, or a list of those; in order, each once."""
    items = value if isinstance(value, list) and value else [value]
    found: list[Path] = []
    for item in items:
        path = folder / _text(split, item)
        if GLOB_CHARACTERS & set(item):
            matched = sorted(p for p in folder.glob(item) if p.is_file())
            if not matched:
                raise FlairsuiteError(f"{path}: no {split} file matches")
        elif path.is_dir():
            matched = _files_below(path)
            if not matched:
                raise FlairsuiteError(f"{path}: the {split} folder holds no file")
        elif path.is_file():
            matched = [path]
        else:
            raise FlairsuiteError(f"{path}: {split} file not found")
        found.extend(p for p in matched if p not in found)
    return found


def find_files(folder: Path, given: Mapping[str, Any], wanted: Sequence[str] = SPLITS) -> dict[str, list[Path]]:
    """split -> its files: those `given` names (`_given_files`), the others of `wanted` found by name (the one file whose
    name holds `train`, `dev` or `valid`, `test`, or a subfolder of that name: its files); absent splits left out."""
    if folder.is_file():
        raise FlairsuiteError(f"{folder}: a file; a corpus is a folder holding its train, dev and test files")
    if not folder.is_dir():
        raise FlairsuiteError(f"{folder}: no such folder")
    files = {split: _given_files(folder, split, given[split]) for split in SPLITS if given.get(split) is not None}
    taken = {path for paths in files.values() for path in paths}
    others = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".") and p not in taken)
    subfolders = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    for split in wanted:
        if split not in files:
            found = [p for p in others if any(word in p.name.lower() for word in FILE_WORDS[split])]
            found += [p for p in subfolders if p.name.lower() in FILE_WORDS[split] and _files_below(p)]
            if len(found) > 1:
                names_found = ", ".join(p.name + ("/" if p.is_dir() else "") for p in found)
                raise FlairsuiteError(f"{folder}: {len(found)} files could be the {split} split ({names_found}): name one with `{split}: FILE`")
            if found:
                files[split] = _files_below(found[0]) if found[0].is_dir() else found
    for first, second in ((a, b) for i, a in enumerate(SPLITS) for b in SPLITS[i + 1 :]):
        shared = set(files.get(first, ())) & set(files.get(second, ()))
        if shared:
            raise FlairsuiteError(f"{min(shared)}: both the {first} and the {second} file: name the files with `{first}:` and `{second}:`")
    return files


def _check_splits(folder: Path, files: dict[str, list[Path]], dev_fraction: Optional[float]) -> None:
    """The amended missing-splits rule: train and test must be files; dev is a file or, with dev_fraction, a share of train."""
    if "train" not in files:
        raise FlairsuiteError(f"{folder}: no train file (no file name holds 'train'): name it with `train: FILE`")
    if "test" not in files:
        raise FlairsuiteError(f"{folder}: no test file (no file name holds 'test'): add one or name it with `test: FILE`; test is never sampled "
                              "(a corpus with no train, dev or test file at all is split by document)")
    if "dev" not in files and dev_fraction is None:
        raise FlairsuiteError(
            f"{folder}: no dev file (no file name holds 'dev' or 'valid'): add one, name it with `dev: FILE`, "
            "or take a fixed share of train with `dev_fraction: 0.1`"
        )
    if "dev" in files and dev_fraction is not None:
        raise FlairsuiteError(f"{folder}: dev_fraction takes dev from train, but {files['dev'][0].name} is a dev file: drop one of the two")


def sha256(path: Path) -> str:
    """The sha256 of a file's bytes, as stored (a .gz file: of the compressed bytes)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tag_hint(fmt: FormatSpec) -> str:
    if fmt.kind == "webanno":
        return f"; entities are read from layer {fmt.layer}, feature {fmt.feature} (`layer:`, `feature:`)"
    return f"; tags are read from column {fmt.label} (`label:`)" if fmt.kind not in SPAN_FORMATS else ""


def _sentences(files: dict[str, list[Path]], fmt: FormatSpec, encoding: str, lengths: Counter) -> Iterator[tuple[Path, TaggedSentence]]:
    """(file, sentence) of every file of every split, raw tags; `lengths` counts the sentences of each length."""
    for paths in files.values():
        for path in paths:
            for sentence in read_tagged(path, fmt, encoding, Counter()):
                lengths[len(sentence.tokens)] += 1
                yield path, sentence


def _file_names(files: dict[str, list[Path]]) -> str:
    listed = [path for paths in files.values() for path in paths]
    return ", ".join(p.name for p in listed[:3]) + (f" and {len(listed) - 3} more" if len(listed) > 3 else "")


def _scan(files: dict[str, list[Path]], fmt: FormatSpec, encoding: str, scheme: str, lengths: Counter) -> tuple[str, str, list[str]]:
    """Read every file once: (scheme, how it was chosen, entity types); an ill-formed tag or one outside `scheme` is an error at its line."""
    evidence = SchemeEvidence()
    allowed = PREFIXES["bioes" if scheme == "auto" else scheme]  # E- and S- only where the scheme has them
    for path, sentence in _sentences(files, fmt, encoding, lengths):
        for tag, line in zip(sentence.tags, sentence.lines):
            try:
                prefix, _ = split_tag(tag, PREFIXES["bioes"])
            except ValueError as err:
                raise InputError(path, line, f"{err}{_tag_hint(fmt)}") from None
            if prefix in AS_BIO and prefix not in allowed:
                raise InputError(path, line, f"tag '{tag}' is BIOES, but the corpus says scheme: {scheme}: use scheme: bioes or auto")
        evidence.add(sentence.tags)
    if not evidence.types:
        raise FlairsuiteError(f"{_file_names(files)}: no entity tag at all, only O{_tag_hint(fmt)}")
    if scheme != "auto":
        return scheme, "given", sorted(evidence.types)
    found, reason = evidence.scheme()
    return found, f"auto: {reason}", sorted(evidence.types)


def _scan_tags(files: dict[str, list[Path]], fmt: FormatSpec, encoding: str, lengths: Counter) -> list[str]:
    """Read every file once (a token without a tag is an error at its line): the sorted set of its tags."""
    tags: set[str] = set()
    for _, sentence in _sentences(files, fmt, encoding, lengths):
        tags.update(sentence.tags)
    if not tags:
        raise FlairsuiteError(f"{_file_names(files)}: no tag at all{_tag_hint(fmt)}")
    return sorted(tags)


def _label_type(fmt: FormatSpec) -> str:
    """The label name a PoS tagger of an own corpus predicts: the CoNLL-U column's name (`upos`, `xpos`), else `pos`."""
    if fmt.kind == "conllu" and isinstance(fmt.label, str) and fmt.label in CONLLU_COLUMNS:
        return fmt.label
    return "pos"


def _check_needed(folder: Path, files: dict[str, list[Path]], dev_fraction: Optional[float], needed: Sequence[str]) -> None:
    """For scoring a model on some splits only (`flairsuite evaluate`): each of `needed` is a file (dev: or a share of train)."""
    for split in needed:
        if split not in files and not (split == "dev" and dev_fraction is not None and "train" in files):
            words = " or ".join(f"'{word}'" for word in FILE_WORDS[split])
            raise FlairsuiteError(f"{folder}: no {split} file (no file name holds {words}): name it with `{split}: FILE`")


class _Settings(NamedTuple):
    """An entry's reading settings, checked (scheme still the entry's: it is chosen once the files are read)."""

    fmt: FormatSpec
    scheme: str
    dev_fraction: Optional[float]
    encoding: str
    task: str
    max_tokens: Optional[int]


def _settings(entry: Mapping[str, Any], name: str) -> _Settings:
    """The entry's reading settings (a preset's expanded, `format_names.with_preset`); a bad one: an error naming the
    corpus and the key."""
    try:
        _choice("format", entry.get("format", "column"), INPUT_FORMATS)
        given, entry = entry, with_preset(entry)
        fmt, scheme = _format(entry), _choice("scheme", entry.get("scheme", "auto"), SCHEMES)
        dev_fraction, encoding = _dev_fraction(entry.get("dev_fraction")), _encoding(entry.get("encoding", "utf-8"))
        task = _choice("task", entry.get("task", "ner"), OWN_TASKS)
        if task != "ner" and "scheme" in given:  # a preset's scheme is for NER; task pos reads tags as they are
            raise FlairsuiteError(f"scheme: applies to task ner only (task {task} reads every tag as it is)")
        if scheme == "io" and fmt.kind in SPAN_FORMATS:
            raise FlairsuiteError(f"scheme: io applies to tag columns (column, conllu); format {fmt.kind} holds spans")
        max_tokens = _max_tokens(entry.get("max_tokens", MAX_TOKENS))
        fmt = _resolved_header(replace(fmt, scheme="io") if scheme == "io" else fmt, task, scheme)
    except FlairsuiteError as err:
        raise FlairsuiteError(f"{name}: {err}") from None
    return _Settings(fmt, scheme, dev_fraction, encoding, task, max_tokens)


def _export_entry(entry: Mapping[str, Any], location: Path, name: str) -> Mapping[str, Any]:
    """The entry of an INCEpTION project export: format webanno (the default there; another is an error)."""
    if entry.get("format", "webanno") != "webanno":
        raise FlairsuiteError(f"{name}: format: an INCEpTION project export is read as webanno (its WebAnno TSV files), not {show(entry['format'])}")
    return {**entry, "format": "webanno"}


def _names_splits(folder: Path) -> bool:
    """Whether a folder names any split by a file or subfolder name (the rule of `find_files`)."""
    words = [word for split_words in FILE_WORDS.values() for word in split_words]
    for path in (p for p in folder.iterdir() if not p.name.startswith(".")):
        if path.is_file() and any(word in path.name.lower() for word in words):
            return True
        if path.is_dir() and path.name.lower() in words and _files_below(path):
            return True
    return False


Unsplit = tuple[dict[str, Path], Path, Optional[ExportReading]]


def _unsplit(location: Path, entry: Mapping[str, Any], export: bool, split_unsplit: bool) -> Optional[Unsplit]:
    """An unsplit corpus's documents (name -> file), the folder their names are relative to, and how an export was read;
    None where the files name the splits (`train:`, `dev:`, `test:`, or by file name) or a plain folder is not split."""
    if any(entry.get(split) is not None for split in SPLITS):
        return None
    if export:
        reading = read_export(location, entry.get("annotator"))
        return reading.documents, reading.root, reading
    if location.is_file():
        return {location.name: location}, location.parent, None
    if split_unsplit and location.is_dir() and not _names_splits(location) and _files_below(location):
        return {path.relative_to(location).as_posix(): path for path in _files_below(location)}, location, None
    return None


def _named_splits(folder: Path, entry: Mapping[str, Any], settings: _Settings, needed: Optional[Sequence[str]]) -> dict[str, list[Path]]:
    """The files of each split of a folder that names its splits, checked (for scoring a model: only those it reads)."""
    dev_fraction = settings.dev_fraction
    # scoring a model reads only the splits it scores (dev from a share of train needs train)
    wanted = SPLITS if needed is None else tuple(dict.fromkeys([*needed, *(["train"] if "dev" in needed and dev_fraction is not None else [])]))
    files = find_files(folder, entry, wanted)
    if needed is None:
        _check_splits(folder, files, dev_fraction)
    else:
        _check_needed(folder, files, dev_fraction, needed)
    return files


def _document_split(documents: dict[str, Path], location: Path, dev_fraction: Optional[float]) -> tuple[Optional[SplitRecord], dict[str, list[Path]]]:
    """The split of an unsplit corpus by document (None where it is split by sentence, once they are counted) and each split's files."""
    if dev_fraction is not None:
        raise FlairsuiteError(f"{location}: dev_fraction takes dev from a train file, and without train/dev/test files the corpus is "
                              f"split by document (or sentence) into train, dev and test (seed {SPLIT_SEED}): leave dev_fraction out")
    ordered = sorted(documents)
    if len(ordered) < MIN_DOCUMENTS:
        return None, {split: [documents[name] for name in ordered] for split in SPLITS}
    record = split_documents(ordered)
    return record, {split: [documents[name] for name in record.documents[split]] for split in SPLITS}


def own_corpus(entry: Mapping[str, Any], base: Path, needed: Optional[Sequence[str]] = None, split_unsplit: bool = True) -> DatasetSpec:
    """The DatasetSpec of the corpus `entry['path']` (below `base`; a folder, a file, or an INCEpTION project export) read by
    the entry's keys (module docstring).

    `needed`: only these splits must be there (a model scored on them), not train, dev and test as for training.
    `split_unsplit`: a folder without train/dev/test files is split by document; False (`evaluate`, scoring a new batch):
    its files must name the scored split (an export is split all the same)."""
    checked_keys(entry, KEYS)
    if not isinstance(entry.get("path"), str) or not entry["path"]:
        raise FlairsuiteError(f"path: {show(entry.get('path'))} is not a folder, e.g. path: data/letters/")
    location = (base / entry["path"]).resolve()
    name = entry.get("name", location.stem if location.is_file() else location.name)
    if not isinstance(name, str) or not name:
        raise FlairsuiteError(f"name: {show(name)} is not a corpus name, e.g. name: letters")
    if name in names():
        raise FlairsuiteError(f"name: '{name}' is a registered dataset; give your corpus another name")
    export = is_export(location) and not any(entry.get(split) is not None for split in SPLITS)
    if "annotator" in entry and not export:
        raise FlairsuiteError(f"{name}: {export_error(location, 'annotator')}")
    if "annotator" in entry and (not isinstance(entry["annotator"], str) or not entry["annotator"]):
        raise FlairsuiteError(f"{name}: annotator: {show(entry['annotator'])} is not an annotator's user name, e.g. annotator: anna")
    settings = _settings(_export_entry(entry, location, name) if export else entry, name)
    unsplit = _unsplit(location, entry, export, split_unsplit)
    record, reading, root = None, None, location
    if unsplit is None:
        files = _named_splits(location, entry, settings, needed)
    else:
        documents, root, reading = unsplit
        record, files = _document_split(documents, location, settings.dev_fraction)
    lengths: Counter = Counter()
    every = {"all": list(dict.fromkeys(path for paths in files.values() for path in paths))}  # each file read once
    if settings.task == "ner":
        scheme, rule, types = _scan(every, settings.fmt, settings.encoding, settings.scheme, lengths)
    else:
        scheme, rule, types = "bio", None, _scan_tags(every, settings.fmt, settings.encoding, lengths)
    if unsplit is not None and record is None:
        record = split_sentences(list(unsplit[0]), sum(lengths.values()), str(location))
    spec = _spec(name, location, settings, files, (scheme, rule, types), lengths, root)
    if unsplit is None:
        return spec
    title = f"INCEpTION project export in {location}" if reading is not None else spec.title
    named = {split: tuple((path.relative_to(root).as_posix(), sha256(path)) for path in paths) for split, paths in files.items()}
    return SplitCorpusSpec(**{**_fields_of(spec), "title": title, "part_checksums": named}, split=record, export=reading)


def _fields_of(spec: DatasetSpec) -> dict[str, Any]:
    """The fields of `spec` as they are (nested dataclasses and dicts not copied, unlike `dataclasses.asdict`)."""
    return {item.name: getattr(spec, item.name) for item in dataclass_fields(DatasetSpec)}


def _spec(name: str, folder: Path, settings: _Settings, files: dict[str, list[Path]], scheme_rule_types: tuple[str, Optional[str], list[str]],
          lengths: Counter, root: Path) -> DatasetSpec:
    """The DatasetSpec of an own corpus read; file names in the record are relative to `root`."""
    scheme, rule, types = scheme_rule_types
    fmt, max_tokens = settings.fmt, settings.max_tokens
    return DatasetSpec(
        name=name,
        title=f"own corpus in {folder}",
        language="unknown",
        task=settings.task,
        license="unknown",
        folder=str(folder),
        label_type="ner" if settings.task == "ner" else _label_type(fmt),
        format=replace(fmt, scheme=scheme),
        types=tuple(types),
        encoding=settings.encoding,
        splits={split: FileSpec(split, (str(paths[0]),), parts=tuple(map(str, paths)) if len(paths) > 1 else ()) for split, paths in files.items()},
        fetch="own",
        dev_fraction=settings.dev_fraction,
        checksums={split: sha256(paths[0]) for split, paths in files.items() if len(paths) == 1},
        scheme_rule=rule,
        max_tokens=max_tokens,
        long_sentences=0 if max_tokens is None else sum(count for length, count in lengths.items() if length > max_tokens),
        part_checksums={split: tuple((str(path.relative_to(root)), sha256(path)) for path in paths)
                        for split, paths in files.items() if len(paths) > 1},
    )


def corpus_record(spec: DatasetSpec) -> dict[str, Any]:
    """What an own corpus's runs depend on, for their fingerprint and metrics.json: reading settings, scheme, labels, file checksums, dev_fraction.

    The folder is not part of it: the same files elsewhere are the same corpus. A split of several files lists each (its
    path in the folder and checksum). Keys added since the first records appear only where they change what is read
    (`header: true`, `sentence_end`, `line_break`, a webanno layer, `max_tokens` where some sentence is longer), so a corpus
    read as before keeps its fingerprint.
    """
    fields = asdict(spec.format)
    files: dict[str, Any] = {}
    for split, entry in spec.splits.items():
        if split in spec.part_checksums:
            files[split] = [{"file": name, "sha256": digest} for name, digest in spec.part_checksums[split]]
        else:
            files[split] = {"file": Path(entry.files[0]).name, "sha256": spec.checksums[split]}
    return {
        **({"task": spec.task} if spec.task != "ner" else {}),  # NER corpora's records (and fingerprints) stay as they were
        "format": {**{key: value for key, value in fields.items() if key in FORMAT_RECORD},
                   **{key: fields[key] for key in NEW_FORMAT_RECORD if fields[key] not in (None, False)}},
        "encoding": spec.encoding,
        "scheme": spec.format.scheme,
        "labels": list(spec.types),
        "files": files,
        "dev_fraction": spec.dev_fraction,
        **({"max_tokens": spec.max_tokens} if spec.long_sentences else {}),
        **({"split": split_record(spec)} if split_record(spec) is not None else {}),  # a corpus the suite split: where each document went
    }


def entry_from_texts(entry: Mapping[str, str]) -> dict[str, Any]:
    """An entry from command-line texts: `text`, `label` and `max_tokens` as integers and `dev_fraction` as a number where
    they read as such; `max_tokens=null` (or none) as null."""
    typed: dict[str, Any] = dict(entry)
    for key, convert in (("text", int), ("label", int), ("dev_fraction", float), ("max_tokens", int)):
        try:
            typed[key] = convert(entry[key])
        except (KeyError, ValueError):
            pass
    if str(typed.get("max_tokens", "")).lower() in ("null", "none"):
        typed["max_tokens"] = None
    return typed


def is_folder_argument(argument: str) -> bool:
    """Whether a command's NAME_OR_PATH argument means a folder.

    It does when it has a path separator, or names something on disk and no registered name (a file is then a one-line error).
    """
    return "/" in argument or "\\" in argument or (argument not in names() and Path(argument).exists())

