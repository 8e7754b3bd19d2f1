"""What the device script (`device_train.py`) and `reassemble.py` share: model folders as tar files cut into parts, batches of
parts that one `run` call can bring back, and the manifest that lists them with their SHA-256.

The device tool brings back at most 8 files of 16 MiB each and 64 MiB together per call, named in letters, digits, '.', '_'
and '-' alone, at most two folders down. A part is at most `PART_BYTES` (15 MiB); a batch is at most `BATCH_PARTS` parts and
`BATCH_BYTES` together, so that a batch, its manifest and the log are at most 6 files and under 64 MiB.
"""

import hashlib
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any, Iterable

MIB = 1024 * 1024
PART_BYTES = 15 * MIB
BATCH_PARTS = 4
BATCH_BYTES = 60 * MIB
MANIFEST = "manifest.json"
LOG = "log.txt"
MAX_FILES = 8  # what comes back from $OUT per call
SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
SKIPPED = re.compile(r"^(checkpoint.*|\..*|.*\.part|.*\.lock)$")  # checkpoints, locks, half-written files: never brought back


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that travel back (no checkpoint, lock or temporary file)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and not SKIPPED.match(p.name))


def write_tar(folder: Path, files: Iterable[Path], tar_path: Path, replaced: dict[str, bytes]) -> None:
    """An uncompressed, reproducible tar of `files` under the folder's name; `replaced`: name -> bytes written instead."""
    with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            data = replaced.get(path.name)
            info = tarfile.TarInfo(f"{folder.name}/{path.name}")
            info.size, info.mtime, info.mode = (len(data) if data is not None else path.stat().st_size), 0, 0o644
            with (io.BytesIO(data) if data is not None else path.open("rb")) as handle:
                tar.addfile(info, handle)


def split_file(path: Path, folder: Path, part_bytes: int = PART_BYTES) -> list[dict[str, Any]]:
    """Cut `path` into `<name>.000`, `<name>.001`, ... of at most `part_bytes` in `folder`; their entries."""
    parts = []
    with path.open("rb") as source:
        while block := source.read(part_bytes):
            part = folder / f"{path.name}.{len(parts):03d}"
            part.write_bytes(block)
            parts.append({"file": part.name, "bytes": len(block), "sha256": hashlib.sha256(block).hexdigest()})
    return parts


def assign_batches(parts: list[dict[str, Any]], batch_parts: int = BATCH_PARTS, batch_bytes: int = BATCH_BYTES) -> int:
    """Number the parts' batches (1, 2, ...) in order, each within the limits; the number of batches."""
    batch, count, size = 1, 0, 0
    for part in parts:
        if count and (count + 1 > batch_parts or size + part["bytes"] > batch_bytes):
            batch, count, size = batch + 1, 0, 0
        part["batch"] = batch
        count, size = count + 1, size + part["bytes"]
    return batch if parts else 0


def read_manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
