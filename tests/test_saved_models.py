"""Models saved by the code before the `models` package (tests/fixtures/saved-models) load and tag as they did.

`tests/fixtures/make_saved_models.py` wrote `map`, `lcrf-ner` and `cse` over a tiny stack (a character
LM and trainable character embeddings) with the spans their own `predict` gave on two sentences,
as `[first token idx, last token idx, tag]` with Flair's 1-based `token.idx`. Today's code must load
them as users load them (plain Flair for the SequenceTaggers; CSE by its old import path and by
Flair's `Classifier.load`) and give the same spans, by Flair's `predict` and by `flairsuite predict`.
"""

import json
from collections.abc import Callable
from pathlib import Path

import flair.nn
import pytest
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.predict.inputs import predict_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "saved-models"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
Span = list[object]  # [first token idx, last token idx, tag], 1-based as Flair's token.idx


def predicted_spans(model: flair.nn.Classifier) -> list[list[Span]]:
    """The model's own `predict` spans on the fixture's sentences."""
    sentences = [Sentence(text) for text in EXPECTED["sentences"]]
    model.predict(sentences)
    return [[[span.tokens[0].idx, span.tokens[-1].idx, span.tag] for span in sentence.get_spans("ner")] for sentence in sentences]


def load_sequence_tagger(path: Path) -> flair.nn.Classifier:
    return SequenceTagger.load(path)


def load_cse_by_class(path: Path) -> flair.nn.Classifier:
    from flairsuite.models.cse import ClassStartEndTagger  # the file names no module: the old tagging.cse path saved it alike

    return ClassStartEndTagger.load(path)


def load_cse_by_flair(path: Path) -> flair.nn.Classifier:
    import flairsuite.models.cse  # noqa: F401  (Flair's Classifier.load finds the class among the imported subclasses)

    return flair.nn.Classifier.load(path)


@pytest.mark.parametrize(
    "name, load",
    [("map", load_sequence_tagger), ("lcrf-ner", load_sequence_tagger), ("cse", load_cse_by_class), ("cse", load_cse_by_flair)],
)
def test_saved_model_loads_and_predicts_the_recorded_spans(name: str, load: Callable[[Path], flair.nn.Classifier]) -> None:
    model = load(FIXTURES / f"{name}.pt")
    if name == "cse":
        assert type(model).__name__ == "ClassStartEndTagger" and type(model).__module__ == "flairsuite.models.cse"
    else:
        assert type(model) is SequenceTagger
    assert predicted_spans(model) == EXPECTED["tags"][name]


@pytest.mark.parametrize("name", ["map", "lcrf-ner", "cse"])
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_saved_model_through_flairsuite_predict(name: str, fast: bool, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    # as written text: segtok keeps "Berlin ." and the next sentence together, but splits "Berlin." from it
    text.write_text("\n".join(s.replace(" .", ".").replace(" ,", ",") for s in EXPECTED["sentences"]) + "\n", encoding="utf-8")
    output, sentences, tokens = predict_file(FIXTURES / f"{name}.pt", text, "json", fast, None, reader_spans=False)  # the model's spans as tagged
    objects = [json.loads(line) for line in output.splitlines()]
    assert [o["tokens"] for o in objects] == [s.split() for s in EXPECTED["sentences"]]  # the splitter keeps the sentences
    assert (sentences, tokens) == (2, sum(len(s.split()) for s in EXPECTED["sentences"]))
    spans = [[[span["start"] + 1, span["end"], span["type"]] for span in o["spans"]] for o in objects]
    assert spans == EXPECTED["tags"][name]
