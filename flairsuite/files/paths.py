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
"""

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
