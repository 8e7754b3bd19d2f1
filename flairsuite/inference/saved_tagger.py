"""A saved suite tagger loaded from its file, and whether its tags are read as entity spans.

Any tagger of the registry (`flairsuite.models.registry.TAGGERS`) loads: the Flair SequenceTaggers (LCRF-NER saves
itself as one) and `cse` (`ClassStartEndTagger`). A file that is missing, foreign or damaged is a one-line error naming
it, never a traceback from torch or Flair. `predict`, `serve`, `evaluate` and `suggest` all load their model here.
"""

from pathlib import Path

import flair.nn
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger

import flairsuite.bert  # noqa: F401  (a tagger on a relative/WWA BERT rebuilds its model type "flairsuite_bert" on loading)
from flairsuite.errors import FlairsuiteError
from flairsuite.logs import flair_quiet
from flairsuite.models.registry import saved_classes


def load_tagger(path: Path) -> flair.nn.Classifier:
    """The suite tagger saved at `path` (any class of `saved_classes`); anything else is a one-line error."""
    if not path.is_file():
        raise FlairsuiteError(f"{path}: {'not a file' if path.exists() else 'model file not found'}")
    classes = saved_classes()
    try:
        state = load_torch_state(str(path))
        # Flair files from before `__cls__` was recorded hold SequenceTaggers
        kind = state.get("__cls__", SequenceTagger.__name__) if isinstance(state, dict) else type(state).__name__
        if kind not in classes:
            raise FlairsuiteError(f"{path}: a {kind}, not a flairsuite tagger model (one of {', '.join(sorted(classes))})")
        with flair_quiet():
            return classes[kind].load(state)
    except FlairsuiteError:
        raise
    except Exception as err:  # torch and Flair raise many kinds on a foreign or damaged file
        detail = str(err).strip().splitlines()
        reason = f"{type(err).__name__}: {detail[0]}" if detail else type(err).__name__
        raise FlairsuiteError(f"{path}: not a loadable flairsuite tagger model ({reason})") from None


def predicts_spans(model: flair.nn.Classifier) -> bool:
    """Whether the model's tags are read as spans: a SequenceTagger says so (`predict_spans`); CSE always predicts spans."""
    return model.predict_spans if isinstance(model, SequenceTagger) else True
