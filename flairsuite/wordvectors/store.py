"""Where word vectors live."""

import hashlib
from pathlib import Path

VECTORS_FILE = "vectors.kv"  # gensim KeyedVectors.save; big arrays go to side files `vectors.kv.*.npy`
MODEL_FOLDER = "model"  # the full gensim FastText model (word and n-gram vectors, output layer): what `--init` continues
MODEL_FILE = "fasttext.model"  # gensim FastText.save inside MODEL_FOLDER, big arrays in side files `fasttext.model.*.npy`


def vectors_folder(out: Path, name: str) -> Path:
    """The folder of the vectors named `name` (a language) below `out`: `<out>/<name>-fasttext`."""
    return out / f"{name}-fasttext"


def vectors_files(folder: Path) -> list[Path]:
    """The vectors file and its gensim side files, sorted."""
    return sorted(p for p in folder.glob(f"{VECTORS_FILE}*") if p.is_file())


def model_file(folder: Path) -> Path:
    """The full model's main file inside the vectors folder `folder`."""
    return folder / MODEL_FOLDER / MODEL_FILE


def folder_bytes(folder: Path) -> int:
    """Bytes of all files below `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def vectors_digest(folder: Path) -> str:
    """SHA-256 over the vectors files' names and bytes: the digest runs record for `fasttext:NAME` (`embeddings.artifact_digest`)."""
    digest = hashlib.sha256()
    for file in vectors_files(folder):
        digest.update(file.name.encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            while block := handle.read(1 << 22):
                digest.update(block)
    return digest.hexdigest()
