"""How a character LM's weights are stored in `best-lm.pt`: float32 (Flair's own) or float16 (half the file).

A hidden-1024 LM is 19.3 MB in float32 and 9.7 MB in float16, under the 16 MiB a model file may take. Plain
Flair loads either: `LanguageModel.load_language_model` builds the model in float32 and `load_state_dict`
copies the stored values into it, so a float16 file computes in float32 with weights rounded once.
"""

from pathlib import Path
from typing import Any

import torch

from flairsuite.errors import FlairsuiteError

STORAGE_DTYPES = {"float32": torch.float32, "float16": torch.float16}


def check_storage(storage: str) -> str:
    """`storage` when it names a stored dtype; else a one-line error."""
    if storage not in STORAGE_DTYPES:
        raise FlairsuiteError(f"model dtype must be one of: {', '.join(STORAGE_DTYPES)} (found {storage!r})")
    return storage


def store_weights_as(path: Path, storage: str) -> None:
    """Rewrite the Flair LanguageModel file `path` in place with its floating-point weights as `storage`.

    Callers pass a temporary file (`atomic_file`): the model file itself is never half-written.
    """
    dtype = STORAGE_DTYPES[check_storage(storage)]
    state = torch.load(str(path), map_location="cpu", weights_only=False)
    state["state_dict"] = {
        key: value.to(dtype) if value.is_floating_point() else value for key, value in state["state_dict"].items()
    }
    torch.save(state, str(path), pickle_protocol=4)


def load_language_model(path: Path, remedy: str = "") -> Any:
    """Flair's LanguageModel in the file `path`; a file that is none is a one-line error (`remedy`: what to do, appended)."""
    from flair.models import LanguageModel

    try:
        return LanguageModel.load_language_model(path)
    except Exception as err:  # any unpickling or state-dict failure: the file is not a Flair character LM
        first_line = next(iter(str(err).splitlines()), "")
        raise FlairsuiteError(f"{path}: not a Flair character LM ({type(err).__name__}: {first_line}){remedy}") from None
