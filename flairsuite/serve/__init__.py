"""`flairsuite serve`: one saved tagger behind a small HTTP API and a page to try it in a browser.

`engine` loads the model once and tags texts (the functions of `flairsuite.inference` and `flairsuite.predict`, spans at exact
character offsets of the posted text) or documents already split into sentences and tokens;
`batching` runs it in one worker thread on whatever requests are waiting; `payload` turns a request
body into the text to tag or a 4xx error with one message; `page` is the HTML page; `app` the FastAPI
application; `server` binds the socket and runs uvicorn.

INCEpTION's external recommender (its developer guide, "External recommender"): `inception` holds the
routes (`POST /predict`, `POST /train`, `GET /status`), `recommender` parses and checks their requests,
`cas` reads and writes the CASes (dkpro-cassis), `fit` trains a new tagger on the documents'
annotations, and `retrain` runs that in the background and swaps the served model atomically.
Only `app`, `inception` and `server` import FastAPI and uvicorn (the optional extra `serve`); only
`cas` and `recommender` import cassis (the extra `inception`), and only when a recommender route is used.
"""
