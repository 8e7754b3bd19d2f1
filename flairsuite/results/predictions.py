"""Read a run's `predictions.tsv`: one line per test token (token, gold tag, predicted tag, tab-separated), a blank
line between sentences, as `flairsuite.tagging.grid` writes it beside the run's metrics.json."""

from pathlib import Path
from typing import NamedTuple

from flairsuite.errors import InputError, read_utf8

PREDICTIONS_FILE = "predictions.tsv"


class Prediction(NamedTuple):
    """One test token: its text, gold and predicted tag, and the file line it came from."""

    token: str
    gold: str
    predicted: str
    line: int


def read_prediction_sentences(path: Path) -> list[list[Prediction]]:
    """The tokens of `path` per sentence (CRLF or LF line ends); a line without three tab-separated fields, and a file
    without tokens, are errors naming the file (and line)."""
    sentences: list[list[Prediction]] = [[]]
    for number, line in enumerate(read_utf8(path).split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            if sentences[-1]:
                sentences.append([])
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(path, number, f"expected token, gold tag and predicted tag separated by tabs, found {len(fields)} field(s)")
        sentences[-1].append(Prediction(fields[0], fields[1], fields[2], number))
    if not sentences[-1]:
        sentences.pop()
    if not sentences:
        raise InputError(path, None, "no tokens: a finished run writes one line per test token")
    return sentences
