"""`flairsuite.charlm.summary`: whether an LM reads text without spaces, read from the `summary.json` that
`train-charlm` writes beside it; the committed pairs decide by their language, anything else falls back to Flair's
spaced reading."""

import json
import shutil
from pathlib import Path

from flairsuite.charlm.summary import learned_unspaced, trained_on_unspaced_text

CHARLM = Path(__file__).resolve().parent.parent / "charlm"


def test_the_committed_pairs_decide_by_their_language() -> None:
    assert trained_on_unspaced_text(CHARLM / "zh-forward" / "best-lm.pt")
    assert trained_on_unspaced_text(CHARLM / "zh-backward" / "best-lm.pt")
    for name in ("de-forward", "da-forward", "en-backward"):
        assert not trained_on_unspaced_text(CHARLM / name / "best-lm.pt")


def test_an_lm_without_a_readable_summary_reads_spaced_text(tmp_path: Path) -> None:
    lm = tmp_path / "best-lm.pt"  # never opened: only the summary beside it is read
    assert not trained_on_unspaced_text(lm)  # no summary: an LM from elsewhere
    (tmp_path / "summary.json").write_text("{not json", encoding="utf-8")
    assert not trained_on_unspaced_text(lm)
    shutil.copy(CHARLM / "zh-forward" / "summary.json", tmp_path / "summary.json")
    assert trained_on_unspaced_text(lm)  # the same folder, once it holds the Chinese summary


def test_summaries_that_name_no_language_read_spaced_text() -> None:
    chinese = json.loads((CHARLM / "zh-forward" / "summary.json").read_text(encoding="utf-8"))
    assert learned_unspaced(chinese)
    for summary in ({}, {"corpus": None}, {"corpus": {"config": {}}}, {"corpus": {"config": {"language": 7}}}):
        assert not learned_unspaced(summary)
