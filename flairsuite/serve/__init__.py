"""`flairsuite serve`: one saved tagger behind a small HTTP API and a page to try it in a browser.

`engine` loads the model once and tags texts (the functions of `flairsuite.predict`, spans at exact
character offsets of the posted text); `batching` runs it in one worker thread on whatever requests
are waiting; `payload` turns a request body into the text to tag or a 4xx error with one message;
`page` is the HTML page; `app` the FastAPI application; `server` binds the socket and runs uvicorn.
Only `app` and `server` import FastAPI and uvicorn (the optional extra `serve`).
"""
