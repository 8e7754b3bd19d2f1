"""Shared helpers for the unit tests: tiny fixture files written into tmp_path."""

import gzip
from pathlib import Path
from typing import Callable, Union

import pytest


def write_file(path: Path, content: Union[str, bytes], compress: bool = False) -> Path:
    """Write `content` (str as UTF-8, or raw bytes) to `path`, gzip-compressed if asked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """`write("sturm/train_sturm.conll", "A O\\n")` -> the path of that file below tmp_path."""

    def _write(relative: str, content: Union[str, bytes], compress: bool = False) -> Path:
        return write_file(tmp_path / relative, content, compress)

    return _write


STURM_DEV = "Berlin B-place\nist O\nschön O\n"
STURM_TEST = "Walden B-pers\nschrieb O\n"


@pytest.fixture
def sturm(tmp_path: Path, write: Callable[..., Path]) -> Callable[..., Path]:
    """Lay out a `sturm` folder; `sturm(train="...")` gives that train file and small dev/test files."""

    def _sturm(train: Union[str, bytes], dev: Union[str, bytes] = STURM_DEV, test: Union[str, bytes] = STURM_TEST) -> Path:
        write("sturm/train_sturm.conll", train)
        write("sturm/dev_sturm.conll", dev)
        write("sturm/test_sturm.conll", test)
        return tmp_path

    return _sturm


NAMES = ("Anna", "Karl", "Marie", "Otto", "Else")
PLACES = ("Berlin", "München", "Hamburg", "Wien", "Köln")
VERBS = ("besuchte", "verließ", "erreichte", "liebte")
DAYS = ("Montag", "Dienstag", "Freitag", "Sonntag")


def german_text(documents: int = 300) -> str:
    """`documents` short German sentences from one template, one per line (every word in every split)."""
    lines = []
    for i in range(documents):
        day, verb, name, place = DAYS[i % 4], VERBS[i // 4 % 4], NAMES[i % 5], PLACES[i // 5 % 5]
        lines.append(f"Am {day} {verb} {name} die Stadt {place}, sagte der König vor Gericht.")
    return "\n".join(lines) + "\n"
