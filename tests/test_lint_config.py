"""`ruff check .` lints every package of flairsuite: the top-level data folders it leaves out (corpora/, cache/,
results/) are anchored to the project root, so the packages of the same names are linted."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_lints_the_packages_named_like_the_excluded_data_folders() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).is_file():
        pytest.skip("ruff is not installed")
    listed = subprocess.run([ruff, "check", ".", "--show-files"], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True).stdout
    files = {Path(line.strip()).resolve() for line in listed.splitlines() if line.strip()}
    for package in ("corpora", "results"):
        sources = set((ROOT / "flairsuite" / package).glob("*.py"))
        assert sources and sources <= files, f"flairsuite/{package} is not linted"
