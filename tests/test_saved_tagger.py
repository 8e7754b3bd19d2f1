"""Loading a saved tagger (`flairsuite.inference.saved_tagger`): tensors mapped from the file while the model is built,
nothing of the file mapped once it is."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.inference.saved_tagger import load_tagger, read_state, still_mapped

MODELS = Path(__file__).resolve().parent / "fixtures" / "saved-models"
TEXT = "Am Montag besuchte Anna die Stadt Berlin ."


def tags(model: SequenceTagger) -> list[list[str]]:
    """The spans the model predicts in TEXT, as [text, type]."""
    sentence = Sentence(TEXT)
    model.predict(sentence)
    return [[span.text, span.tag] for span in sentence.get_spans(model.label_type)]


@pytest.fixture(scope="module")
def expected() -> list[list[str]]:
    """map.pt's tags, loaded as Flair loads it."""
    found = tags(SequenceTagger.load(str(MODELS / "map.pt")))
    assert found
    return found


def test_the_file_is_mapped_while_read_and_not_once_the_model_is_built(tmp_path: Path, expected: list[list[str]]) -> None:
    model_path = tmp_path / "model.pt"
    shutil.copy(MODELS / "map.pt", model_path)
    state = read_state(model_path)
    assert still_mapped(model_path)
    del state
    assert not still_mapped(model_path)
    model = load_tagger(model_path)
    assert not still_mapped(model_path)
    assert tags(model) == expected


def test_a_model_that_keeps_a_tensor_of_the_file_is_read_whole_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expected: list[list[str]]) -> None:
    """Should a model class keep a tensor of the loaded state itself, the file is read again without mapping."""
    model_path = tmp_path / "model.pt"
    shutil.copy(MODELS / "map.pt", model_path)
    flair_load = SequenceTagger.load.__func__

    def keeping(cls, state):  # noqa: ANN001
        model = flair_load(cls, state)
        model.kept = next(iter(state["state_dict"].values()))  # a tensor of the state, not a copy
        return model

    monkeypatch.setattr(SequenceTagger, "load", classmethod(keeping))
    model = load_tagger(model_path)
    assert not still_mapped(model_path)
    assert torch.equal(model.kept, next(iter(torch.load(model_path, weights_only=False)["state_dict"].values())))
    assert tags(model) == expected


def test_a_legacy_format_file_loads_as_before(tmp_path: Path, expected: list[list[str]]) -> None:
    """A file torch saved without its zip format cannot be mapped; it is read whole and tags as before."""
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.load(MODELS / "map.pt", map_location="cpu", weights_only=False), legacy, _use_new_zipfile_serialization=False)
    assert tags(load_tagger(legacy)) == expected


def test_the_loaded_model_keeps_working_when_its_file_is_emptied(tmp_path: Path, expected: list[list[str]]) -> None:
    """Emptying the file under a loaded model (as `cp` over it does) changes nothing. In a child process, since a tensor
    still mapped from an emptied file would kill it (SIGBUS)."""
    model_path = tmp_path / "model.pt"
    shutil.copy(MODELS / "map.pt", model_path)
    script = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from flair.data import Sentence
        from flairsuite.inference.saved_tagger import load_tagger
        model = load_tagger(Path({str(model_path)!r}))
        def tags():
            sentence = Sentence({TEXT!r})
            model.predict(sentence)
            return [[span.text, span.tag] for span in sentence.get_spans(model.label_type)]
        before = tags()
        with open({str(model_path)!r}, "r+b") as file:
            file.truncate(0)
        print(json.dumps([before, tags()]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == after == expected
