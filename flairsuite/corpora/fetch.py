"""`flairsuite corpora fetch`: download, verify and atomically install the files of a dataset.

Plain files come from their registered URL, zip members from their archive (each URL is
downloaded once per run), and derived files are rebuilt from their `derive_sources`. A file is
checked against its registered size and checksums and gets its final name only when complete.
"""

import gzip
import hashlib
import http.client
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tqdm import tqdm

from flairsuite.corpora.readers import read_column
from flairsuite.corpora.registry import DatasetSpec, FileSpec, FormatSpec, dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file

TIMEOUT_S = 60
CHUNK_BYTES = 1 << 20
PROGRESS_MIN_BYTES = 4 << 20
LER_FORMAT = FormatSpec(kind="column", sep="space", text=0, label=1)

Sentence = tuple[tuple[str, ...], tuple[str, ...]]
"""A labeled sentence: its tokens and their tags."""


def one_line(text: object) -> str:
    """`text` with all whitespace runs (newlines included) collapsed to one space."""
    return " ".join(str(text).split())


def download(url: str, dest: Path, target: Path) -> None:
    """Stream `url` into `dest` (progress bar for big files); errors name `url` and `target`."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, dest.open("wb") as out:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            small = total is not None and total < PROGRESS_MIN_BYTES
            with tqdm(total=total, unit="B", unit_scale=True, desc=target.name, leave=False, disable=small) as bar:
                for chunk in iter(lambda: response.read(CHUNK_BYTES), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (OSError, http.client.HTTPException) as err:
        reason = err if isinstance(err, urllib.error.HTTPError) else getattr(err, "reason", err)
        raise FlairsuiteError(
            f"cannot download {url} to {target}: {one_line(reason)} "
            "(offline? download it elsewhere and place it there by hand)"
        ) from None


class Downloads:
    """The downloads of one fetch run: each URL is fetched once into a private folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: dict[str, Path] = {}

    def get(self, url: str, target: Path) -> Path:
        """The local copy of `url`, downloaded on first use (`target`: the file it is needed for)."""
        if url not in self.paths:
            name = Path(urllib.parse.urlparse(url).path).name or "download"
            path = self.folder / f"{len(self.paths)}-{name}"
            download(url, path, target)
            self.paths[url] = path
        return self.paths[url]


def digests(path: Path) -> dict[str, object]:
    """Size, sha256 and git blob id (as `git hash-object`) of a file."""
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(f"blob {size}\0".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            sha256.update(chunk)
            blob.update(chunk)
    return {"size": size, "sha256": sha256.hexdigest(), "git blob": blob.hexdigest()}


def verify(path: Path, entry: FileSpec, url: str) -> str:
    """Check `path` against the registered size and checksums of `entry`; says what was checked."""
    expected = {"size": entry.bytes, "sha256": entry.sha256, "git blob": entry.git_blob}
    got = digests(path)
    checked = []
    for what, want in expected.items():
        if want is None:
            continue
        if want != got[what]:
            raise FlairsuiteError(f"checksum mismatch for {url}: expected {what} {want}, got {got[what]}; nothing written")
        checked.append(what)
    return f"{', '.join(checked)} verified" if checked else "no checksum registered"


def extract(archive: Path, member: str, dest: Path, url: str) -> None:
    """Copy `member` of the zip file `archive` (downloaded from `url`) to `dest`."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            if member not in zipped.namelist():
                raise FlairsuiteError(f"the archive {url} has no member '{member}'")
            with zipped.open(member) as source, dest.open("wb") as out:
                shutil.copyfileobj(source, out, CHUNK_BYTES)
    except zipfile.BadZipFile as err:
        raise FlairsuiteError(f"{url} is not a readable zip archive ({one_line(err)})") from None


def install_download(spec: DatasetSpec, entry: FileSpec, root: Path, downloads: Downloads) -> str:
    """Download (or extract) one file to its expected path, verified; a line saying what was done."""
    target = spec.expected_path(entry, root)
    source = downloads.get(entry.url, target)
    with atomic_file(target) as temp:
        if entry.member:
            extract(source, entry.member, temp, entry.url)
        else:
            shutil.copyfile(source, temp)
        checked = verify(temp, entry, entry.url)
        size = temp.stat().st_size
    origin = f" ({entry.member} from the archive)" if entry.member else ""
    return f"downloaded {size:,} bytes{origin} -> {target} ({checked})"


def read_sentences(path: Path) -> Iterator[Sentence]:
    """The sentences of a LER `token tag` file (plain or .gz, LF or CRLF)."""
    for sentence in read_column(path, LER_FORMAT, "utf-8"):
        yield tuple(sentence.tokens), tuple(sentence.tags)


def subtract_sentences(corpus: Iterable[Sentence], remove: Iterable[Sentence]) -> Iterator[Sentence]:
    """Multiset difference, in corpus order: a sentence is dropped while `remove` still owes copies of it."""
    owed = Counter(remove)
    for sentence in corpus:
        if owed[sentence] > 0:
            owed[sentence] -= 1
        else:
            yield sentence


def ler_train_records(courts: list[Sentence], minus: list[Sentence]) -> list[str]:
    """LER train rebuilt as court sentences minus dev and test: one `token tag` block per sentence."""
    return [
        "".join(f"{token} {tag}\n" for token, tag in zip(tokens, tags)) + "\n"
        for tokens, tags in subtract_sentences(courts, minus)
    ]


def court_text_records(courts: list[Sentence], minus: list[Sentence]) -> list[str]:
    """Court sentences as space-joined token lines, without any whose tokens occur in `minus`."""
    removed = {tokens for tokens, _ in minus}
    return [" ".join(tokens) + "\n" for tokens, _ in courts if tokens not in removed]


DERIVATIONS: dict[str, Callable[[list[Sentence], list[Sentence]], list[str]]] = {
    "ler_train_reconstructed": ler_train_records,
    "ler_court_sentences": court_text_records,
}


def write_gzip(records: Iterable[str], path: Path) -> str:
    """Write `records` as UTF-8, gzip'ed without name or time stamp; sha256 of the uncompressed bytes."""
    digest = hashlib.sha256()
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
        for record in records:
            data = record.encode("utf-8")
            digest.update(data)
            out.write(data)
    return digest.hexdigest()


def derived_path(spec: DatasetSpec, entry: FileSpec, root: Path) -> Path:
    """A derived file is written gzip'ed under the last candidate name of its entry."""
    return spec.directory(root) / f"{entry.files[-1]}.gz"


def install_derived(spec: DatasetSpec, entry: FileSpec, root: Path, downloads: Downloads) -> str:
    """Rebuild one derived file from its registered sources, checked against `derived_sha256`."""
    if entry.derive not in DERIVATIONS:
        raise FlairsuiteError(f"{spec.name} {entry.name}: unknown derivation '{entry.derive}' in the registry")
    target = derived_path(spec, entry, root)
    inputs = {
        group: [s for url in entry.derive_sources[group] for s in read_sentences(downloads.get(url, target))]
        for group in ("courts", "minus")
    }
    records = DERIVATIONS[entry.derive](inputs["courts"], inputs["minus"])
    with atomic_file(target) as temp:
        digest = write_gzip(records, temp)
        if entry.derived_sha256 and digest != entry.derived_sha256:
            raise FlairsuiteError(
                f"checksum mismatch for {target.name} rebuilt from {entry.derive_sources['courts'][0]} and the other "
                f"registered sources: expected sha256 {entry.derived_sha256}, got {digest}; nothing written"
            )
    checked = "sha256 verified" if entry.derived_sha256 else "no checksum registered"
    return f"rebuilt {len(records):,} sentences -> {target} ({checked})"


def fetch_entry(spec: DatasetSpec, entry: FileSpec, root: Path, downloads: Downloads) -> str:
    """Make one split or source present; a line saying what was done."""
    present = spec.locate(entry, root)
    if present is not None:
        return f"present ({present})"
    if not entry.url:
        return install_derived(spec, entry, root, downloads)
    try:
        return install_download(spec, entry, root, downloads)
    except FlairsuiteError:
        if not entry.derive:
            raise
    return install_derived(spec, entry, root, downloads) + "; the official file could not be downloaded"


def not_redistributable(spec: DatasetSpec, missing: list[FileSpec], root: Path) -> FlairsuiteError:
    """The error for a user-supplied dataset with missing files: where to get them, where to put them."""
    files = ", ".join(f"{entry.files[0]} ({entry.name})" for entry in missing)
    return FlairsuiteError(
        f"{spec.name} is not redistributable, so it cannot be downloaded: get it from {spec.homepage} "
        f"and place {files} in {spec.directory(root)}"
    )


def not_rebuildable(spec: DatasetSpec, manual: list[FileSpec], root: Path) -> FlairsuiteError:
    """The error for sources that only a person can make, naming the PROVENANCE.md to follow."""
    parts = []
    for entry in manual:
        provenance = (Path(spec.folder) / entry.files[0]).parent / "PROVENANCE.md"
        parts.append(f"'{entry.name}' ({spec.expected_path(entry, root)}: follow {provenance} of the shared corpora)")
    return FlairsuiteError(f"{spec.name}: cannot rebuild automatically: " + "; ".join(parts))


def fetch_spec(spec: DatasetSpec, root: Path) -> Iterator[str]:
    """Fetch the missing files of `spec` into the corpora directory `root`; one line per file."""
    missing = [entry for entry in spec.entries.values() if spec.locate(entry, root) is None]
    if spec.fetch == "user_supplied" and missing:
        raise not_redistributable(spec, missing, root)
    manual = [entry for entry in missing if not (entry.url or entry.derive)]
    with tempfile.TemporaryDirectory(prefix="flairsuite-fetch-") as folder:
        downloads = Downloads(Path(folder))
        for entry in spec.entries.values():
            if entry not in manual:
                yield f"{spec.name} {entry.name}: {fetch_entry(spec, entry, root, downloads)}"
    if manual:
        raise not_rebuildable(spec, manual, root)


def fetch(name: str, root: Path) -> Iterator[str]:
    """Fetch registered dataset `name` into the corpora directory `root`; one line per file."""
    yield from fetch_spec(dataset(name), root)
