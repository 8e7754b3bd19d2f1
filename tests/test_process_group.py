"""`flairsuite.runtime.distributed.leave`: a run leaves its process group only once no data-parallel wrapper holds the group.

A wrapper's reducer left as the group's last holder frees the gloo group later with the GIL held, which can hang a
finished rank (the docstring of `leave` says how). The guard makes that mistake fail on every rank at once. One gloo
process stands in for a run of two ranks (`leave` acts only for a parallel run; its barrier needs only the group).
"""

import gc
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from flairsuite.runtime.distributed import Ranks, leave


@pytest.fixture
def group(tmp_path: Path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield Ranks(0, 2)
    if dist.is_initialized():
        dist.destroy_process_group()


def test_a_live_wrapper_is_an_error_and_the_group_stays(group: Ranks) -> None:
    wrapper = DistributedDataParallel(torch.nn.Linear(3, 2))
    wrapper(torch.ones(4, 3)).sum().backward()
    with pytest.raises(RuntimeError, match="DistributedDataParallel wrapper outlives the process group"):
        leave(group)
    assert dist.is_initialized()
    del wrapper
    leave(group)
    assert not dist.is_initialized()


def test_a_wrapper_only_a_reference_cycle_keeps_is_collected_first(group: Ranks) -> None:
    gc.disable()  # no automatic collection in between: only leave() can free the wrapper
    try:
        holder: dict = {"wrapper": DistributedDataParallel(torch.nn.Linear(3, 2))}
        holder["self"] = holder  # unreachable once dropped, but freed only by the cycle collector
        del holder
        leave(group)
    finally:
        gc.enable()
    assert not dist.is_initialized()


def test_one_rank_touches_nothing(group: Ranks) -> None:
    wrapper = DistributedDataParallel(torch.nn.Linear(3, 2))  # an ordinary run's leave() neither checks nor destroys
    leave(Ranks())
    assert dist.is_initialized() and wrapper.module.out_features == 2
