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
