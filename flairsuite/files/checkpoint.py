"""Training checkpoints: everything needed to continue a killed run exactly, written atomically."""

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file


def rng_state() -> dict[str, Any]:
    """The state of every random generator training uses."""
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore generators saved by `rng_state`."""
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(path: Path, state: dict[str, Any]) -> None:
    """Write a checkpoint atomically: a kill at any moment leaves the previous one intact."""
    with atomic_file(path) as temp:
        torch.save(state, temp)


def load(path: Path) -> dict[str, Any]:
    """Read a checkpoint; a corrupt or foreign file is a one-line error."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch raises many types for damaged files
        raise FlairsuiteError(f"{path}: corrupt or unreadable checkpoint ({type(err).__name__}); delete it or start over with --force") from None
    if not isinstance(state, dict) or "progress" not in state:
        raise FlairsuiteError(f"{path}: not a flairsuite checkpoint; delete it or start over with --force")
    return state
