"""INCEpTION project exports read as they come: the ZIP of INCEpTION's "Export backup archive", or its unpacked folder.

Its layout, as the INCEpTION user guide ("Export") gives it:

    exportedproject<ID>.json                    the project's metadata (`<project ID>.json`)
    source/<document>                           the original files
    annotation/<document>/<user>.<ext>          each annotator's version, in the export's secondary format;
                                                the pseudo-user INITIAL_CAS is the document as imported
    curation/<document>/CURATION_USER.<ext>     the curated version (documents whose curation is finished)
    annotation_ser/, curation_ser/, log/        INCEpTION's own files (`.ser` CASes): not read

Rules:

- A folder, or a `.zip` file, is an export when its top holds `source/` or a `.json` file, and `annotation/`,
  `curation/`, `annotation_ser/` or `curation_ser/`. In a ZIP that top may be the one folder a re-zipped download
  wraps everything in.
- Only WebAnno TSV (`.tsv`, the secondary format "WebAnno TSV v3.3") is read: annotation files in another format, in
  several formats (AUTO gives each document its own), or none at all (no secondary format chosen) are a one-line error
  that says how to export again.
- By default each document's curated version is read (`curation/<document>/CURATION_USER.tsv`); a document without
  one is skipped, and the skipped ones are listed (the curated ones are the project's result; a half-annotated
  document is not). No curated document at all: an error naming the annotators, for `annotator:`.
- `annotator: NAME` (`--annotator NAME`) reads NAME's version of each document (`annotation/<document>/NAME.tsv`) and
  skips, listed, the documents NAME has none of. A NAME of no document: an error naming the annotators found
  (INITIAL_CAS is none: it holds no annotation).
- A ZIP is never unpacked into the working folder. Every member's path is checked first (an absolute path, a `..`
  part, a backslash, a drive letter or a symbolic link: a one-line error, nothing read); then only the chosen TSV
  members are copied into a private temporary folder (removed when the process ends) below a folder named like the
  archive, so that an error names `.../export.zip/curation/DOCUMENT/CURATION_USER.tsv:LINE`.
"""

import atexit
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError, InputError

ANNOTATION, CURATION, SOURCE = "annotation", "curation", "source"
CURATION_USER = "CURATION_USER"
INITIAL_CAS = "INITIAL_CAS"  # the document as imported: no annotator's version
OWN_FILES = ("annotation_ser", "curation_ser")  # INCEpTION's own CASes (an export without a secondary format has only these)
TSV = "tsv"
AGAIN = 'export the project again with the secondary format "WebAnno TSV v3.3"'
DRIVE = re.compile(r"[A-Za-z]:")
_COPIES: dict[tuple[str, int, int], Path] = {}  # (archive, mtime, size) -> the temporary folder its members went to


@dataclass(frozen=True)
class ExportReading:
    """Which version of each document of an export was read: `documents` maps a document to its file (below `root`)."""

    location: Path  # the export: its folder or ZIP file
    root: Path  # the folder the read files lie below (the export's folder, or the temporary copy of the ZIP's members)
    annotator: Optional[str]  # None: the curated versions
    documents: dict[str, Path]
    skipped: tuple[str, ...]  # documents without that version
    annotators: tuple[str, ...]  # every annotator of the export

    def lines(self) -> list[str]:
        """`read: curated version of 8 documents (curation/DOCUMENT/CURATION_USER.tsv); 2 without one skipped: ...`."""
        if self.annotator is None:
            read = f"read: the curated version of {len(self.documents)} documents ({CURATION}/DOCUMENT/{CURATION_USER}.{TSV})"
            skip = f"{len(self.skipped)} without one skipped: {', '.join(self.skipped)} (--annotator NAME reads an annotator's version; "
        else:
            read = f"read: annotator {self.annotator}'s version of {len(self.documents)} documents ({ANNOTATION}/DOCUMENT/{self.annotator}.{TSV})"
            skip = f"{len(self.skipped)} without one skipped: {', '.join(self.skipped)} ("
        annotators = f"annotators: {', '.join(self.annotators) or 'none'})"
        return [f"{read}; {skip}{annotators}" if self.skipped else read]

    def as_record(self) -> dict[str, Any]:
        """The versions read, as plain data: `{"version": "curation" or "annotator NAME", "documents": [...], "skipped": [...]}`."""
        version = "curation" if self.annotator is None else f"annotator {self.annotator}"
        return {"version": version, "documents": sorted(self.documents), "skipped": list(self.skipped)}


def _parts(name: str) -> list[str]:
    return [part for part in name.split("/") if part not in ("", ".")]


def _is_export(tops: set[str], files: set[str]) -> bool:
    """Whether a top level of folders `tops` and files `files` is an export's (module docstring)."""
    project = SOURCE in tops or any(name.lower().endswith(".json") for name in files)
    return project and any(name in tops for name in (ANNOTATION, CURATION, *OWN_FILES))


def is_export(location: Path) -> bool:
    """Whether `location` is read as an INCEpTION project export: a `.zip` file (checked as it is read), or a folder of the layout."""
    if location.is_file():
        return location.suffix.lower() == ".zip"
    if not location.is_dir():
        return False
    entries = list(location.iterdir())
    return _is_export({p.name for p in entries if p.is_dir()}, {p.name for p in entries if p.is_file()})


def _unsafe(info: zipfile.ZipInfo) -> Optional[str]:
    """Why a member's path is unsafe to copy out (None: it is safe)."""
    name = info.filename
    if name.startswith("/") or DRIVE.match(name):
        return "an absolute path"
    if "\\" in name or "\0" in name:
        return "a path with a backslash"
    if ".." in name.split("/"):
        return "a path with '..' that leads outside the archive"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    return None


def _members(archive: Path) -> tuple[list[str], str]:
    """The file members of a ZIP export (paths relative to its top) and the prefix of that top (a wrapping folder, or '')."""
    try:
        with zipfile.ZipFile(archive) as opened:
            infos = opened.infolist()
    except (zipfile.BadZipFile, OSError) as err:
        raise InputError(archive, None, f"not a readable ZIP archive ({err})") from None
    for info in infos:
        why = _unsafe(info)
        if why is not None:
            raise InputError(archive, None, f"member '{info.filename}' is {why}: an unsafe archive, refused (nothing was read)")
    names = [info.filename for info in infos if not info.is_dir()]
    for prefix in ("", *{_parts(name)[0] + "/" for name in names if len(_parts(name)) > 1}):
        inside = [name[len(prefix) :] for name in names if name.startswith(prefix)]
        if len(inside) == len(names) and _is_export({_parts(n)[0] for n in inside if len(_parts(n)) > 1}, {n for n in inside if len(_parts(n)) == 1}):
            return inside, prefix
    raise InputError(archive, None, f"a ZIP archive, but no INCEpTION project export: no {ANNOTATION}/ or {CURATION}/ folder beside "
                                    f"{SOURCE}/ or the project's .json at its top (INCEpTION: Export backup archive)")


def _versions(members: list[str]) -> tuple[dict[str, dict[str, str]], set[str], Counter]:
    """document -> {user (CURATION_USER for the curated one): member}, every document named, and the formats of the versions."""
    versions: dict[str, dict[str, str]] = {}
    documents: set[str] = set()
    formats: Counter = Counter()
    for member in members:
        parts = _parts(member)
        if parts[0] == SOURCE and len(parts) > 1:
            documents.add("/".join(parts[1:]))
        if parts[0] not in (ANNOTATION, CURATION) or len(parts) < 3:
            continue
        user, dot, extension = parts[-1].rpartition(".")
        if not dot or not user or extension == "ser" or (parts[0] == CURATION and user != CURATION_USER):
            continue  # INCEpTION's own CASes, a file without a format
        document = "/".join(parts[1:-1])
        documents.add(document)
        formats[extension.lower()] += 1
        if extension.lower() == TSV:
            versions.setdefault(document, {})[CURATION_USER if parts[0] == CURATION else user] = member
    return versions, documents, formats


def _check_formats(location: Path, formats: Counter) -> None:
    """Only WebAnno TSV, in every version (module docstring)."""
    found = ", ".join(f"{count} .{extension}" for extension, count in sorted(formats.items()))
    if not formats:
        raise InputError(location, None, f"no annotation files in {ANNOTATION}/ or {CURATION}/ (exported without a secondary format): {AGAIN}")
    if TSV not in formats:
        raise InputError(location, None, f"no WebAnno TSV files, its annotation files are {found}: {AGAIN}")
    if len(formats) > 1:
        raise InputError(location, None, f"its documents are in several formats ({found}): {AGAIN}, not AUTO")


def _chosen(location: Path, versions: dict[str, dict[str, str]], annotator: Optional[str], annotators: tuple[str, ...]) -> dict[str, str]:
    """document -> the member read: the curated version, or `annotator`'s (module docstring)."""
    known = f"its annotators: {', '.join(annotators) or 'none'}"
    if annotator is None:
        chosen = {document: users[CURATION_USER] for document, users in versions.items() if CURATION_USER in users}
        if not chosen:
            raise InputError(location, None, f"no curated document ({CURATION}/ holds none): read an annotator's version with "
                                             f"--annotator NAME (`annotator:` in an experiment file); {known}")
        return chosen
    if annotator == INITIAL_CAS:
        raise InputError(location, None, f"{INITIAL_CAS} is the document as imported, before any annotation, not an annotator; {known}")
    chosen = {document: users[annotator] for document, users in versions.items() if annotator in users}
    if not chosen:
        raise InputError(location, None, f"annotator '{annotator}' has no document in the export; {known}")
    return chosen


def _temporary_copy(archive: Path, prefix: str, members: list[str]) -> Path:
    """The members copied out of `archive` into a private temporary folder (once per archive and process): its root."""
    key = (str(archive.resolve()), archive.stat().st_mtime_ns, archive.stat().st_size)
    root = _COPIES.get(key)
    if root is None:
        base = Path(tempfile.mkdtemp(prefix="flairsuite-export-"))
        atexit.register(shutil.rmtree, base, True)
        root = _COPIES[key] = base / archive.name
    member = ""
    try:
        with zipfile.ZipFile(archive) as opened:
            for member in members:
                target = root.joinpath(*_parts(member))
                if not target.is_file():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with opened.open(prefix + member) as source, target.open("wb") as copy:
                        shutil.copyfileobj(source, copy)
    except (zipfile.BadZipFile, RuntimeError, zlib.error, OSError, EOFError) as err:
        raise InputError(archive, None, f"cannot read member {member} ({err})") from None
    return root


def read_export(location: Path, annotator: Optional[str] = None) -> ExportReading:
    """The documents of the export at `location` (a folder or a ZIP file) and the version of each that is read (module docstring)."""
    if location.is_file():
        members, prefix = _members(location)
    else:
        members, prefix = sorted(p.relative_to(location).as_posix() for p in location.rglob("*") if p.is_file()), ""
    versions, documents, formats = _versions(members)
    _check_formats(location, formats)
    annotators = tuple(sorted({user for users in versions.values() for user in users} - {CURATION_USER, INITIAL_CAS}))
    chosen = _chosen(location, versions, annotator, annotators)
    root = _temporary_copy(location, prefix, sorted(chosen.values())) if location.is_file() else location
    return ExportReading(location, root, annotator, {document: root.joinpath(*_parts(member)) for document, member in sorted(chosen.items())},
                         tuple(sorted(documents - set(chosen))), annotators)


def export_error(location: Path, key: str) -> FlairsuiteError:
    """The error for an export-only key (`annotator`) given for something that is no export."""
    return FlairsuiteError(f"{key}: applies to an INCEpTION project export ({ANNOTATION}/, {CURATION}/ beside {SOURCE}/ or the project's "
                           f".json, or its ZIP file) read whole, and {location} is none")
