"""`flairsuite serve` as INCEpTION's external recommender: POST /predict, POST /train, GET /status on a real uvicorn server (loopback).

CASes are built with dkpro-cassis on the NamedEntity type system of tests/fixtures/inception (with the
suggestion features INCEpTION adds before it sends one, except where the server must add them); the
tagger is the small saved one of tests/fixtures/saved-models (it tags nearly every word as pers, place
or date), copied to tmp_path wherever a test trains, since a run may replace the served file.
"""

import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi, uvicorn) is not installed: pip install -e '.[test]'")
cassis = pytest.importorskip("cassis", reason="the inception extra (dkpro-cassis) is not installed: pip install -e '.[test]'")
httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

from flairsuite.inference.raw_tags import split  # noqa: E402
from flairsuite.inference.saved_tagger import load_tagger  # noqa: E402
from flairsuite.inference.tagger import torch_threads  # noqa: E402
from flairsuite.markup.spans import Span  # noqa: E402
from flairsuite.serve import inception, retrain, server  # noqa: E402
from flairsuite.serve.app import create_app  # noqa: E402
from flairsuite.serve.cas import add_suggestions, bio_tags, labeled_sentences, with_suggestions  # noqa: E402
from flairsuite.serve.engine import Tokens  # noqa: E402
from flairsuite.serve.fit import Labeled, held_out  # noqa: E402

HERE = Path(__file__).resolve().parent
MODEL = HERE / "fixtures" / "saved-models" / "lcrf-ner.pt"
TYPE_SYSTEM = (HERE / "fixtures" / "inception" / "NamedEntity-TypeSystem.xml").read_text(encoding="utf-8")
NE = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
SENTENCE = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence"
TOKEN = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token"
METADATA = {"layer": NE, "feature": "value", "projectId": 1337, "anchoringMode": "tokens", "crossSentence": False}
MAX_CHARS = 2000
LETTER = "Am Montag besuchte Anna 𝔄 die Stadt Berlin.\n\n  Otto verließ   Wien, sagte\tder König „heute“.\r\nMarie blieb in München.\n"


def inception_type_system(xml: str = TYPE_SYSTEM) -> "cassis.TypeSystem":
    """The fixture's type system as INCEpTION sends it: the NamedEntity layer with the suggestion features."""
    typesystem = cassis.load_typesystem(xml)
    layer = typesystem.get_type(NE)
    typesystem.create_feature(layer, "inception_internal_predicted", "uima.cas.Boolean")
    typesystem.create_feature(layer, "value_score", "uima.cas.Double")
    typesystem.create_feature(layer, "value_score_explanation", "uima.cas.String")
    return typesystem


TS = inception_type_system()
TS_XML = TS.to_xml()


def make_cas(text: str, sentences: list[list[tuple[int, int]]], typesystem=TS) -> "cassis.Cas":
    """A CAS of `text` with a Sentence over each list of token offsets and a Token at each."""
    cas = cassis.Cas(typesystem=typesystem)
    cas.sofa_string = text
    token, sentence = typesystem.get_type(TOKEN), typesystem.get_type(SENTENCE)
    for tokens in sentences:
        for i, (begin, end) in enumerate(tokens):
            cas.add(token(begin=begin, end=end, order=i))
        cas.add(sentence(begin=tokens[0][0], end=tokens[-1][1]))
    return cas


def flair_tokens(text: str) -> list[list[tuple[int, int]]]:
    """The sentences and tokens Flair splits `text` into (`predict`'s), as character offsets."""
    return [[(s.start_position + t.start_position, s.start_position + t.end_position) for t in s] for s in split(text)]


def tokens_of(text: str, words: list[list[str]]) -> list[list[tuple[int, int]]]:
    """Offsets of the words of each sentence, found one after the other in `text`."""
    found, position = [], 0
    for sentence in words:
        offsets = []
        for word in sentence:
            begin = text.index(word, position)
            position = begin + len(word)
            offsets.append((begin, position))
        found.append(offsets)
    return found


def predict_body(cas, metadata=METADATA, type_system: str = TS_XML) -> dict:
    return {"metadata": metadata, "document": {"xmi": cas.to_xmi(), "documentId": 42, "userId": "anna"}, "typeSystem": type_system}


def suggestions(xmi: str) -> list[tuple[int, int, str, float]]:
    """The suggestions of an answered CAS: (begin, end, value, score) of the NamedEntity annotations marked predicted."""
    cas = cassis.load_cas_from_xmi(xmi, typesystem=inception_type_system())
    found = [(a.begin, a.end, a.value, a.value_score) for a in cas.select(NE) if a.inception_internal_predicted]
    return sorted(found)


@contextmanager
def running(app):
    """`app` served by uvicorn on a free loopback port in a thread; its URL."""
    sock = server.listen("127.0.0.1", 0)
    instance = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not instance.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield server.url(sock)
    finally:
        instance.should_exit = True
        thread.join(30)
        sock.close()


@pytest.fixture(scope="module")
def url():
    """The fixture tagger served (not trained: /train is tested on copies), torch on one thread."""
    with torch_threads(1), running(create_app(MODEL, max_chars=MAX_CHARS)) as address:
        yield address


def test_predict_adds_the_spans_of_tag_on_the_cas_tokens_and_keeps_what_was_there(url):
    cas = make_cas(LETTER, flair_tokens(LETTER))
    kept = TS.get_type(NE)(begin=19, end=23, value="PER", identifier="https://d-nb.info/gnd/118")  # Anna, annotated by hand
    cas.add(kept)
    before = cas.to_xmi()
    response = httpx.post(url + "predict", json=predict_body(cas), timeout=60)
    assert response.status_code == 200, response.text
    assert list(response.json()) == ["document"]
    answer = cassis.load_cas_from_xmi(response.json()["document"], typesystem=inception_type_system())
    assert answer.sofa_string == LETTER
    manual = [(a.begin, a.end, a.value, a.identifier) for a in answer.select(NE) if not a.inception_internal_predicted]
    assert manual == [(19, 23, "PER", "https://d-nb.info/gnd/118")]
    assert [(t.begin, t.end, t.order) for t in answer.select(TOKEN)] == [(t.begin, t.end, t.order) for t in cas.select(TOKEN)]
    assert len(list(answer.select(SENTENCE))) == 3 and cassis.load_cas_from_xmi(before, typesystem=TS).sofa_string == LETTER
    found = suggestions(response.json()["document"])
    tagged = httpx.post(url + "tag", json={"text": LETTER}, timeout=60).json()["spans"]
    assert found and [(b, e, v) for b, e, v, _ in found] == [(s["start"], s["end"], s["type"]) for s in tagged]
    assert [score for *_, score in found] == pytest.approx([s["confidence"] for s in tagged], abs=2e-3)
    starts, ends = {t.begin for t in answer.select(TOKEN)}, {t.end for t in answer.select(TOKEN)}
    assert all(b in starts and e in ends for b, e, *_ in found)  # exact token offsets
    berlin = LETTER.index("Berlin")  # after 𝔄 (two UTF-16 units): the XMI holds UTF-16 offsets, cassis maps them
    assert any(b == berlin for b, *_ in found)
    assert re.search(rf'begin="{berlin + 1}" end="{berlin + 7}"[^>]*inception_internal_predicted="true"', response.json()["document"])


def test_predict_tags_the_cas_tokens_as_they_are(url):
    text = "Anna besuchte Berlin . Otto kam ."
    words = [["Anna", "besuchte", "Berlin", "."], ["Otto", "kam", "."]]
    cas = make_cas(text, tokens_of(text, words))
    found = suggestions(httpx.post(url + "predict", json=predict_body(cas), timeout=60).json()["document"])
    tagged = httpx.post(url + "tag", json={"text": text}, timeout=60).json()["spans"]
    assert found and [(b, e, v) for b, e, v, _ in found] == [(s["start"], s["end"], s["type"]) for s in tagged]
    merged = make_cas(text, [[(0, 4), (5, 20)], [(23, 27), (28, 31), (32, 33)]])  # "besuchte Berlin" one token of the CAS
    spans = suggestions(httpx.post(url + "predict", json=predict_body(merged), timeout=60).json()["document"])
    assert spans and {(b, e) for b, e, *_ in spans} <= {(0, 4), (5, 20), (0, 20), (23, 27), (28, 31), (32, 33), (23, 31), (23, 33), (28, 33)}
    assert not any(b == 14 for b, *_ in spans)  # nothing starts inside the CAS token


def test_a_cas_without_sentences_and_tokens_is_split_as_predict_splits_text(url):
    cas = cassis.Cas(typesystem=cassis.load_typesystem(TYPE_SYSTEM))  # INCEpTION's suggestion features missing: the server adds them
    cas.sofa_string = LETTER
    response = httpx.post(url + "predict", json=predict_body(cas, type_system=TYPE_SYSTEM), timeout=60)
    assert response.status_code == 200, response.text
    found = suggestions(response.json()["document"])
    tagged = httpx.post(url + "tag", json={"text": LETTER}, timeout=60).json()["spans"]
    assert found and [(b, e, v) for b, e, v, _ in found] == [(s["start"], s["end"], s["type"]) for s in tagged]


def good_xmi() -> str:
    return make_cas("Anna kam.", [[(0, 4), (5, 8), (8, 9)]]).to_xmi()


def body_with(**changes) -> dict:
    body = {"metadata": dict(METADATA), "document": {"xmi": good_xmi(), "documentId": 1, "userId": "u"}, "typeSystem": TS_XML}
    for key, value in changes.items():
        where, _, name = key.partition("__")
        if name:
            body[where][name] = value
        elif value is None:
            del body[where]
        else:
            body[where] = value
    return body


LONG = make_cas("Anna " * (MAX_CHARS // 5 + 1), [[(0, 4)]]).to_xmi()
BAD = [
    ("not json", b'{"metadata": ', 400, "malformed JSON"),
    ("not an object", b"[1, 2]", 400, "the JSON body must be an object"),
    ("not utf-8", b'{"x": "K\xf6ln"}', 400, "the body is not valid UTF-8"),
    ("no xmi", body_with(document={"documentId": 1}), 400, "document.xmi must be a string"),
    ("no document", body_with(document=None), 400, "document must be an object"),
    ("no metadata", body_with(metadata=None), 400, "metadata must be an object"),
    ("unknown layer", body_with(metadata__layer="webanno.custom.Nope"), 400, "unknown layer webanno.custom.Nope"),
    ("not a span layer", body_with(metadata__layer="uima.cas.TOP"), 400, "is not a span layer"),
    ("unknown feature", body_with(metadata__feature="nope"), 400, f"layer {NE} has no feature nope"),
    ("sentence anchoring", body_with(metadata__anchoringMode="sentences"), 400, "metadata.anchoringMode 'sentences'"),
    ("xmi does not parse", body_with(document={"xmi": "<xmi:XMI"}), 400, "document.xmi does not parse"),
    ("xmi of other types", body_with(typeSystem=TYPE_SYSTEM.replace("Token</name>", "Tokn</name>")), 400, "document.xmi does not parse"),
    ("type system does not parse", body_with(typeSystem="<typeSystemDescription"), 400, "typeSystem does not parse"),
    ("doctype", body_with(document={"xmi": '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + good_xmi()}), 400, "DOCTYPE"),
    ("over-long document", body_with(document={"xmi": LONG}), 413, f"the document is too long: {MAX_CHARS + 5:,} characters"),
]


@pytest.mark.parametrize("body, status, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_predict_requests_are_one_json_message_and_the_server_keeps_serving(url, body, status, message):
    sent = {"content": body, "headers": {"Content-Type": "application/json"}} if isinstance(body, bytes) else {"json": body}
    response = httpx.post(url + "predict", **sent)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()
    assert list(error) == ["error"] and message in error["error"] and "\n" not in error["error"] and "Traceback" not in error["error"]
    assert httpx.post(url + "predict", json=body_with(), timeout=60).status_code == 200


def test_predict_and_train_take_json_only(url):
    for route in ("predict", "train"):
        response = httpx.post(url + route, content=b"Anna", headers={"Content-Type": "text/plain"})
        assert response.status_code == 415 and "application/json" in response.json()["error"]
    response = httpx.post(url + "train", json={**body_with(document=None), "documents": []})
    assert response.status_code == 400 and response.json() == {"error": "documents is empty: send the documents to train on"}


def test_without_the_inception_extra_the_routes_say_how_to_install_it(url, monkeypatch):
    monkeypatch.setattr(inception, "EXTRA", "no_such_package_for_flairsuite")
    for route in ("predict", "train"):
        response = httpx.post(url + route, json=body_with(), timeout=60)
        assert response.status_code == 501
        assert response.json() == {"error": "the INCEpTION recommender needs dkpro-cassis: pip install 'flairsuite[inception]'"}
    assert httpx.post(url + "tag", json={"text": "Anna kam."}, timeout=60).status_code == 200


# -- training ---------------------------------------------------------------------------------------

LETTERS = [
    ("Anna schrieb an Otto in Wien .", [("Anna", "PER"), ("Otto", "PER"), ("Wien", "LOC")]),
    ("Marie reiste nach Berlin .", [("Marie", "PER"), ("Berlin", "LOC")]),
    ("Karl blieb in München bei Anna .", [("Karl", "PER"), ("München", "LOC"), ("Anna", "PER")]),
    ("In Hamburg wartete Otto .", [("Hamburg", "LOC"), ("Otto", "PER")]),
]


def training_document(index: int) -> dict:
    """Two letters as one document: Sentence and Token annotations, and NamedEntity annotations with PER and LOC values
    (plus one suggestion, which must not train)."""
    chosen = [LETTERS[index % len(LETTERS)], LETTERS[(index + 1) % len(LETTERS)]]
    text = " ".join(sentence for sentence, _ in chosen)
    cas = make_cas(text, tokens_of(text, [sentence.split() for sentence, _ in chosen]))
    position = 0
    for sentence, entities in chosen:
        start = text.index(sentence, position)
        for word, kind in entities:
            begin = text.index(word, start)
            cas.add(TS.get_type(NE)(begin=begin, end=begin + len(word), value=kind))
            start = begin + len(word)
        position = start
    cas.add(TS.get_type(NE)(begin=0, end=len(text.split()[0]), value="DATE", inception_internal_predicted=True, value_score=0.9))
    return {"xmi": cas.to_xmi(), "documentId": index, "userId": "anna"}


def train_body(documents: int = 5) -> dict:
    return {"metadata": METADATA, "documents": [training_document(i) for i in range(documents)], "typeSystem": TS_XML}


def wait_for_the_run(address: str, seconds: float = 120) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = httpx.get(address + "status").json()
        if status["training"] is None and status["last"] is not None:
            return status
        time.sleep(0.2)
    raise AssertionError(f"the training run did not end: {status}")


@pytest.fixture
def served(tmp_path):
    """A copy of the fixture tagger to serve and train."""
    path = tmp_path / "model.pt"
    shutil.copyfile(MODEL, path)
    return path


def test_train_runs_in_the_background_one_at_a_time_and_ends_in_a_swap(served, monkeypatch):
    gate = threading.Event()
    real_fit = retrain.fit

    def gated_fit(*args, **kwargs):
        assert gate.wait(60)
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(retrain, "fit", gated_fit)
    original = served.read_bytes()
    with torch_threads(1), running(create_app(served, max_chars=MAX_CHARS, train_epochs=3)) as address:
        assert httpx.get(address + "status").json() == {"model": "model.pt", "training": None, "last": None}
        response = httpx.post(address + "train", json=train_body(), timeout=60)
        assert response.status_code == 204 and response.content == b""
        status = httpx.get(address + "status").json()["training"]
        assert status["documents"] == 5 and status["dev_sentences"] == 2 and status["train_sentences"] == 8 and status["epochs"] == 3
        busy = httpx.post(address + "train", json=train_body(2), timeout=60)
        assert busy.status_code == 429 and "a training run is going" in busy.json()["error"]
        assert httpx.post(address + "predict", json=body_with(), timeout=60).status_code == 200  # predicting goes on meanwhile
        gate.set()
        last = wait_for_the_run(address)["last"]
        assert last["swapped"] is True and last["dev_f1"] >= last["served_dev_f1"] == 0.0, last  # the old tagger has no PER/LOC
        assert last["dev_entities"] > 0 and last["served_dev_entities"] > 0  # the new one finds entities where the old one does
        previous = Path(last["previous"])
        assert previous.parent == served.parent and previous.read_bytes() == original  # the old model stays on disk
        assert served.read_bytes() != original and load_tagger(served).label_dictionary.get_items()[:5] == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
        assert sorted(p.name for p in served.parent.iterdir()) == sorted(["model.pt", previous.name])  # no temporary file left
        text = "Anna reiste nach Wien . Otto blieb in Berlin ."
        words = [text.split()[:5], text.split()[5:]]
        cas = make_cas(text, tokens_of(text, words))
        found = suggestions(httpx.post(address + "predict", json=predict_body(cas), timeout=60).json()["document"])
        assert {value for _, _, value, _ in found} <= {"PER", "LOC"}  # the retrained tagger answers now
        assert httpx.get(address + "health").json()["model"] == "model.pt"


def test_a_worse_tagger_is_not_swapped_in(served, monkeypatch):
    real_fit = retrain.fit
    monkeypatch.setattr(retrain, "fit", lambda *args, **kwargs: (lambda f: replace(f, served_f1=f.dev_f1 + 0.01))(real_fit(*args, **kwargs)))
    original = served.read_bytes()
    with torch_threads(1), running(create_app(served, max_chars=MAX_CHARS, train_epochs=2)) as address:
        assert httpx.post(address + "train", json=train_body(3), timeout=60).status_code == 204
        last = wait_for_the_run(address)["last"]
        assert last["swapped"] is False and last["dev_f1"] < last["served_dev_f1"]
        assert last["reason"] == f"not swapped: dev F1 {last['dev_f1']} below the served model's {last['served_dev_f1']}"
        assert served.read_bytes() == original and [p.name for p in served.parent.iterdir()] == ["model.pt"]
        found = suggestions(httpx.post(address + "predict", json=body_with(), timeout=60).json()["document"])
        assert found and {value for _, _, value, _ in found} <= {"pers", "place", "date"}


def test_train_refuses_what_it_cannot_train_on(url):
    plain = make_cas("Anna kam.", [[(0, 4), (5, 8), (8, 9)]]).to_xmi()
    body = {"metadata": METADATA, "documents": [{"xmi": plain}], "typeSystem": TS_XML}
    response = httpx.post(url + "train", json=body, timeout=60)
    assert response.status_code == 400 and "nothing to train on" in response.json()["error"]
    one = {"metadata": METADATA, "documents": [{"xmi": make_cas("Anna", [[(0, 4)]]).to_xmi()}], "typeSystem": TS_XML}
    cas = cassis.load_cas_from_xmi(one["documents"][0]["xmi"], typesystem=TS)
    cas.add(TS.get_type(NE)(begin=0, end=4, value="PER"))
    one["documents"][0]["xmi"] = cas.to_xmi()
    response = httpx.post(url + "train", json=one, timeout=60)
    assert response.status_code == 400 and "at least two annotated sentences" in response.json()["error"]
    assert httpx.get(url + "status").json()["training"] is None


LAUNCH = (
    "import sys; from pathlib import Path; from flairsuite.serve.server import serve; "
    "serve(Path(sys.argv[1]), '127.0.0.1', 0, lambda line: print(line, flush=True), False, train_epochs=100000)"
)


def test_a_kill_during_training_leaves_the_served_model_untouched(served, tmp_path_factory):
    original = served.read_bytes()
    log = tmp_path_factory.mktemp("server-log") / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-c", LAUNCH, str(served)], stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        announced = None
        while announced is None:  # Flair's own log lines may come first
            line = process.stdout.readline()
            assert line, f"the server did not start: {log.read_text()[-2000:]}"
            announced = re.search(r" on (http://\S+)", line)
        address = announced.group(1)
        assert httpx.post(address + "train", json=train_body(), timeout=60).status_code == 204
        deadline = time.monotonic() + 120
        while (httpx.get(address + "status").json()["training"] or {}).get("epoch", 0) < 1:
            assert time.monotonic() < deadline, "training did not get going"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    finally:
        process.kill()
    assert served.read_bytes() == original and [p.name for p in served.parent.iterdir()] == ["model.pt"]
    with socket.socket() as probe:  # the port is free again: nothing of the server lives on
        probe.bind(("127.0.0.1", int(address.rsplit(":", 1)[1].strip("/"))))


# -- units ------------------------------------------------------------------------------------------


def test_bio_tags_from_overlapping_and_unaligned_annotations():
    tokens = [(0, 4), (5, 10), (11, 17), (18, 19)]
    assert bio_tags(tokens, [(0, 10, "PER"), (5, 17, "LOC"), (12, 15, "ORG")]) == ["B-PER", "I-PER", "B-ORG", "O"]  # LOC overlaps PER: left out
    assert bio_tags(tokens, [(2, 7, "PER"), (12, 15, "LOC")]) == ["B-PER", "I-PER", "B-LOC", "O"]


def test_training_sentences_leave_suggestions_out():
    document = training_document(0)
    cas = cassis.load_cas_from_xmi(document["xmi"], typesystem=TS)
    found = labeled_sentences(cas, NE, "value")
    assert [s.tags for s in found] == [["B-PER", "O", "O", "B-PER", "O", "B-LOC", "O"], ["B-PER", "O", "O", "B-LOC", "O"]]
    assert found[0].tokens == "Anna schrieb an Otto in Wien .".split() and found[0].gaps == [1, 1, 1, 1, 1, 1, 0]


def test_cas_tokens_keep_the_spacing_of_the_text():
    text = "Anna kam  nach\nWien. Otto"
    sentences, offsets = Tokens(text, [[(0, 4), (5, 8), (10, 14), (15, 19), (19, 20)], [(21, 25)]]).flair_sentences()
    assert [s.to_plain_string() for s in sentences] == ["Anna kam  nach Wien.", "Otto"]  # what a character LM reads
    assert offsets[1] == [(21, 25)] and Tokens(text, [[(4, 5)]]).flair_sentences() == ([], [])  # a blank token is left out


def test_single_token_anchoring_keeps_the_suggestions_of_one_token():
    spans = [Span(0, 4, "PER", 0.9), Span(5, 20, "LOC", 0.8), Span(14, 20, "LOC", 0.7)]
    for single, expected in ((True, [(0, 4), (14, 20)]), (False, [(0, 4), (5, 20), (14, 20)])):
        cas = make_cas("Anna besuchte Berlin .", [[(0, 4), (5, 13), (14, 20), (21, 22)]])
        assert add_suggestions(cas, NE, "value", spans, single) == len(expected)
        assert sorted((a.begin, a.end) for a in cas.select(NE)) == expected


def cas_content(cas: "cassis.Cas") -> list[tuple]:
    """Every feature structure of the CAS's view as (type, sorted features without ids), sorted: what two XMIs must share."""
    found = []
    for fs in cas.select_all_fs():
        values = tuple(sorted((f.name, repr(fs.get(f.name))) for f in fs.type.all_features if f.name not in ("sofa", "xmiID")))
        found.append((fs.type.name, values))
    return sorted(found)


def test_the_answer_xmi_is_the_cas_with_the_suggestions_as_cassis_writes_it():
    spans = [Span(0, 4, "PER", 0.9), Span(5, 20, "LOC", 1 / 3), Span(14, 20, "LOC", 1e-7), Span(23, 29, "ORG", 1.0)]
    plain = cassis.load_typesystem(TYPE_SYSTEM)  # without the suggestion features: the server's type system adds them
    for typesystem, hand in ((TS, True), (plain, False)):
        text = "Anna besuchte Berlin 𝔄 Ulm„x“ ."
        cas = make_cas(text, [[(0, 4), (5, 13), (14, 20), (21, 22), (23, 26), (26, 29), (30, 31)]], typesystem)
        if hand:
            cas.add(typesystem.get_type(NE)(begin=0, end=4, value="PER", identifier="gnd"))
        xmi = cas.to_xmi()
        served = cassis.load_typesystem(typesystem.to_xml())
        if not hand:
            served = cassis.load_typesystem(inception_type_system(TYPE_SYSTEM).to_xml())
        for single in (False, True):
            expected = cassis.load_cas_from_xmi(xmi, typesystem=served)
            added = add_suggestions(expected, NE, "value", spans, single)
            answer = with_suggestions(xmi, cassis.load_cas_from_xmi(xmi, typesystem=served), NE, "value", spans, single)
            loaded = cassis.load_cas_from_xmi(answer, typesystem=served)
            assert loaded.sofa_string == text and cas_content(loaded) == cas_content(expected)
            assert len([a for a in loaded.select(NE) if a.inception_internal_predicted]) == added == (2 if single else 4)
            ids = re.findall(r'xmi:id="(\d+)"', answer)
            assert len(ids) == len(set(ids))  # new ids clash with none of the CAS's
    assert with_suggestions(xmi, cassis.load_cas_from_xmi(xmi, typesystem=served), NE, "value", []) == xmi


def test_held_out_documents_are_fixed_and_disjoint():
    documents = [[Labeled([f"w{d}{s}"], ["O"]) for s in range(2)] for d in range(10)]
    first, again = held_out(documents), held_out(documents)
    assert first == again and len(first.dev) == 4 and len(first.train) == 16
    assert not {s.tokens[0] for s in first.dev} & {s.tokens[0] for s in first.train}
    assert {s.tokens[0][:2] for s in first.dev} == {s.tokens[0][:2] for s in first.dev[::2]}  # whole documents held out
    single = held_out([documents[0] + documents[1]])
    assert len(single.dev) == 1 and len(single.train) == 3
