"""The one reader and writer of `predictions.tsv`: one line per token (token, gold tag, predicted tag, tab-separated), a
blank line after each sentence; a tagging run writes its test split's beside its metrics.json (`flairsuite.experiments.runner`),
`evaluate --predictions` any split's."""

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from flairsuite.errors import InputError, read_utf8
from flairsuite.files.atomic import write_text

PREDICTIONS_FILE = "predictions.tsv"


class Prediction(NamedTuple):
    """One test token: its text, gold and predicted tag, and the file line it came from."""

    token: str
    gold: str
    predicted: str
    line: int


def predictions_tsv(sentences: Iterable[Iterable[tuple[str, str, str]]]) -> str:
    """The text of a predictions.tsv of `sentences`, each its (token, gold tag, predicted tag) triples."""
    lines: list[str] = []
    for sentence in sentences:
        lines += [f"{token}\t{gold}\t{predicted}" for token, gold, predicted in sentence] + [""]
    return "\n".join(lines)


def write_predictions(path: Path, sentences: Iterable[Iterable[tuple[str, str, str]]]) -> None:
    """Write the predictions.tsv of `sentences` (`predictions_tsv`) to `path`, atomically."""
    write_text(path, predictions_tsv(sentences))


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
