"""One process per training folder (flairsuite/files/locks.py): the lock, its one-line errors, and what rank 0 of a
torchrun launch tells the other ranks so none waits at a barrier for a rank that stopped."""

import pytest

from flairsuite.errors import FlairsuiteError
from flairsuite.files.locks import BUSY, FAILED, HELD, LOCK_FILE, claimed, held, refuse_if_busy
from flairsuite.runtime.distributed import Ranks


class Recording(Ranks):
    """Ranks of a two-rank launch without a process group: rank 0 records what it sends, other ranks receive `incoming`."""

    def __init__(self, rank: int, world: int, incoming: float = 0.0) -> None:
        super().__init__(rank=rank, world=world)
        object.__setattr__(self, "sent", [])
        object.__setattr__(self, "incoming", incoming)

    def broadcast_value(self, value: float) -> float:
        if self.main:
            self.sent.append(value)
            return value
        return self.incoming


def test_a_second_holder_is_refused_until_the_first_lets_go(tmp_path):
    folder = tmp_path / "model"
    with claimed(folder) as first:
        with claimed(folder) as second:
            assert (first, second) == (True, False)
        with pytest.raises(FlairsuiteError, match="is being trained by another process"):
            refuse_if_busy(folder)
    with claimed(folder) as again:
        assert again
    refuse_if_busy(tmp_path / "never-trained")  # no lock file: nothing to refuse, nothing created
    assert not (tmp_path / "never-trained").exists()


def test_rank_zero_tells_the_other_ranks_whether_it_holds_the_folder(tmp_path):
    folder = tmp_path / "model"
    zero = Recording(rank=0, world=2)
    with held(folder, zero):
        assert (folder / LOCK_FILE).is_file()
        busy = Recording(rank=0, world=2)
        with pytest.raises(FlairsuiteError, match="being trained by another process"), held(folder, busy):
            pass
    assert (zero.sent, busy.sent) == ([HELD], [BUSY])

    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    failed = Recording(rank=0, world=2)
    with pytest.raises(FlairsuiteError, match="cannot write to"), held(blocked / "model", failed):
        pass
    assert failed.sent == [FAILED]


@pytest.mark.parametrize("state, message", [(BUSY, "being trained by another process"), (FAILED, "rank 0's error says why")])
def test_the_other_ranks_stop_with_rank_zeros_verdict(tmp_path, state, message):
    with pytest.raises(FlairsuiteError, match=message), held(tmp_path / "model", Recording(rank=1, world=2, incoming=state)):
        pass
    entered = []
    with held(tmp_path / "model", Recording(rank=1, world=2, incoming=HELD)):
        entered.append(True)
    assert entered and not (tmp_path / "model").exists()  # rank 1 neither creates nor locks the folder: rank 0 does


def test_work_waited_for_runs_unlocked_where_the_file_system_takes_no_locks(tmp_path, monkeypatch):
    import errno
    import fcntl

    from flairsuite.files import locks

    def no_locks(handle, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    done = []
    with locks.waited_for(tmp_path / "cache" / "x.npy.lock"):  # no error, no traceback: the work is done, unlocked
        done.append(True)
    assert done and (tmp_path / "cache" / "x.npy.lock").is_file()
    with pytest.raises(FlairsuiteError, match=r"^cannot lock .*: No locks available \(the file system takes no advisory locks\)$"):
        with claimed(tmp_path / "run"):  # a training run, by contrast, must not go unguarded
            pass


def test_a_cache_folder_needed_by_two_processes_at_once_is_built_once(tmp_path):
    """train-charlm's two directions (or two train-bert runs) started side by side need the same prepared folder: the
    first builds it, the second waits, builds nothing and reads the first one's metadata."""
    import threading

    from flairsuite.files.locks import folder_built_once

    folder = tmp_path / "cache" / "de-1234"
    building, release, waiting = threading.Event(), threading.Event(), threading.Event()
    calls, results = [], {}

    def slow_build(temp):
        calls.append("first")
        (temp / "train.npy").write_bytes(b"ids")
        building.set()
        assert release.wait(30)
        return {"chars": 3}

    def second_build(temp):
        calls.append("second")
        return {"chars": -1}

    first = threading.Thread(target=lambda: results.setdefault("first", folder_built_once(folder, slow_build)))
    first.start()
    assert building.wait(30)
    second = threading.Thread(target=lambda: results.setdefault("second", folder_built_once(folder, second_build, waiting.set)))
    second.start()
    assert waiting.wait(30)  # it found the lock held and waits
    assert not (folder / "meta.json").exists()
    release.set()
    first.join(30), second.join(30)
    assert calls == ["first"] and results == {"first": {"chars": 3}, "second": {"chars": 3}}
    assert (folder / "train.npy").read_bytes() == b"ids"
    assert folder_built_once(folder, second_build) == {"chars": 3} and calls == ["first"]  # later calls read it


def test_a_failed_build_leaves_no_folder_and_the_next_call_builds_it(tmp_path):
    from flairsuite.files.locks import folder_built_once

    folder = tmp_path / "cache" / "de-1234"

    def broken(temp):
        (temp / "half.npy").write_bytes(b"x")
        raise FlairsuiteError("corpus.txt, line 3: not UTF-8")

    with pytest.raises(FlairsuiteError, match="line 3"):
        folder_built_once(folder, broken)
    assert not folder.exists() and [p.name for p in folder.parent.iterdir()] == ["de-1234.lock"]
    assert folder_built_once(folder, lambda temp: {"ok": True}) == {"ok": True}
