"""The brief's caps on committed files, checked on what git tracks (and on the released model folders as they lie)."""

import fnmatch
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024
CAPS = (("charlm/*/best-lm.pt", 50 * MB), ("bert/*/*", 50 * MB), ("wordvectors/*/*", 10 * MB), ("*", 1 * MB))  # first match wins


def cap(path: str) -> int:
    return next(limit for pattern, limit in CAPS if fnmatch.fnmatch(path, pattern))


def tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return [name for name in listed.split("\0") if name]


def test_committed_files_keep_their_size_caps() -> None:
    over = [(name, (ROOT / name).stat().st_size) for name in tracked() if (ROOT / name).is_file() and (ROOT / name).stat().st_size > cap(name)]
    assert not over, f"over the cap: {over}"


def test_the_caps_are_the_briefs() -> None:
    assert cap("charlm/de-forward/best-lm.pt") == 50 * MB and cap("charlm/de-forward/summary.json") == 1 * MB
    assert cap("bert/de-cpu/model.safetensors") == 50 * MB and cap("wordvectors/de-quickstart-fasttext/vectors.kv") == 10 * MB
    assert cap("results/table8-de-1h/table8.md") == 1 * MB
