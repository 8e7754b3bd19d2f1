"""A plain-text input read in pieces: checked once (UTF-8, not blank) without holding it, then decoded chunk by chunk.

`predict` and `suggest` read their texts this way, so that memory does not grow with the file: `scan` reads the
bytes once (a bad byte is the one-line error `read_utf8` gives, with its line and column; the length in characters
and bytes and whether it holds any text come back), `chunks` decodes them in blocks of `READ_BYTES` bytes with an
incremental decoder (a character cut by a block edge is completed by the next block). A leading BOM is dropped:
character offsets count from the character after it. Stdin is copied to a temporary file first (`spooled_stdin`),
so it is read as a file is. `progress` is the bar on stderr that counts the bytes read.
"""

import codecs
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Optional

from tqdm import tqdm

from flairsuite.errors import InputError

READ_BYTES = 1 << 16  # bytes per read
BOM = "\ufeff"
PROGRESS_DELAY = 1.0  # seconds before the progress bar shows: none for a short input
HEAD_CHARS = 64  # characters of the text kept after its leading whitespace (`TextInfo.head`)


@dataclass(frozen=True)
class TextInfo:
    """What `scan` learned of a file: its size in bytes, its characters (a leading BOM not counted), whether it
    started with a BOM, whether it holds any non-whitespace character, and its first characters after the leading whitespace."""

    size: int
    chars: int
    bom: bool
    blank: bool
    head: str


def open_input(path: Path, shown: Path, what: str = "file") -> BinaryIO:
    """`path` opened for reading bytes; missing, a folder or unreadable: a one-line error naming `shown`."""
    try:
        if path.is_dir():
            raise InputError(shown, None, f"a folder, not a {what}")
        return path.open("rb")
    except FileNotFoundError:
        raise InputError(shown, None, f"{what} not found") from None
    except OSError as err:
        raise InputError(shown, None, f"cannot read the {what}: {err.strerror or err}") from None


class Decoder:
    """UTF-8 of a byte stream, block by block; a bad byte is a one-line error naming `shown`, its line and byte column."""

    def __init__(self, shown: Path) -> None:
        self.shown = shown
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.position = 0  # bytes decoded before the current block
        self.lines = 0  # line feeds before the current block
        self.last_line_feed = -1  # offset of the last line feed before the current block

    def decode(self, block: bytes, final: bool = False) -> str:
        pending = self.decoder.getstate()[0]
        try:
            text = self.decoder.decode(block, final)
        except UnicodeDecodeError as err:
            raise self.error(pending + block, err.start, self.position - len(pending)) from None
        self.lines += block.count(b"\n")
        found = block.rfind(b"\n")
        if found >= 0:
            self.last_line_feed = self.position + found
        self.position += len(block)
        return text

    def error(self, data: bytes, start: int, offset: int) -> InputError:
        """The error for the bad byte `data[start]`, `data` starting at byte `offset` of the stream (as `decode_utf8` words it)."""
        line = self.lines + data.count(b"\n", 0, start) + 1
        found = data.rfind(b"\n", 0, start)
        column = start - found if found >= 0 else offset + start - self.last_line_feed
        return InputError(self.shown, line, f"not valid utf-8: byte 0x{data[start]:02x} at column {column} (convert the file, e.g. with iconv)")


def decoded(path: Path, shown: Path, read_bytes: int = READ_BYTES) -> Iterator[str]:
    """The file's text in decoded blocks (a BOM kept), each non-empty."""
    decoder = Decoder(shown)
    with open_input(path, shown) as handle:
        while block := handle.read(read_bytes):
            if text := decoder.decode(block):
                yield text
    if text := decoder.decode(b"", final=True):
        yield text


def chunks(path: Path, shown: Path, read_bytes: int = READ_BYTES) -> Iterator[str]:
    """The file's text in blocks of at most `read_bytes` bytes' worth, a leading BOM dropped."""
    first = True
    for text in decoded(path, shown, read_bytes):
        if first:
            first, text = False, text.removeprefix(BOM)
            if not text:
                continue
        yield text


def scan(path: Path, shown: Path, read_bytes: int = READ_BYTES) -> TextInfo:
    """One pass over the file (`shown`: its name in errors): UTF-8 checked, characters counted, the first text found."""
    chars, bom, head, lead = 0, None, "", True
    for text in decoded(path, shown, read_bytes):
        if bom is None:
            bom = text.startswith(BOM)
            text = text.removeprefix(BOM)
        chars += len(text)
        if lead:
            text = text.lstrip()
            lead = not text
        if len(head) < HEAD_CHARS and not lead:
            head += text[: HEAD_CHARS - len(head)]
    return TextInfo(path.stat().st_size, chars, bool(bom), not head, head)


@contextmanager
def spooled_stdin(source: Optional[BinaryIO] = None) -> Iterator[Path]:
    """Stdin (or `source`) copied to a temporary file, block by block; the file is removed after the block."""
    with tempfile.NamedTemporaryFile(prefix="flairsuite-stdin-", suffix=".txt") as spool:
        shutil.copyfileobj(source or sys.stdin.buffer, spool, READ_BYTES)
        spool.flush()
        yield Path(spool.name)


def progress(total: int, desc: str) -> tqdm:
    """A progress bar on stderr over `total` bytes of input, shown once it runs longer than `PROGRESS_DELAY`, removed at the end."""
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, delay=PROGRESS_DELAY, leave=False, file=sys.stderr)
