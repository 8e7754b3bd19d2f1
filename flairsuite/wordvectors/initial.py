"""The fastText vectors a `train-fasttext --init` run continues on other text: where they are, their full model, their digest.

`--init` names vectors (`de`: `wordvectors/de-fasttext`) or a vectors folder. Only a folder that keeps the full gensim
model (`model/`, written by `train-fasttext` unless `--no-model`) can be continued: plain vectors hold neither the n-gram
vectors nor the output layer that a vocabulary update trains on.

The new run takes the model's vector size, n-gram buckets, window and seed (a `--dim` or `--buckets` that differs is
refused: the arrays fix them); `--min-count` applies to the new text's words (default: the model's), and `--epochs`
counts passes over the new text, with gensim's learning rate decaying linearly from its start value again.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gensim.models import FastText

from flairsuite.errors import FlairsuiteError
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file
from flairsuite.wordvectors.store import MODEL_FOLDER, VECTORS_FILE, model_file, vectors_digest, vectors_folder

FIXED = ("dim", "buckets")  # what the model's arrays fix: a different value is refused


@dataclass(frozen=True)
class InitialVectors:
    """The vectors folder `--init` names, the digest of its vectors files and its summary.json (empty without one)."""

    folder: Path
    digest: str
    summary: dict[str, Any]

    @property
    def model_path(self) -> Path:
        return model_file(self.folder)

    def load(self) -> FastText:
        """The full model; a damaged one is a one-line error."""
        try:
            return FastText.load(str(self.model_path))
        except Exception as err:  # gensim raises anything an unpickler or numpy may: the file is not a model
            raise FlairsuiteError(f"{self.model_path}: not a gensim FastText model ({type(err).__name__}: {err})") from None

    def record(self) -> dict[str, Any]:
        """What the new run's summary.json says of where it started."""
        return {
            "vectors": str(self.folder),
            "sha256": self.digest,
            "vocabulary": self.summary.get("vocabulary"),
            "language": self.summary.get("language"),
        }


def initial_vectors(init: str, vectors_dirs: tuple[Path, ...]) -> InitialVectors:
    """The vectors folder `init` names (a folder holding vectors.kv, else `<dir>/INIT-fasttext` below one of `vectors_dirs`);
    none, or one without its full model: a one-line error."""
    given = Path(init)
    candidates = list(dict.fromkeys([given, *(vectors_folder(folder, init) for folder in vectors_dirs)]))
    found = [c for c in candidates if (c / VECTORS_FILE).is_file()]
    if not found:
        raise FlairsuiteError(f"--init {init}: no vectors folder {' nor '.join(map(str, candidates))} holds {VECTORS_FILE}")
    folder = found[0]
    if not model_file(folder).is_file():
        raise FlairsuiteError(
            f"--init {init}: {folder} was trained without its full model ({MODEL_FOLDER}/ is missing); "
            f"train it again with `flairsuite train-fasttext` (without --no-model) to continue it"
        )
    summary = read_summary_file(folder / SUMMARY_FILE, kind="a train-fasttext summary") if (folder / SUMMARY_FILE).is_file() else {}
    return InitialVectors(folder, vectors_digest(folder), summary)
