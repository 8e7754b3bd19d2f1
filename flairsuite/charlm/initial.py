"""The trained LM a `train-charlm --init` run continues on other text: where it is, what it was trained with, its weights.

`--init` names a pair (`de`: `charlm/de-forward` and `charlm/de-backward`; or a path prefix, `charlm/de`) or, for one
`--direction`, a model folder. The new run takes from it the dictionary (the new text is prepared with it,
`PrepareConfig.base_chars`), the hyper-parameters (architecture options that differ are refused; the training-loop ones may
be given), and its weights; its counters start at zero, so `--max-chars` counts the new text's characters.

Learning rate: the run restarts at the initial model's last learning rate (the released German pair never annealed:
20) with a fresh annealing schedule (patience counted from the first validation point of the new run). The first
validation point is the initial model itself on the new text's valid split (characters seen 0): `best-lm.pt` starts as
a copy of it, so the adapted model is never worse on the new valid text than the one it started from.

A character of the new text that the initial model lacks becomes `<unk>` by default (`--new-chars unk`);
`--new-chars extend` gives it fresh rows after the model's own (`extended_state`), initialised as the `<unk>` row. On
H. Arendt the two are equal within noise (docs/language-models.md, the measurement), so `<unk>` keeps the dictionary.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch

from flairsuite.charlm.storage import load_language_model
from flairsuite.errors import FlairsuiteError
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file
from flairsuite.rawtext.prepare import file_digest

MODEL_FILE = "best-lm.pt"
ARCHITECTURE = ("hidden_size", "nlayers", "embedding_size")  # what the weights fix: a different value is refused


@dataclass(frozen=True)
class InitialModel:
    """One direction's initial LM: its `best-lm.pt`, that file's digest, and its summary.json (empty for an LM from elsewhere)."""

    path: Path
    digest: str
    summary: dict[str, Any]
    chars: tuple[str, ...]  # its dictionary without <unk> (id 0), in id order
    forward: bool
    architecture: dict[str, int]

    @property
    def last_learning_rate(self) -> Optional[float]:
        history = self.summary.get("history") or []
        return float(history[-1]["lr"]) if history and "lr" in history[-1] else None

    def record(self) -> dict[str, Any]:
        """What the new run's summary.json says of where it started."""
        return {
            "model": str(self.path),
            "sha256": self.digest,
            "chars_seen": self.summary.get("chars_seen"),
            "valid_ppl": self.summary.get("valid_ppl"),
        }


def read_initial(path: Path) -> InitialModel:
    """The initial LM at `path` (a `best-lm.pt`); not a Flair LM: a one-line error."""
    model = load_language_model(path, "; --init needs a folder of train-charlm holding best-lm.pt")
    summary_path = path.parent / SUMMARY_FILE
    summary = read_summary_file(summary_path, kind="a train-charlm summary") if summary_path.is_file() else {}
    chars = [item.decode("utf-8") if isinstance(item, bytes) else item for item in model.dictionary.idx2item]
    if not chars or chars[0] != "<unk>":
        raise FlairsuiteError(f"{path}: its dictionary does not start with <unk>; --init needs an LM of train-charlm or Flair")
    architecture = {"hidden_size": model.hidden_size, "nlayers": model.nlayers, "embedding_size": model.embedding_size}
    return InitialModel(path, file_digest(path), summary, tuple(chars[1:]), bool(model.is_forward_lm), architecture)


def initial_folder(init: str, direction: str, models_dirs: tuple[Path, ...]) -> Path:
    """The model folder `--init` names for `direction` (forward, backward): `INIT-direction` as a path, else below one of
    `models_dirs`; `INIT` itself where it is one model folder. A folder without best-lm.pt is a one-line error."""
    given = Path(init)
    candidates = list(dict.fromkeys([Path(f"{init}-{direction}"), *(folder / f"{init}-{direction}" for folder in models_dirs)]))
    found = [c for c in candidates if c.is_dir()]
    if (given / MODEL_FILE).is_file() or (given.is_dir() and not found):
        folder = given
    elif found:
        folder = found[0]
    else:
        raise FlairsuiteError(f"--init {init}: no model folder {' nor '.join(map(str, candidates))}")
    if not (folder / MODEL_FILE).is_file():
        raise FlairsuiteError(f"--init {init}: {folder} holds no {MODEL_FILE} to start from")
    return folder


def initial_models(init: str, directions: tuple[bool, ...], models_dirs: tuple[Path, ...]) -> dict[bool, InitialModel]:
    """The initial LM of each direction (True: forward); a model folder of the other direction is a one-line error."""
    models = {}
    for forward in directions:
        name = "forward" if forward else "backward"
        model = read_initial(initial_folder(init, name, models_dirs) / MODEL_FILE)
        if model.forward != forward:
            raise FlairsuiteError(f"--init {init}: {model.path} is a {'forward' if model.forward else 'backward'} LM, not a {name} one")
        models[forward] = model
    if len({model.chars for model in models.values()}) > 1:
        raise FlairsuiteError(f"--init {init}: the two directions have different dictionaries; continue them one --direction at a time")
    return models


def extended_state(initial: dict[str, torch.Tensor], rows: int) -> dict[str, torch.Tensor]:
    """The initial LM's weights with `rows` dictionary entries instead of its own: the character embedding, decoder weight
    and decoder bias get fresh rows after the model's own, copies of the `<unk>` row (id 0), so a new character starts
    out read and predicted as `<unk>` was."""
    state = {}
    for key, value in initial.items():
        if key.startswith(("encoder.", "decoder.")) and value.dim() >= 1 and value.size(0) < rows:
            fresh = value[:1].expand(rows - value.size(0), *value.shape[1:])
            value = torch.cat([value, fresh], dim=0)
        state[key] = value
    return state
