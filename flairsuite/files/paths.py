"""Where things live: the datasets folder, and every artifact folder below $FLAIRSUITE_HOME.

| function | folder | holds |
|---|---|---|
| `corpora_dir()` | `--corpora-dir`, else $FLAIRSUITE_CORPORA, else `<home>/corpora` | downloaded datasets |
| `charlm_dir(home)` | `<home>/charlm` | character LMs, one folder per model (`de-forward/best-lm.pt`) |
| `wordvectors_dir(home)` | `<home>/wordvectors` | fastText vectors, one folder per language (`de-fasttext/`) |
| `bert_dir(home)` | `<home>/bert` | small BERTs, one Hugging Face model folder per model (`de-cpu/`) |
| `lexicons_dir(home)` | `<home>/lexicons` | entity lexicons mined from raw text, one TSV per lexicon (`de.tsv`) |
| `results_dir(home)` | `<home>/results` | tagging runs, one folder per experiment |
| `cache_dir(home)` | `<home>/cache` | what is computed once and reused: |
| `prepared_dir(home)` | `<home>/cache/prepared` | raw text prepared for pre-training (shared by train-charlm and train-fasttext) |
| `embeddings_cache_dir(home)` | `<home>/cache/embeddings` | frozen embeddings of corpus splits |
| `bert_data_dir(home)` | `<home>/cache/bert-data` | prepared text as WordPiece ids for BERT pre-training |

No other module builds these paths.

Models to read (`model_roots`): an embedding spec (`charlm:de-forward`, `fasttext:de`, `bert:NAME`) or an `adapt:`
block's initial pair or vectors is looked up below these folders in turn, the first that holds it wins:

1. the home folder (`$FLAIRSUITE_HOME`, else the current directory), as for everything else;
2. each folder of `$FLAIRSUITE_MODELS` (folders holding `charlm/`, `wordvectors/`, `bert/`, joined by `os.pathsep`);
3. only while `$FLAIRSUITE_HOME` is unset: the clone flairsuite is installed from (an editable install: the folder
   above the package, when it holds `charlm/`), so the released models committed there are found from a user's own
   folder. A set `$FLAIRSUITE_HOME` is a home of its own (the tests', a cluster's): nothing beyond it and
   `$FLAIRSUITE_MODELS` is read.

What is missing in all of them is an error naming every place looked. Models and everything else a command writes
still go below the home folder; the lookup only reads.

The results folder (`results_folder`): `tag` writes `<home>/results/<name>/` and prints that path; `flairsuite results
DIR` reads DIR as given when it is a folder (so the printed path, from the folder `tag` ran in), else a relative DIR
below the home folder (`results/letters/` under `$FLAIRSUITE_HOME`), else `<home>/results/DIR` (an experiment name).
Without `$FLAIRSUITE_HOME` the first two are one folder.
"""

import os
from pathlib import Path
from typing import Optional, Union

from flairsuite.errors import FlairsuiteError

CORPORA_ENV = "FLAIRSUITE_CORPORA"
HOME_ENV = "FLAIRSUITE_HOME"
MODELS_ENV = "FLAIRSUITE_MODELS"


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


def charlm_dir(root: Optional[Path] = None) -> Path:
    """Character LMs below `root` (default: the home folder)."""
    return (home() if root is None else root) / "charlm"


def wordvectors_dir(root: Optional[Path] = None) -> Path:
    """Word vectors below `root` (default: the home folder)."""
    return (home() if root is None else root) / "wordvectors"


def bert_dir(root: Optional[Path] = None) -> Path:
    """Small BERTs below `root` (default: the home folder)."""
    return (home() if root is None else root) / "bert"


def lexicons_dir(root: Optional[Path] = None) -> Path:
    """Where `discover-words` writes lexicons (`lexicons/NAME.tsv`) and `lexicon:NAME` finds them."""
    return (home() if root is None else root) / "lexicons"


def results_dir(root: Optional[Path] = None) -> Path:
    """Tagging results below `root` (default: the home folder)."""
    return (home() if root is None else root) / "results"


def cache_dir(root: Optional[Path] = None) -> Path:
    """Computed-once data below `root` (default: the home folder); git-ignored."""
    return (home() if root is None else root) / "cache"


def prepared_dir(root: Optional[Path] = None) -> Path:
    """Prepared raw-text corpora, one folder per language and settings."""
    return cache_dir(root) / "prepared"


def embeddings_cache_dir(root: Optional[Path] = None) -> Path:
    """Frozen embeddings of corpus splits, one folder per embedding spec."""
    return cache_dir(root) / "embeddings"


def bert_data_dir(root: Optional[Path] = None) -> Path:
    """Prepared raw text tokenized for BERT pre-training, one folder per corpus and vocabulary."""
    return cache_dir(root) / "bert-data"


def installed_clone() -> Optional[Path]:
    """The repository flairsuite runs from (an editable install: the folder above the package) when it holds `charlm/`; else None."""
    root = Path(__file__).resolve().parent.parent.parent  # flairsuite/files/paths.py -> the folder above flairsuite/
    return root if (root / "charlm").is_dir() else None


def model_roots(root: Optional[Path] = None) -> tuple[Path, ...]:
    """The folders whose `charlm/`, `wordvectors/` and `bert/` hold models to read, in lookup order (module docstring):
    `root` (default: the home folder), the folders of $FLAIRSUITE_MODELS, and without $FLAIRSUITE_HOME the installed
    clone. A folder named twice counts once, in its first place and spelling."""
    first = home() if root is None else root
    listed = [Path(folder) for folder in os.environ.get(MODELS_ENV, "").split(os.pathsep) if folder]
    clone = installed_clone() if not os.environ.get(HOME_ENV) else None
    roots: dict[Path, Path] = {}
    for folder in [first, *listed, *([clone] if clone is not None else [])]:
        roots.setdefault(folder.resolve(), folder)
    return tuple(roots.values())


def results_folder(given: Optional[Union[str, Path]] = None, root: Optional[Path] = None) -> Path:
    """The folder `flairsuite results DIR` reads (module docstring): DIR as given, else below `root` (default: the home
    folder), else `<root>/results/DIR`; without DIR the results folder. None of them a folder: a one-line error naming each."""
    if given is None or str(given) == "":
        return results_dir(root)
    path, base = Path(given), home() if root is None else root
    places: dict[Path, Path] = {}
    for place in [path] if path.is_absolute() else [path, base / path, results_dir(base) / path]:
        places.setdefault(place.resolve(), place)
    for place in places.values():
        if place.is_dir():
            return place
    others = [str(place) for place in list(places.values())[1:]]
    elsewhere = f" nor {' nor '.join(others)}" if others else ""
    raise FlairsuiteError(f"{given}: no such folder{elsewhere} (pass the results folder, one experiment folder or an experiment's name)")
