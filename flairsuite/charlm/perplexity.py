"""Perplexity per character of a trained character LM on the text of a labeled corpus.

The LM's perplexity on its own held-out text (`summary.json`, valid) is the in-domain reference; on a tagging corpus's
sentences it measures how far that corpus lies from what the LM learned (archaic against modern spelling, novels against
tweets). The sentences are read as the suite's embedding reads them: tokens joined by spaces, or without spaces for an
LM of a language written without them; one sentence a document, each ending with the document delimiter.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from flairsuite.charlm.batches import StreamBatches
from flairsuite.charlm.storage import load_language_model
from flairsuite.charlm.summary import learned_unspaced
from flairsuite.charlm.trainer import evaluate
from flairsuite.errors import FlairsuiteError
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file
from flairsuite.rawtext.prepare import DELIMITER
from flairsuite.settings_schema import POSITIVE_NUMBER

WINDOW = 250  # characters a window, as the recipes' sequence_length
STREAMS = 100  # parallel streams at most, as the trainer's validation
WINDOWS_A_STREAM = 20  # fewer streams for a short text: each stream at least this many windows (few cold starts)
UNK = "<unk>"


@dataclass(frozen=True)
class LMFile:
    """A trained LM file and the summary `train-charlm` wrote beside it (empty for an LM from elsewhere)."""

    path: Path
    summary: dict[str, Any]

    @property
    def unspaced(self) -> bool:
        """Whether it learned a language written without spaces (its summary's language), so reads text so."""
        return learned_unspaced(self.summary)

    @property
    def own_valid_perplexity(self) -> Optional[float]:
        return self.summary.get("valid_ppl")


def lm_file(location: Path) -> LMFile:
    """The LM at `location`: a `best-lm.pt` (or other `.pt`) or a model folder holding `best-lm.pt`."""
    path = location / "best-lm.pt" if location.is_dir() else location
    if not path.is_file():
        raise FlairsuiteError(f"{location}: no character LM there (give a best-lm.pt or a folder of train-charlm holding one)")
    summary_path = path.parent / SUMMARY_FILE
    summary = (read_summary_file(summary_path, optional={"valid_ppl": POSITIVE_NUMBER}, kind="a train-charlm summary")
               if summary_path.is_file() else {})
    return LMFile(path, summary)


def load_model(lm: LMFile) -> Any:
    """Flair's LanguageModel of `lm`; a file that is none is a one-line error."""
    return load_language_model(lm.path)


def sentences_text(sentences: Iterable[Sequence[str]], unspaced: bool) -> str:
    """The sentences (token lists) as one text, one sentence a document."""
    joiner = "" if unspaced else " "
    return "".join(joiner.join(tokens) + DELIMITER for tokens in sentences)


@dataclass(frozen=True)
class TextPerplexity:
    characters: int  # of the text
    unknown: int  # characters outside the LM's dictionary, read as <unk>
    scored: int  # characters scored: the streams' full windows
    perplexity: float  # per scored character

    @property
    def unknown_rate(self) -> float:
        return self.unknown / self.characters if self.characters else 0.0


def character_ids(text: str, item2idx: dict[bytes, int]) -> tuple[np.ndarray, int]:
    """The LM's ids of `text`'s characters and how many were unknown (mapped to `<unk>`)."""
    unk = item2idx.get(UNK.encode("utf-8"))
    lookup: dict[str, int] = {}
    for char in set(text):
        index = item2idx.get(char.encode("utf-8"), unk)
        if index is None:
            raise FlairsuiteError(f"character {char!r} is not in the LM's dictionary, which has no {UNK}")
        lookup[char] = index
    ids = np.fromiter((lookup[char] for char in text), dtype=np.int64, count=len(text))
    unknown = sum(text.count(char) for char in lookup if char.encode("utf-8") not in item2idx)
    return ids, unknown


def text_perplexity(model: Any, text: str) -> TextPerplexity:
    """Perplexity per character of Flair LanguageModel `model` on `text`, read in the model's direction."""
    ids, unknown = character_ids(text, model.dictionary.item2idx)
    if len(ids) < 2:
        raise FlairsuiteError("the text is too short to score (fewer than 2 characters)")
    length = min(WINDOW, len(ids) - 1)
    streams = max(1, min(STREAMS, (len(ids) - 1) // (length * WINDOWS_A_STREAM)))
    batches = StreamBatches(ids, streams, length, forward=model.is_forward_lm)
    nats = evaluate(model, batches, length)
    scored = len(batches.windows(length)) * length * streams
    return TextPerplexity(len(text), unknown, scored, math.exp(nats))
