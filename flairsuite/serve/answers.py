"""The server's error answers: one JSON shape, and the refusals and failures that every tagging route maps alike."""

import logging
from typing import Optional, Union

from fastapi.responses import JSONResponse

from flairsuite.errors import FlairsuiteError
from flairsuite.serve.batching import Busy
from flairsuite.serve.payload import RequestError

INTERNAL_ERROR = "tagging failed: an internal error of the model (the server log has the details)"


def error(status: int, message: str, headers: Optional[dict[str, str]] = None) -> JSONResponse:
    """The JSON answer of every error: `{"error": message}`."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def refused(err: Union[RequestError, Busy]) -> JSONResponse:
    """A request refused before tagging: its own 4xx, or 503 (retry in a second) when the batcher's queue is full."""
    if isinstance(err, Busy):
        return error(503, str(err), {"Retry-After": "1"})
    return error(err.status, err.message)


def failed(err: Exception, log: logging.Logger) -> JSONResponse:
    """Tagging that broke: a 500 with the suite's one-line message, or a generic one (the traceback goes to the log only)."""
    if isinstance(err, FlairsuiteError):
        log.error("tagging failed: %s", err)
        return error(500, f"tagging failed: {err}")
    log.exception("tagging failed")
    return error(500, INTERNAL_ERROR)
