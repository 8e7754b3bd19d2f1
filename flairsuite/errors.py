"""User-facing errors: each one prints as a single line and ends the command with a non-zero exit."""

import difflib
from pathlib import Path
from typing import Optional, Union


class FlairsuiteError(Exception):
    """An error the user can fix; its message is one line that says what is wrong and what to do."""


class InputError(FlairsuiteError):
    """Bad content in an input file, located by file and (where known) line number."""

    def __init__(self, path: Union[str, Path], line: Optional[int], message: str) -> None:
        self.path = Path(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {message}")


def unknown_name_error(kind: str, name: str, known: list[str]) -> FlairsuiteError:
    """An error for an unknown name that suggests the closest known ones."""
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else f" Known: {', '.join(known)}."
    return FlairsuiteError(f"unknown {kind} '{name}'.{hint}")


def read_utf8(path: Union[str, Path], what: str = "file") -> str:
    """The text of a UTF-8 file (a BOM kept as U+FEFF); a missing, unreadable or non-UTF-8 file is a one-line error,
    the last naming the line and column of the first bad byte."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, None, f"{what} not found") from None
    except IsADirectoryError:
        raise InputError(path, None, f"a folder, not a {what}") from None
    except OSError as err:
        raise InputError(path, None, f"cannot read the {what}: {err.strerror or err}") from None
    return decode_utf8(data, path)


def decode_utf8(data: bytes, path: Union[str, Path]) -> str:
    """`data` (the bytes of `path`, or of stdin) as UTF-8; not UTF-8: a one-line error naming the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise InputError(path, line, f"not valid utf-8: byte 0x{data[err.start]:02x} at column {column} (convert the file, e.g. with iconv)") from None

