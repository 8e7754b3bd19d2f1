"""What `train-charlm` wrote beside an LM file (`summary.json`) says of how the LM reads text."""

from pathlib import Path
from typing import Any

from flairsuite.corpora.registry import language_segmentation
from flairsuite.errors import FlairsuiteError
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file


def learned_unspaced(summary: dict[str, Any]) -> bool:
    """Whether the summary's LM learned a language written without spaces (Chinese); False where it names none."""
    try:
        language = summary["corpus"]["config"]["language"]
    except (KeyError, TypeError):
        return False
    return isinstance(language, str) and language_segmentation(language) == "characters"


def trained_on_unspaced_text(path: Path) -> bool:
    """Whether the LM at `path` learned a language written without spaces, by the language its `summary.json` records;
    False without a readable summary (an LM from elsewhere: Flair's default applies)."""
    try:
        summary = read_summary_file(path.parent / SUMMARY_FILE)
    except FlairsuiteError:
        return False
    return learned_unspaced(summary)
