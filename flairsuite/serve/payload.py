"""A `POST /tag` body -> the text to tag, or a `RequestError` with an HTTP status and one message for the client.

Accepted: `application/json` with `{"text": "..."}`, and `text/plain` (UTF-8; another charset is refused).
The text must be non-blank, at most `max_chars` characters and free of unpaired surrogates (which JSON
escapes can carry but no UTF-8 text holds); the body, at most `body_limit(max_chars)` bytes.
"""

import json
import re
from typing import Optional

from flairsuite.values import json_problem

JSON_EXAMPLE = '{"text": "Anna reiste nach Berlin."}'
SURROGATE = re.compile("[\ud800-\udfff]")
UTF8_NAMES = ("utf-8", "utf8")


class RequestError(Exception):
    """A request the client must change: `status` (4xx) and a one-line `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def body_limit(max_chars: int) -> int:
    """The largest body accepted for texts of `max_chars` characters: each written as a 6-byte JSON escape, plus room for the rest."""
    return 6 * max_chars + 1024


def media_type(header: Optional[str]) -> tuple[str, dict[str, str]]:
    """`text/plain; charset=UTF-8` -> ("text/plain", {"charset": "utf-8"}); names and values lower-cased."""
    kind, *params = (header or "").split(";")
    pairs = (param.split("=", 1) for param in params if "=" in param)
    return kind.strip().lower(), {key.strip().lower(): value.strip().strip('"').lower() for key, value in pairs}


def decode(body: bytes) -> str:
    """The body as UTF-8; invalid bytes are a 400 that says where."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RequestError(400, f"the body is not valid UTF-8: byte 0x{body[err.start]:02x} at byte offset {err.start}") from None


def json_text(body: bytes) -> str:
    """The "text" of a JSON object body (a UTF-8 BOM before it is allowed)."""
    source = decode(body).removeprefix("\ufeff")
    try:
        value = json.loads(source)
    except json.JSONDecodeError as err:
        raise RequestError(400, f"malformed JSON: {err.msg} at line {err.lineno} column {err.colno}; send {JSON_EXAMPLE}") from None
    except RecursionError:
        raise RequestError(400, f"malformed JSON: nested too deeply; send {JSON_EXAMPLE}") from None
    except ValueError as err:  # e.g. a number longer than Python converts
        raise RequestError(400, f"malformed JSON: {json_problem(err)}; send {JSON_EXAMPLE}") from None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        raise RequestError(400, f'the JSON body must be an object with a string "text", e.g. {JSON_EXAMPLE}')
    return value["text"]


def accepted_media(content_type: Optional[str]) -> str:
    """"application/json" or "text/plain" from a Content-Type header; another type or a charset other than UTF-8 is a 415."""
    kind, params = media_type(content_type)
    if kind not in ("application/json", "text/plain"):
        got = f"Content-Type {kind}" if kind else "no Content-Type"
        raise RequestError(415, f"send the text as application/json ({JSON_EXAMPLE}) or as text/plain; got {got}")
    charset = params.get("charset", "utf-8")
    if charset not in UTF8_NAMES:
        raise RequestError(415, f"only UTF-8 text is accepted; got charset={charset}")
    return kind


def too_large(max_chars: int) -> RequestError:
    """The 413 of a body over `body_limit(max_chars)` bytes."""
    return RequestError(413, f"the body is too large: more than {body_limit(max_chars):,} bytes for at most {max_chars:,} characters")


def request_text(kind: str, body: bytes, max_chars: int) -> str:
    """The text to tag from a body of media type `kind` (from `accepted_media`), checked; anything wrong is a RequestError."""
    if len(body) > body_limit(max_chars):
        raise too_large(max_chars)
    if not body:
        raise RequestError(400, "no text to tag: the body is empty")
    text = json_text(body) if kind == "application/json" else decode(body)
    if len(text) > max_chars:
        raise RequestError(413, f"the text is too long: {len(text):,} characters, at most {max_chars:,} are accepted")
    surrogate = SURROGATE.search(text)
    if surrogate:
        raise RequestError(400, f"the text holds an unpaired surrogate \\u{ord(surrogate.group()):04x} at character {surrogate.start()}")
    if not text.strip():
        raise RequestError(400, "no text to tag: the text is empty or blank")
    return text
