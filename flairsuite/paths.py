"""Where artifacts live: the corpora directory and the artifact homes under $FLAIRSUITE_HOME."""

import os
from pathlib import Path
from typing import Optional, Union

CORPORA_ENV = "FLAIRSUITE_CORPORA"
HOME_ENV = "FLAIRSUITE_HOME"


def home() -> Path:
    """The folder holding `corpora/`, `charlm/` and `results/`: $FLAIRSUITE_HOME or the current directory."""
    return Path(os.environ.get(HOME_ENV) or ".")


def corpora_dir(option: Optional[Union[str, Path]] = None) -> Path:
    """The datasets folder: the `--corpora-dir` option, then $FLAIRSUITE_CORPORA, then `<home>/corpora`."""
    if option:
        return Path(option)
    if os.environ.get(CORPORA_ENV):
        return Path(os.environ[CORPORA_ENV])
    return home() / "corpora"
