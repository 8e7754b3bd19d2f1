"""Where word vectors live."""

from pathlib import Path

VECTORS_FILE = "vectors.kv"  # gensim KeyedVectors.save; big arrays go to side files `vectors.kv.*.npy`


def vectors_folder(out: Path, name: str) -> Path:
    """The folder of the vectors named `name` (a language) below `out`: `<out>/<name>-fasttext`."""
    return out / f"{name}-fasttext"


def vectors_files(folder: Path) -> list[Path]:
    """The vectors file and its gensim side files, sorted."""
    return sorted(p for p in folder.glob(f"{VECTORS_FILE}*") if p.is_file())
