"""The recommender's guards against bad training: documents whose annotations lie outside their text are refused (/train
and /predict), a run that learns nothing is not swapped in, and the backups of replaced models stay at --keep-models.

The requests are built as tests/test_recommender.py builds them (dkpro-cassis on the fixture's NamedEntity type
system), on the same small saved tagger, copied to tmp_path wherever a run could replace it.
"""

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi, uvicorn) is not installed: pip install -e '.[test]'")
cassis = pytest.importorskip("cassis", reason="the inception extra (dkpro-cassis) is not installed: pip install -e '.[test]'")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from click.testing import CliRunner  # noqa: E402
from test_recommender import (  # noqa: E402
    MAX_CHARS,
    METADATA,
    MODEL,
    NE,
    SENTENCE,
    TOKEN,
    TS,
    TS_XML,
    make_cas,
    predict_body,
    running,
    suggestions,
    tokens_of,
    training_document,
    wait_for_the_run,
)

from flairsuite.cli import cli  # noqa: E402
from flairsuite.inference.tagger import torch_threads  # noqa: E402
from flairsuite.serve import retrain  # noqa: E402
from flairsuite.serve.app import create_app  # noqa: E402
from flairsuite.serve.fit import Fitted, Labeled, held_out  # noqa: E402
from flairsuite.serve.retrain import Retrainer, backups, refusal  # noqa: E402

FLAIRSUITE = str(Path(sys.executable).parent / "flairsuite")  # the console script of the environment the tests run in
pytestmark = pytest.mark.filterwarnings("ignore:Not mapping:UserWarning")  # cassis on the offsets outside the text, which it keeps as they are


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A copy of the fixture tagger served (its URL and path): the refused requests must leave it as it is."""
    path = tmp_path_factory.mktemp("guarded") / "model.pt"
    shutil.copyfile(MODEL, path)
    with torch_threads(1), running(create_app(path, max_chars=MAX_CHARS, train_epochs=1)) as address:
        yield address, path


def with_annotation(xmi: str, kind: str, begin: int, end: int) -> "cassis.Cas":
    """The CAS of `xmi` with one more annotation of `kind` at begin..end (offsets cassis keeps as they are, outside the text)."""
    cas = cassis.load_cas_from_xmi(xmi, typesystem=TS)
    cas.add(TS.get_type(kind)(begin=begin, end=end, **({"value": "PER"} if kind == NE else {})))
    return cas


def xmi_of(cas: "cassis.Cas") -> str:
    with warnings.catch_warnings():  # cassis warns that it cannot map the offsets outside the text to UTF-16: they are written as they are
        warnings.simplefilter("ignore")
        return cas.to_xmi()


OUTSIDE = [  # (kind, begin, end, what the message says); the document's text is training_document(2)'s, 58 characters
    ("entity end past text", NE, 33, 59, "ends past the text"),
    ("entity begin after end", NE, 5, 2, "begins after its end"),
    ("entity before text", NE, -1, 4, "begins before the text"),
    ("token past text", TOKEN, 57, 59, "ends past the text"),
    ("token beyond text", TOKEN, 80, 84, "lies past the end of the text"),
    ("sentence past text", SENTENCE, 33, 60, "ends past the text"),
]


@pytest.mark.parametrize("kind, begin, end, problem", [case[1:] for case in OUTSIDE], ids=[case[0] for case in OUTSIDE])
def test_a_document_with_an_annotation_outside_its_text_is_refused_and_nothing_trains(guarded, kind, begin, end, problem):
    address, path = guarded
    original = path.read_bytes()
    documents = [training_document(i) for i in range(4)]
    text = cassis.load_cas_from_xmi(documents[2]["xmi"], typesystem=TS).sofa_string
    assert len(text) == 58
    documents[2] = {"xmi": xmi_of(with_annotation(documents[2]["xmi"], kind, begin, end)), "documentId": 77, "userId": "anna"}
    response = httpx.post(address + "train", json={"metadata": METADATA, "documents": documents, "typeSystem": TS_XML}, timeout=60)
    assert response.status_code == 400, response.text
    expected = f"documents[2] (documentId 77): the {kind} annotation at begin {begin}, end {end} {problem} (the text has 58 characters)"
    assert response.json() == {"error": expected + "; nothing is trained"}
    assert httpx.get(address + "status").json() == {"model": "model.pt", "training": None, "last": None}  # no run started
    assert path.read_bytes() == original and [p.name for p in path.parent.iterdir()] == ["model.pt"]
    cas = cassis.load_cas_from_xmi(documents[2]["xmi"], typesystem=TS)
    predicted = httpx.post(address + "predict", json=predict_body(cas), timeout=60)  # the same document to /predict: 400 too
    assert predicted.status_code == 400 and predicted.json() == {"error": expected.replace("documents[2] (documentId 77)", "document (documentId 42)")}
    good = make_cas(text, tokens_of(text, [text.split()]))
    assert suggestions(httpx.post(address + "predict", json=predict_body(good), timeout=60).json()["document"])  # and it serves on


def test_the_index_names_a_document_without_a_document_id(guarded):
    address, _ = guarded
    documents = [training_document(i) for i in range(3)] + [{"xmi": xmi_of(with_annotation(training_document(3)["xmi"], TOKEN, 0, 99))}]
    response = httpx.post(address + "train", json={"metadata": METADATA, "documents": documents, "typeSystem": TS_XML}, timeout=60)
    assert response.status_code == 400 and response.json()["error"].startswith(f"documents[3]: the {TOKEN} annotation at begin 0, end 99 ends past")


# -- the swap rule -----------------------------------------------------------------------------------

SENTENCES = 1280  # one document: a fifth (256) held out for dev, 1024 to train on, enough steps in one epoch to learn "all O"
LINE = "Anna kam nach Wien ."


def annotated_only_where_held_out() -> dict:
    """One document of SENTENCES times LINE whose Anna (PER) and Wien (LOC) are annotated only in the sentences `held_out`
    keeps for dev: the run trains on sentences without any annotation of the layer, so it learns to tag nothing."""
    dev = {int(s.tokens[0]) for s in held_out([[Labeled([str(i)], ["O"]) for i in range(SENTENCES)]]).dev}
    text = " ".join([LINE] * SENTENCES)
    cas = make_cas(text, tokens_of(text, [LINE.split()] * SENTENCES))
    for i in sorted(dev):
        start = i * (len(LINE) + 1)
        cas.add(TS.get_type(NE)(begin=start, end=start + 4, value="PER"))
        cas.add(TS.get_type(NE)(begin=start + 14, end=start + 18, value="LOC"))
    return {"metadata": METADATA, "documents": [{"xmi": cas.to_xmi(), "documentId": 5}], "typeSystem": TS_XML}


def test_a_run_that_learns_nothing_is_not_swapped_in(tmp_path):
    path = tmp_path / "model.pt"
    shutil.copyfile(MODEL, path)
    original = path.read_bytes()
    with torch_threads(1), running(create_app(path, max_chars=len(LINE) * SENTENCES * 2, train_epochs=1)) as address:
        assert httpx.post(address + "train", json=annotated_only_where_held_out(), timeout=60).status_code == 204
        last = wait_for_the_run(address, 300)["last"]
        assert last["dev_sentences"] == SENTENCES // 5 and last["train_sentences"] == SENTENCES - SENTENCES // 5
        assert last["dev_f1"] >= last["served_dev_f1"] == 0.0  # the F1 rule alone would have swapped it in
        assert last["dev_entities"] == 0 and last["served_dev_entities"] > 0 and last["swapped"] is False, last
        served_found = last["served_dev_entities"]
        assert last["reason"] == f"not swapped: the new model finds no entity on the 256 held-out sentences where the served one finds {served_found}"
        assert path.read_bytes() == original and [p.name for p in tmp_path.iterdir()] == ["model.pt"]
        cas = make_cas(LINE, tokens_of(LINE, [LINE.split()]))
        found = suggestions(httpx.post(address + "predict", json=predict_body(cas), timeout=60).json()["document"])
        assert found and {value for _, _, value, _ in found} <= {"pers", "place", "date"}  # the served tagger answers still


def fitted(dev_f1: float, served_f1: float, entities: int, served_entities: int) -> Fitted:
    return Fitted(None, dev_f1, served_f1, 3, entities, served_entities)


def test_a_swap_needs_a_dev_f1_not_below_and_an_entity_where_the_served_model_finds_some():
    assert refusal(fitted(0.41, 0.55, 9, 9), 12) == "not swapped: dev F1 0.41 below the served model's 0.55"
    assert refusal(fitted(0.0, 0.0, 0, 9), 12) == "not swapped: the new model finds no entity on the 12 held-out sentences where the served one finds 9"
    assert refusal(fitted(0.0, 0.0, 0, 1), 1) == "not swapped: the new model finds no entity on the 1 held-out sentence where the served one finds 1"
    assert refusal(fitted(0.0, 0.0, 0, 0), 12) is None  # neither finds an entity: the F1 rule decides
    assert refusal(fitted(0.55, 0.55, 1, 9), 12) is None and refusal(fitted(0.6, 0.2, 30, 0), 12) is None


# -- --keep-models ------------------------------------------------------------------------------------


class Saved:
    """A stand-in model: `save` writes its name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def save(self, path: Path) -> None:
        path.write_text(self.name)


UNRELATED = ["model.before-notes.pt", "model.before-20260101T000000Z.txt", "other.before-20260101T000000Z.pt", "model.pt.before-x", "model.ptx"]


@pytest.mark.parametrize("keep", [0, 1, 3])
def test_the_backups_of_replaced_models_stay_at_keep_models(tmp_path, monkeypatch, keep):
    path = tmp_path / "model.pt"
    path.write_text("model 0")
    for name in UNRELATED:
        (tmp_path / name).write_text(name)
    stamps = iter(["20261206T100000Z"] * 9 + ["20261206T100001Z"] * 2)  # nine swaps in one second, then two in the next
    monkeypatch.setattr(retrain, "stamp", lambda: next(stamps))
    served: list[str] = []
    retrainer = Retrainer(path, lambda p: p.read_text(), served.append, keep=keep)
    returned = [retrainer.replace(Saved(f"model {i}")) for i in range(1, 12)]
    assert path.read_text() == "model 11" and served == [f"model {i}" for i in range(1, 12)]
    kept = backups(path)
    assert [p.read_text() for p in kept] == [f"model {i}" for i in range(11 - keep, 11)]  # the newest, oldest first
    assert kept == [p for p in returned[11 - keep :]] and (keep > 0 or returned == [None] * 11)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.pt", *UNRELATED, *(p.name for p in kept)])  # nothing else deleted
    if keep == 3:
        assert [p.name for p in kept] == ["model.before-20261206T100000Z-9.pt", "model.before-20261206T100001Z.pt", "model.before-20261206T100001Z-2.pt"]


def test_keep_models_is_checked_and_reaches_the_server(monkeypatch):
    result = subprocess.run([FLAIRSUITE, "serve", str(MODEL), "--keep-models", "-1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Invalid value for '--keep-models': -1 is not in the range x>=0." in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    from flairsuite.serve import server

    seen = []
    monkeypatch.setattr(server, "serve", lambda *args, **options: seen.append(options))
    for args, expected in (([], 3), (["--keep-models", "0"], 0), (["--keep-models", "7"], 7)):
        result = CliRunner().invoke(cli, ["serve", str(MODEL), *args])
        assert result.exit_code == 0, result.output
        assert seen.pop()["keep_models"] == expected
