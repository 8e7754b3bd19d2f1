"""The routes of INCEpTION's external-recommender protocol: `POST /predict`, `POST /train`, `GET /status`.

`POST /predict` tags the posted CAS (`flairsuite.serve.recommender` parses and checks the request,
`flairsuite.serve.cas` reads its sentences and tokens and writes the suggestions) in the same batches
as `POST /tag` (`flairsuite.serve.batching`), and answers `{"document": "<XMI>"}`. `POST /train`
starts a background run (`flairsuite.serve.retrain`) and answers 204 at once, or 429 while a run is
going, as the protocol says (a document with an annotation outside its text is a 400 and starts
nothing); `GET /status` tells what runs and the last run's F1s, or why it was not swapped in. Parsing and
writing XMI run in worker threads, not in the event loop. The routes need dkpro-cassis (the
`inception` extra); without it they answer 501 with the line that installs it.
"""

import asyncio
import importlib.util
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from flairsuite.errors import FlairsuiteError
from flairsuite.serve.answers import error, failed, refused
from flairsuite.serve.batching import Batcher, Busy
from flairsuite.serve.payload import RequestError, media_type
from flairsuite.serve.retrain import Retrainer, Running

PREDICT_BYTES = 8 << 20  # a /predict body (XMI and type system, JSON-escaped) at most: this plus 64 bytes per character of --max-chars
TRAIN_BYTES = 512 << 20  # a /train body at most
EXTRA = "cassis"  # the module of the `inception` extra (dkpro-cassis)
log = logging.getLogger(__name__)


def predict_limit(max_chars: int) -> int:
    """The largest /predict body accepted for documents of at most `max_chars` characters."""
    return PREDICT_BYTES + 64 * max_chars


def require_cassis() -> None:
    """A 501 naming the extra to install when dkpro-cassis is missing."""
    if importlib.util.find_spec(EXTRA) is None:
        raise RequestError(501, "the INCEpTION recommender needs dkpro-cassis: pip install 'flairsuite[inception]'")


def require_json(request: Request) -> None:
    """The protocol's bodies are JSON: another Content-Type is a 415."""
    kind, params = media_type(request.headers.get("content-type"))
    if kind != "application/json":
        raise RequestError(415, f"send the request as application/json; got {f'Content-Type {kind}' if kind else 'no Content-Type'}")
    if params.get("charset", "utf-8") not in ("utf-8", "utf8"):
        raise RequestError(415, f"only UTF-8 JSON is accepted; got charset={params['charset']}")


def add_recommender(
    app: FastAPI,
    batcher: Batcher,
    retrainer: Retrainer,
    max_chars: int,
    read_body: Callable[[Request, int], Awaitable[bytes]],
) -> None:
    """Register the three routes on `app` (`read_body(request, limit)` reads a body of at most `limit` bytes or raises a 413)."""
    typesystems: list[Any] = []  # the TypeSystems cache, made on first use (cassis is imported only then)

    def cache() -> Any:
        from flairsuite.serve.recommender import TypeSystems

        if not typesystems:
            typesystems.append(TypeSystems())
        return typesystems[0]

    @app.post("/predict")
    async def predict(request: Request) -> Response:
        """INCEpTION's predict: the CAS with the tagger's suggestions added on the requested layer."""
        try:
            require_cassis()
            require_json(request)
            from flairsuite.serve.recommender import predict_request

            body = await read_body(request, predict_limit(max_chars))
            sent = await asyncio.to_thread(predict_request, body, cache(), max_chars)
            future = batcher.submit(sent.document)
        except (RequestError, Busy) as err:
            return refused(err)
        try:
            from flairsuite.serve.cas import with_suggestions

            tagging = await asyncio.wrap_future(future)
            target = sent.target
            answer = await asyncio.to_thread(with_suggestions, sent.xmi, sent.cas, target.layer, target.feature, tagging.spans,
                                             target.anchoring == "singleToken")
            return JSONResponse({"document": answer})
        except Exception as err:
            return failed(err, log)

    @app.post("/train")
    async def train(request: Request) -> Response:
        """INCEpTION's train: 204 when a background run starts on the documents' annotations, 429 while one runs."""
        try:
            require_cassis()
            require_json(request)
            if retrainer.status()["training"] is not None:  # refused before the documents are read
                raise Running("a training run is going; try again when GET /status shows it ended")
            from flairsuite.serve.cas import labeled_sentences
            from flairsuite.serve.recommender import train_request

            found = await asyncio.to_thread(train_request, await read_body(request, TRAIN_BYTES), cache(), max_chars)
            target = found.target
            documents = await asyncio.to_thread(lambda: [labeled_sentences(c, target.layer, target.feature) for c in found.cases])
            if not any(documents):
                raise RequestError(400, f"no document holds an annotation with a {target.feature} on layer {target.layer}: nothing to train on")
            retrainer.start(documents, f"{target.layer}/{target.feature}")
        except RequestError as err:
            return error(err.status, err.message)
        except Running as err:
            return error(429, str(err), {"Retry-After": "10"})
        except FlairsuiteError as err:  # e.g. too few sentences for a dev split
            return error(400, str(err))
        return Response(status_code=204)

    @app.get("/status")
    async def status() -> dict[str, Any]:
        """What trains now, and the last run's outcome (dev F1 of the new tagger and of the served one, whether it was swapped in)."""
        return retrainer.status()
