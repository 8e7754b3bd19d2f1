"""`flairsuite serve`: spans at exact character offsets, every bad request a JSON 4xx with one message, no traceback ever.

The API tests run the FastAPI application in-process (TestClient) on the small saved tagger of
tests/fixtures/saved-models (it tags nearly every word as pers, place or date); the browser tests
of the page are in test_browser.py.
"""

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_file

pytest.importorskip("fastapi", reason="the serve extra (fastapi, uvicorn) is not installed: pip install -e '.[test]'")
pytest.importorskip("httpx", reason="httpx (FastAPI's TestClient) is not installed: pip install -e '.[test]'")

from fastapi.testclient import TestClient  # noqa: E402

from flairsuite.cli import cli  # noqa: E402
from flairsuite.errors import FlairsuiteError  # noqa: E402
from flairsuite.inference.tagger import torch_threads  # noqa: E402
from flairsuite.predict.inputs import predict_document  # noqa: E402
from flairsuite.serve import engine, server  # noqa: E402
from flairsuite.serve.answers import INTERNAL_ERROR  # noqa: E402
from flairsuite.serve.app import create_app  # noqa: E402
from flairsuite.serve.batching import Batcher, Busy  # noqa: E402
from flairsuite.serve.payload import RequestError, body_limit, media_type, request_text  # noqa: E402

MODEL = Path(__file__).resolve().parent / "fixtures" / "saved-models" / "lcrf-ner.pt"
MAX_CHARS = 2000
LETTER = "Am Montag besuchte Anna die Stadt Berlin.\n\n  Otto verließ   Wien, sagte\tder König „heute“.\r\nMarie blieb in München.\n"


@pytest.fixture(scope="module")
def client():
    """The application on the fixture tagger, loaded once for the module, torch on one thread."""
    with torch_threads(1), TestClient(create_app(MODEL, max_chars=MAX_CHARS)) as test_client:
        yield test_client


def check_spans(text: str, spans: list[dict]) -> None:
    """Each span's text is the posted text at its offsets; spans are sorted, disjoint, typed and scored."""
    end = 0
    for span in spans:
        assert set(span) == {"start", "end", "text", "type", "confidence"}
        assert end <= span["start"] < span["end"] <= len(text)
        assert span["text"] == text[span["start"] : span["end"]]
        assert span["type"] in ("pers", "place", "date") and 0.0 <= span["confidence"] <= 1.0
        end = span["end"]


def test_tag_gives_the_spans_of_predict_at_offsets_of_the_text(client, tmp_path):
    response = client.post("/tag", json={"text": LETTER})
    assert response.status_code == 200, response.text
    found = response.json()
    check_spans(LETTER, found["spans"])
    assert found["sentences"] == 3 and found["spans"]
    path = write_file(tmp_path / "letter.txt", LETTER)
    lines = [json.loads(line) for line in predict_document(MODEL, path, "json", True, None).text.splitlines()]
    expected = [(s["start_char"], s["end_char"], s["type"]) for line in lines for s in line["spans"]]
    assert [(s["start"], s["end"], s["type"]) for s in found["spans"]] == expected
    assert found["tokens"] == sum(len(line["tokens"]) for line in lines)


def test_text_plain_equals_json(client):
    plain = client.post("/tag", content=LETTER.encode("utf-8"), headers={"Content-Type": "text/plain; charset=UTF-8"})
    assert plain.status_code == 200 and plain.json() == client.post("/tag", json={"text": LETTER}).json()


def test_characters_flair_drops_keep_the_offsets_exact(client):
    text = "\ufeffAnna\u200b besuchte Ber\u200blin \u2028am Montag.\u0080 Otto kam."
    found = client.post("/tag", content=text.encode("utf-8"), headers={"Content-Type": "text/plain"}).json()
    check_spans(text, found["spans"])
    texts = [span["text"] for span in found["spans"]]
    assert "Ber\u200blin" in texts and "Anna" in texts  # one token, as Flair reads it, mapped back
    clean = client.post("/tag", json={"text": "Anna besuchte Berlin am Montag.€ Otto kam."}).json()
    assert [(s["type"], s["text"].replace("\u200b", "").replace("\u0080", "€")) for s in found["spans"]] == [(s["type"], s["text"]) for s in clean["spans"]]


def test_flair_view_maps_back_to_the_original():
    from flairsuite.corpora.segmentation import flair_view

    view = flair_view("a\u200bb\ufeff c\u0080")
    assert view.text == "ab c€" and view.origin == [0, 2, 4, 5, 6, 7]
    assert view.original(0, 2) == (0, 3)
    assert flair_view("plain").origin is None


def test_html_markup_for_the_page(client):
    found = client.post("/tag?html=1", json={"text": "Anna & <Otto> in Wien."}).json()
    markup = found["markup"]
    assert found["spans"] and set(markup) == {"text", "legend", "css"}  # spans to mark: the checks below are not vacuous
    assert markup["text"].count("<mark ") == len(found["spans"]) and "&amp;" in markup["text"] and "&lt;" in markup["text"]
    assert all(f'data-type="{kind}"' in markup["legend"] for kind in {s["type"] for s in found["spans"]})
    assert "markup" not in client.post("/tag", json={"text": "Anna"}).json()


def test_page_and_health(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<textarea id="text"' in page.text and 'fetch("tag?html=1"' in page.text and "lcrf-ner.pt" in page.text
    assert "http" not in page.text.replace('content="width', "")  # self-contained: nothing loaded from elsewhere
    assert client.get("/health").json() == {"status": "ok", "model": "lcrf-ner.pt", "max_chars": MAX_CHARS}


JSON = {"Content-Type": "application/json"}
PLAIN = {"Content-Type": "text/plain"}


@pytest.mark.parametrize(
    "body, headers, status, message",
    [
        (b"", JSON, 400, "no text to tag: the body is empty"),
        (b'{"text": ""}', JSON, 400, "no text to tag: the text is empty or blank"),
        (b'{"text": " \\n\\t "}', JSON, 400, "no text to tag: the text is empty or blank"),
        (b"  \r\n", PLAIN, 400, "no text to tag: the text is empty or blank"),
        ('{"text": "\u200b"}'.encode(), JSON, 400, "no text to tag: the text holds nothing Flair splits into tokens"),
        (b"Anna in K\xf6ln", PLAIN, 400, "the body is not valid UTF-8: byte 0xf6 at byte offset 9"),
        (b'{"text": "K\xf6ln"}', JSON, 400, "the body is not valid UTF-8: byte 0xf6 at byte offset 11"),
        (b'{"text": "Anna"', JSON, 400, "malformed JSON: Expecting ',' delimiter at line 1 column 16"),
        (b"[" * 12_000, JSON, 400, "malformed JSON: nested too deeply"),
        (b'{"text": "Anna", "n": ' + b"9" * 5000 + b"}", JSON, 400, "malformed JSON: Exceeds the limit (4300 digits)"),
        (b'{"txt": "Anna"}', JSON, 400, 'the JSON body must be an object with a string "text"'),
        (b'{"text": 5}', JSON, 400, 'the JSON body must be an object with a string "text"'),
        (b'["Anna"]', JSON, 400, 'the JSON body must be an object with a string "text"'),
        (b'{"text": "a\\ud800b"}', JSON, 400, "the text holds an unpaired surrogate \\ud800 at character 1"),
        (b"Anna", {}, 415, "send the text as application/json"),
        (b"Anna", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "got Content-Type application/x-www-form-urlencoded"),
        (b"Anna", {"Content-Type": "text/plain; charset=latin-1"}, 415, "only UTF-8 text is accepted; got charset=latin-1"),
        (("x" * (MAX_CHARS + 1)).encode(), PLAIN, 413, f"the text is too long: {MAX_CHARS + 1:,} characters, at most {MAX_CHARS:,}"),
        (json.dumps({"text": "\u00e4" * (MAX_CHARS + 1)}).encode(), JSON, 413, "the text is too long"),
        (b" " * (body_limit(MAX_CHARS) + 1), PLAIN, 413, f"the body is too large: more than {body_limit(MAX_CHARS):,} bytes"),
    ],
    ids=lambda value: value if isinstance(value, int) else None,
)
def test_bad_requests_are_one_json_message(client, body, headers, status, message):
    response = client.post("/tag", content=body, headers=headers)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()
    assert list(error) == ["error"] and message in error["error"] and "\n" not in error["error"]


def test_the_body_limit_holds_for_a_streamed_body_without_length(client):
    chunks = (b"x" * 4096 for _ in range(body_limit(MAX_CHARS) // 4096 + 2))
    response = client.post("/tag", content=chunks, headers=PLAIN)
    assert response.status_code == 413 and "the body is too large" in response.json()["error"]


def test_the_longest_text_accepted_is_max_chars(client):
    text = ("Anna kam. " * MAX_CHARS)[:MAX_CHARS]
    assert client.post("/tag", json={"text": text}).status_code == 200


@pytest.mark.parametrize(
    "method, path, status, message",
    [("get", "/tag", 405, "method not allowed: GET /tag; use POST"), ("post", "/", 405, "method not allowed"), ("get", "/nope", 404, "not found: GET /nope")],
)
def test_wrong_routes_are_json_too(client, method, path, status, message):
    response = getattr(client, method)(path)
    assert response.status_code == status and message in response.json()["error"]


@pytest.fixture
def broken(monkeypatch):
    """A fresh application whose model call raises an exception carrying text no client may see."""
    with torch_threads(1):
        application = create_app(MODEL, max_chars=MAX_CHARS)

    def explode(texts):
        raise RuntimeError("secret internals: File '/srv/model.py', line 3")

    application.state.batcher.run = explode
    with TestClient(application, raise_server_exceptions=False) as test_client:
        yield application, test_client


def test_a_failing_model_is_a_json_500_without_traceback(broken, caplog):
    _, test_client = broken
    response = test_client.post("/tag", json={"text": "Anna kam."})
    assert response.status_code == 500 and response.json() == {"error": INTERNAL_ERROR}
    assert "secret" not in response.text and "Traceback" not in response.text
    assert "secret internals" in caplog.text  # the details go to the server log
    assert test_client.get("/health").status_code == 200  # and the server keeps serving


def test_an_unexpected_error_anywhere_is_a_json_500(broken):
    application, test_client = broken

    async def boom():
        raise KeyError("secret key")

    application.add_api_route("/boom", boom)
    response = test_client.get("/boom")
    assert response.status_code == 500 and list(response.json()) == ["error"] and "secret" not in response.text


def test_a_flairsuite_error_of_the_tagger_is_its_one_line(broken):
    application, test_client = broken

    def refuse(texts):
        raise FlairsuiteError("token offsets do not match the text at character 3")

    application.state.batcher.run = refuse
    response = test_client.post("/tag", json={"text": "Anna kam."})
    assert response.status_code == 500 and response.json() == {"error": "tagging failed: token offsets do not match the text at character 3"}


def test_the_model_is_loaded_once(monkeypatch):
    loads = []
    original = engine.load_tagger
    monkeypatch.setattr(engine, "load_tagger", lambda path: loads.append(path) or original(path))
    with torch_threads(1), TestClient(create_app(MODEL)) as test_client:
        for text in ("Anna kam.", "Otto ging.", "Marie blieb."):
            assert test_client.post("/tag", json={"text": text}).status_code == 200
    assert loads == [MODEL]


def test_concurrent_requests_get_their_own_spans(client):
    texts = [f"{name} besuchte {place}." for name in ("Anna", "Otto", "Marie", "Karl") for place in ("Berlin", "Wien")]
    alone = {text: client.post("/tag", json={"text": text}).json() for text in texts}
    results: dict[str, dict] = {}

    def post(text: str) -> None:
        results[text] = client.post("/tag", json={"text": text}).json()

    threads = [threading.Thread(target=post, args=(text,)) for text in texts * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # the same spans; confidences agree closely, not bit for bit: the fast path's int8 LSTMs scale
    # their activations per batch, and concurrent texts are tagged in one batch
    assert results.keys() == alone.keys()
    for text, found in results.items():
        expected = alone[text]
        assert (found["sentences"], found["tokens"]) == (expected["sentences"], expected["tokens"])
        assert [(s["start"], s["end"], s["type"]) for s in found["spans"]] == [(s["start"], s["end"], s["type"]) for s in expected["spans"]]
        assert [s["confidence"] for s in found["spans"]] == pytest.approx([s["confidence"] for s in expected["spans"]], abs=2e-3)


def test_batcher_tags_waiting_texts_together_and_isolates_a_failure():
    calls: list[list[str]] = []
    gate = threading.Event()

    def run(texts):
        gate.wait(10)
        calls.append(list(texts))
        if "bad" in texts:
            raise ValueError("bad text")
        return [text.upper() for text in texts]

    batcher = Batcher(run, max_waiting=3)
    first = batcher.submit("a")  # taken by the worker, which waits at the gate
    while batcher.queue.qsize():
        pass
    waiting = [batcher.submit(text) for text in ("b", "bad", "c")]
    with pytest.raises(Busy):
        batcher.submit("d")
    gate.set()
    assert first.result(10) == "A"
    assert waiting[0].result(10) == "B" and waiting[2].result(10) == "C"
    with pytest.raises(ValueError, match="bad text"):
        waiting[1].result(10)
    assert calls[:2] == [["a"], ["b", "bad", "c"]] and calls[2:] == [["b"], ["bad"], ["c"]]
    batcher.close()
    assert not batcher.worker.is_alive()


def test_batcher_gathers_the_next_requests_after_a_batch_of_several_and_tags_a_lone_one_at_once():
    calls: list[list[str]] = []
    gate = threading.Event()

    def run(texts):
        gate.wait(10)
        calls.append(list(texts))
        return list(texts)

    batcher = Batcher(run, gather=(2.0, 4.0))
    first = batcher.submit("a")  # alone: tagged at once, the worker waits at the gate
    while batcher.queue.qsize():
        pass
    pair = [batcher.submit(text) for text in ("b", "c")]
    gate.set()
    assert first.result(10) == "a" and [f.result(10) for f in pair] == ["b", "c"]
    late = [batcher.submit("d")]  # after a batch of two: the worker waits for what comes within the gap
    time.sleep(0.1)
    late.append(batcher.submit("e"))
    assert [f.result(10) for f in late] == ["d", "e"]
    alone = batcher.submit("f")  # after a batch of two, a lone request waits one gap, then goes alone
    assert alone.result(10) == "f"
    started = time.monotonic()
    assert batcher.submit("g").result(10) == "g" and time.monotonic() - started < 1.0  # after a batch of one: at once
    assert calls == [["a"], ["b", "c"], ["d", "e"], ["f"], ["g"]]
    batcher.close()


def test_payload_parsing():
    assert media_type('Text/Plain; Charset="UTF-8"') == ("text/plain", {"charset": "utf-8"})
    assert request_text("application/json", b'\xef\xbb\xbf{"text": "Anna"}', 10) == "Anna"
    assert request_text("text/plain", "\ufeffAnna".encode(), 10) == "\ufeffAnna"
    with pytest.raises(RequestError) as caught:
        request_text("text/plain", b"x" * 11, 10)
    assert caught.value.status == 413


def invoke(*args: str):
    return CliRunner().invoke(cli, ["serve", *args])


def test_cli_missing_model_is_one_line(tmp_path):
    result = invoke(str(tmp_path / "none.pt"))
    assert result.exit_code == 1 and result.output.strip().splitlines() == [f"Error: {tmp_path / 'none.pt'}: model file not found"]


def test_cli_bad_model_is_one_line(tmp_path):
    bad = write_file(tmp_path / "bad.pt", b"not a model")
    result = invoke(str(bad))
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith(f"Error: {bad}: not a loadable flairsuite tagger model")


def test_cli_port_in_use_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = invoke(str(MODEL), "--port", str(port), "--threads", "1")
    assert result.exit_code == 1 and result.output.strip() == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_cli_without_the_extra_says_how_to_install(monkeypatch):
    monkeypatch.setattr(server, "EXTRA", ("fastapi", "no_such_package_for_flairsuite"))
    result = invoke(str(MODEL))
    assert result.exit_code == 1
    assert result.output.strip() == "Error: flairsuite serve needs no_such_package_for_flairsuite: pip install 'flairsuite[serve]'"
