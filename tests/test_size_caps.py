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

