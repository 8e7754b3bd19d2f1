"""A saved suite tagger loaded from its file, and whether its tags are read as entity spans.

Any tagger of the registry (`flairsuite.models.registry.TAGGERS`) loads: the Flair SequenceTaggers (LCRF-NER saves
itself as one) and `cse` (`ClassStartEndTagger`). A file that is missing, foreign or damaged is a one-line error naming
it, never a traceback from torch or Flair. `predict`, `serve`, `evaluate` and `suggest` all load their model here.

The file's tensors are mapped from it (`torch.load`'s `mmap`) rather than read into memory first: the model copies
them into its own parameters, so a model with `fasttext:de` (a 190 MB table) loads in 0.3 s instead of 0.8 s and its
process holds the table once instead of twice for a moment. Once the model is built nothing of the file may stay
mapped (`still_mapped`, from Linux's list of mappings), so that the file can be replaced or rewritten while the model
is in use; a model that kept a tensor of the file is loaded again from the file read whole. A file in torch's legacy
format (not a zip archive), or a system without that list, is read whole, as Flair reads it.
"""

import zipfile
from pathlib import Path
from typing import Any

import flair.nn
import torch
from flair.file_utils import load_torch_state
from flair.models import SequenceTagger

import flairsuite.bert  # noqa: F401  (a tagger on a relative/WWA BERT rebuilds its model type "flairsuite_bert" on loading)
from flairsuite.errors import FlairsuiteError
from flairsuite.logs import flair_quiet
from flairsuite.models.registry import saved_classes

MAPS = Path("/proc/self/maps")  # where Linux lists the files a process has mapped


def load_tagger(path: Path) -> flair.nn.Classifier:
    """The suite tagger saved at `path` (any class of `saved_classes`); anything else is a one-line error."""
    if not path.is_file():
        raise FlairsuiteError(f"{path}: {'not a file' if path.exists() else 'model file not found'}")
    classes = saved_classes()
    try:
        state = read_state(path)
        # Flair files from before `__cls__` was recorded hold SequenceTaggers
        kind = state.get("__cls__", SequenceTagger.__name__) if isinstance(state, dict) else type(state).__name__
        if kind not in classes:
            raise FlairsuiteError(f"{path}: a {kind}, not a flairsuite tagger model (one of {', '.join(sorted(classes))})")
        with flair_quiet():
            model = classes[kind].load(state)
            del state
            if MAPS.is_file() and still_mapped(path):  # the model kept a tensor of the file itself: read it whole instead
                model = classes[kind].load(read_state(path, mapping=False))
        return model
    except FlairsuiteError:
        raise
    except Exception as err:  # torch and Flair raise many kinds on a foreign or damaged file
        detail = str(err).strip().splitlines()
        reason = f"{type(err).__name__}: {detail[0]}" if detail else type(err).__name__
        raise FlairsuiteError(f"{path}: not a loadable flairsuite tagger model ({reason})") from None


def read_state(path: Path, mapping: bool = True) -> Any:
    """What torch saved at `path`, its tensors mapped from the file with `mapping` where torch's format allows it and the
    process can tell what it has mapped (module docstring)."""
    if mapping and MAPS.is_file() and zipfile.is_zipfile(path):
        return torch.load(str(path), map_location="cpu", weights_only=False, mmap=True)
    return load_torch_state(str(path))


def still_mapped(path: Path) -> bool:
    """Whether part of the file at `path` is still mapped into this process (a tensor of it alive)."""
    target = str(path.resolve())
    with open(MAPS, encoding="utf-8", errors="replace") as maps:
        return any(line.rstrip("\n").removesuffix(" (deleted)").endswith(target) for line in maps)


def predicts_spans(model: flair.nn.Classifier) -> bool:
    """Whether the model's tags are read as spans: a SequenceTagger says so (`predict_spans`); CSE always predicts spans."""
    return model.predict_spans if isinstance(model, SequenceTagger) else True
