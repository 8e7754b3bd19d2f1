"""The corpus registry: typed access to `registry.yaml`, with dataset options applied."""

import copy
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Optional, Union

from flairsuite.corpora.format_names import with_preset
from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.files.yaml_file import parse_yaml

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class FormatSpec:
    """How a file is read; see the header of registry.yaml for the meaning of each key."""

    kind: str
    sep: str = "whitespace"
    text: Union[int, str] = 0  # a column name where the file has a header
    label: Union[int, str] = 1
    comment: Optional[str] = None
    docstart: Optional[str] = None
    scheme: str = "bio"
    delimiter: str = ","
    quotechar: str = '"'
    column: int = 0
    field: str = "text"
    # lines: a line ending in a word broken by a hyphen goes on in the next line, joined as `predict` joins it
    # (flairsuite.corpora.line_ends); the user's own text files (`--corpus`, `adapt: text:`), not the registered sets
    join_line_ends: bool = False
    # own corpora (flairsuite/corpora/own.py), and registered sets read by a preset (format_names.PRESETS: hipe):
    header: Optional[bool] = False  # column: the first line names the columns; None: auto (readers.has_header)
    sentence_end: Optional[str] = None  # column: COLUMN:FLAG|FLAG, a token whose cell holds a flag ends its sentence
    document_comment: Optional[str] = None  # column: a comment line starting so begins a document (HIPE's document id)
    line_break: Optional[str] = None  # column: COLUMN:FLAG|FLAG, a hyphen token so flagged between two word pieces is a line-end break (break_marks.py)
    # own corpora only:
    layer: Optional[str] = None  # webanno: the span layer read (full or short name)
    feature: Optional[str] = None  # webanno: its feature that holds the entity type


@dataclass(frozen=True)
class FileSpec:
    """One split (labeled sets) or one source (raw text): local names and where it comes from."""

    name: str
    files: tuple[str, ...]
    url: Optional[str] = None
    bytes: Optional[int] = None
    sha256: Optional[str] = None
    git_blob: Optional[str] = None
    member: Optional[str] = None
    parts: tuple[str, ...] = ()  # own corpora: the files that together are the split, in reading order (then `files` names the first)
    derive: Optional[str] = None
    derive_sources: dict[str, list[str]] = field(default_factory=dict)
    derived_sha256: Optional[str] = None
    note: Optional[str] = None
    format: Optional[FormatSpec] = None
    document: Optional[str] = None


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset with its options resolved, or an own corpus (a folder of files, `own.py`)."""

    name: str
    title: str
    language: str
    task: str
    license: str
    folder: str
    label_type: Optional[str] = None
    format: Optional[FormatSpec] = None
    types: tuple[str, ...] = ()
    tag_map: dict[str, str] = field(default_factory=dict)
    encoding: str = "utf-8"
    splits: dict[str, FileSpec] = field(default_factory=dict)
    sources: dict[str, FileSpec] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    fetch: Optional[str] = None
    homepage: Optional[str] = None
    unlabeled_test: Optional[str] = None
    segmentation: str = "words"  # words, or characters (one token per character: Chinese raw text, CLUENER)
    provenance: Optional[str] = None  # where the files and their numbers come from
    # own corpora (flairsuite/corpora/own.py) only:
    dev_fraction: Optional[float] = None  # dev is this fixed, seeded share of train (labeled.py)
    checksums: dict[str, str] = field(default_factory=dict)  # split -> sha256 of its file
    scheme_rule: Optional[str] = None  # how the scheme was chosen, e.g. "auto: 12 E-/S- tags"
    max_tokens: Optional[int] = None  # a longer sentence is split (long_sentences.py); None: sentences as the files have them
    long_sentences: int = 0  # how many sentences of the files are longer than max_tokens
    part_checksums: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # split of several files -> (name, sha256) each

    def directory(self, root: Path) -> Path:
        """The dataset's folder below the corpora directory `root`."""
        return root / self.folder

    def locate(self, entry: FileSpec, root: Path) -> Optional[Path]:
        """The first candidate file of `entry` present under `root` (plain or `.gz`), else None."""
        for name in entry.files:
            for candidate in (self.directory(root) / name, self.directory(root) / f"{name}.gz"):
                if candidate.is_file():
                    return candidate
        return None

    def expected_path(self, entry: FileSpec, root: Path) -> Path:
        """Where `entry` is expected (its first candidate name)."""
        return self.directory(root) / entry.files[0]

    @property
    def entries(self) -> dict[str, FileSpec]:
        """Labeled splits, or the sources of a raw-text set."""
        return self.splits or self.sources

    @property
    def output_types(self) -> tuple[str, ...]:
        """Entity types (or tags) after the tag map."""
        if not self.tag_map:
            return self.types
        return tuple(dict.fromkeys(self.tag_map[t] for t in self.types))


@lru_cache(maxsize=1)
def _raw_registry() -> dict[str, dict[str, Any]]:
    path = resources.files("flairsuite.corpora").joinpath("registry.yaml")
    return parse_yaml(path.read_text(encoding="utf-8"), str(path))


def names() -> list[str]:
    """All registered dataset names, in registry order."""
    return list(_raw_registry())


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _file_specs(entries: dict[str, dict[str, Any]]) -> dict[str, FileSpec]:
    specs = {}
    for name, entry in entries.items():
        entry = dict(entry)
        fmt = entry.pop("format", None)
        specs[name] = FileSpec(
            name=name,
            files=tuple(entry.pop("files")),
            format=FormatSpec(**fmt) if fmt else None,
            **entry,
        )
    return specs


def language_segmentation(language: str) -> str:
    """How raw text of `language` splits into tokens: `characters` if its raw-text set says so (Chinese), else `words`."""
    found = {dataset(name).segmentation for name in names() if _raw_registry()[name].get("task") == "raw" and _raw_registry()[name].get("language") == language}
    return "characters" if "characters" in found else "words"


def dataset(name: str, /, **options: Optional[str]) -> DatasetSpec:
    """The registry entry `name` with `options` (e.g. granularity='coarse') applied; None means default."""
    raw = _raw_registry()
    if name not in raw:
        raise unknown_name_error("dataset", name, names()) from None
    entry = copy.deepcopy(raw[name])
    declared = entry.pop("options", {})
    chosen = {}
    for key, value in options.items():
        if value is None:
            continue
        if key not in declared:
            valid = ", ".join(declared) or "none"
            raise FlairsuiteError(f"dataset '{name}' has no option '{key}' (its options: {valid})")
        if str(value) not in declared[key]["values"]:
            valid = ", ".join(declared[key]["values"])
            raise FlairsuiteError(f"dataset '{name}': option {key}={value} is not one of: {valid}")
    for key, decl in declared.items():
        value = str(options.get(key) or decl["default"])
        chosen[key] = value
        entry = _merge(entry, decl["values"][value] or {})
    fmt = entry.pop("format", None)
    return DatasetSpec(
        name=name,
        format=FormatSpec(**with_preset(fmt, "kind")) if fmt else None,
        types=tuple(entry.pop("types", ())),
        splits=_file_specs(entry.pop("splits", {})),
        sources=_file_specs(entry.pop("sources", {})),
        options=chosen,
        **entry,
    )
