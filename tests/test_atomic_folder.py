"""atomic_folder: a folder gets its name only when complete, and what a killed writer left is cleared on the next write."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_folder


def test_a_killed_writers_part_folder_is_removed_and_a_running_ones_kept(tmp_path: Path) -> None:
    target = tmp_path / "de-fasttext"
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    stale = tmp_path / f".de-fasttext.{killed.pid}.part"
    (stale / "model").mkdir(parents=True)
    (stale / "model" / "fasttext.model").write_bytes(b"half written")
    running = tmp_path / f".de-fasttext.{os.getppid()}.part"  # a writer that still runs: not touched
    running.mkdir()
    other = tmp_path / f".de-other.{killed.pid}.part"  # another target's: not touched
    other.mkdir()
    with atomic_folder(target, force=False) as temp:
        (temp / "vectors.kv").write_text("done", encoding="utf-8")
    assert (target / "vectors.kv").read_text(encoding="utf-8") == "done"
    assert not stale.exists() and running.is_dir() and other.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, running.name, other.name])


def test_a_failed_block_leaves_no_target_and_no_part(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with atomic_folder(target, force=False) as temp:
            (temp / "x").write_text("half", encoding="utf-8")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
    target.mkdir()
    with pytest.raises(FlairsuiteError, match="exists: pass --force"):
        with atomic_folder(target, force=False):
            pass
