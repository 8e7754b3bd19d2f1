"""The FastAPI application: `GET /` (the page), `POST /tag` (spans as JSON), `GET /health`, and INCEpTION's
external recommender (`POST /predict`, `POST /train`, `GET /status`: `flairsuite.serve.inception`).

`create_app(model_path)` loads the model once; every request is tagged by the one worker of
`flairsuite.serve.batching`. A training run whose tagger passes the swap rule of `flairsuite.serve.retrain`
replaces the model file (the newest `keep_models` old ones kept beside it) and the batcher tags with
the new one from its next batch on.
Every error is JSON `{"error": "<one line>"}`: 400/413/415 for what the client sent
(`flairsuite.serve.payload`, `flairsuite.serve.recommender`), 404/405 for a wrong route, 429 while a
training run is going, 503 when the queue is full, and 500, without any traceback or exception
text, when the model itself fails (the server log has the details).
"""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException

from flairsuite.markup.html import legend, marked_text, type_css
from flairsuite.markup.spans import count_types
from flairsuite.serve.answers import error, failed, refused
from flairsuite.serve.batching import Batcher, Busy
from flairsuite.serve.engine import Document, Tagging, TextTagger
from flairsuite.serve.inception import add_recommender
from flairsuite.serve.page import page
from flairsuite.serve.payload import RequestError, accepted_media, body_limit, request_text, too_large
from flairsuite.serve.retrain import EPOCHS, KEEP, Retrainer

MAX_CHARS = 100_000  # characters of one text at most (--max-chars)
MAX_WAITING = 256  # requests queued for the model at most; more get 503
log = logging.getLogger(__name__)


async def read_body(request: Request, max_chars: int) -> bytes:
    """The request body, refused (413) as soon as it is known to exceed `body_limit(max_chars)` bytes."""
    return await read_limited(request, body_limit(max_chars), too_large(max_chars))


async def read_limited(request: Request, limit: int, refusal: Optional[RequestError] = None) -> bytes:
    """The request body, refused (`refusal`, by default a 413 naming `limit`) as soon as it is known to exceed `limit` bytes."""
    refusal = refusal or RequestError(413, f"the body is too large: more than {limit:,} bytes")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise refusal
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise refusal
        chunks.append(chunk)
    return b"".join(chunks)


def wants_html(request: Request) -> bool:
    """`?html=1` (or true, yes): the answer also carries the page's markup."""
    return request.query_params.get("html", "").lower() in ("1", "true", "yes")


def answer(text: str, tagging: Tagging, markup: bool) -> dict[str, Any]:
    """The JSON of a tagged text: spans with offsets, the covered text, type and confidence; with `markup`, the highlighted HTML."""
    found: dict[str, Any] = {
        "spans": [
            {"start": s.start, "end": s.end, "text": text[s.start : s.end], "type": s.type, "confidence": round(s.confidence, 4)}
            for s in tagging.spans
        ],
        "sentences": tagging.sentences,
        "tokens": tagging.tokens,
    }
    if markup:
        counts = count_types(tagging.spans)
        found["markup"] = {"text": marked_text(text, tagging.spans), "legend": legend(counts), "css": type_css(counts)}
    return found


def http_message(request: Request, exc: HTTPException) -> str:
    """One line for a routing error (404, 405) or another HTTPException."""
    where = f"{request.method} {request.url.path}"
    if exc.status_code == 404:
        return f"not found: {where}; the page is GET /, the API POST /tag, INCEpTION's recommender POST /predict, POST /train, GET /status"
    if exc.status_code == 405:
        return f"method not allowed: {where}; use {(exc.headers or {}).get('Allow', 'another method')}"
    return str(exc.detail)


def create_app(
    model_path: Path,
    max_chars: int = MAX_CHARS,
    fast: bool = True,
    batch_size: Optional[int] = None,
    entity_fix: bool = False,
    max_waiting: int = MAX_WAITING,
    train_epochs: int = EPOCHS,
    keep_models: int = KEEP,
    join_lines: bool = True,
    reader_spans: bool = True,
) -> FastAPI:
    """The application for the suite tagger at `model_path`, loaded here, once (a bad model file is a FlairsuiteError);
    `train_epochs`: the epochs of a `POST /train` run at most; `keep_models`: the backups of replaced models kept;
    `join_lines`, `reader_spans`: words broken at line ends joined, the reader rules applied (`flairsuite.serve.engine`)."""

    def load(path: Path) -> TextTagger:
        loaded = TextTagger(path, fast, batch_size, entity_fix, join_lines, reader_spans)
        loaded.name = model_path.name  # a retrained model is loaded from its temporary file, then takes the served name
        return loaded

    tagger = load(model_path)
    batcher: Batcher[Document, Tagging] = Batcher(tagger.tag, max_waiting)
    home = page(tagger.name, max_chars)

    def serve_tagger(retrained: TextTagger) -> None:
        """Tag with `retrained` from the worker's next batch on."""
        app.state.tagger, batcher.run = retrained, retrained.tag

    retrainer: Retrainer[TextTagger] = Retrainer(model_path, load, serve_tagger, train_epochs, keep_models)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        batcher.close()

    app = FastAPI(title="flairsuite serve", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.tagger, app.state.batcher, app.state.retrainer = tagger, batcher, retrainer

    @app.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        """The page to paste a text into."""
        return HTMLResponse(home)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Whether the server is up, and its model and limit."""
        return {"status": "ok", "model": app.state.tagger.name, "max_chars": max_chars}

    @app.post("/tag")
    async def tag(request: Request) -> JSONResponse:
        """Tag the posted text: `{"spans": [{"start", "end", "text", "type", "confidence"}], "sentences": N, "tokens": N}`."""
        try:
            kind = accepted_media(request.headers.get("content-type"))
            text = request_text(kind, await read_body(request, max_chars), max_chars)
            future = batcher.submit(text)
        except (RequestError, Busy) as err:
            return refused(err)
        try:
            tagging = await asyncio.wrap_future(future)
            if not tagging.sentences:
                return error(400, "no text to tag: the text holds nothing Flair splits into tokens")
            return JSONResponse(answer(text, tagging, wants_html(request)))
        except Exception as err:
            return failed(err, log)

    add_recommender(app, batcher, retrainer, max_chars, read_limited)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return error(exc.status_code, http_message(request, exc), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error(400, f"bad request to {request.url.path}")

    @app.exception_handler(Exception)
    async def any_error(request: Request, exc: Exception) -> JSONResponse:  # the last line of defence: no traceback to the client
        log.error("error answering %s %s", request.method, request.url.path, exc_info=exc)
        return error(500, "internal server error (the server log has the details)")

    return app
