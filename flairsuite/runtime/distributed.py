"""The ranks of a data-parallel run under `torchrun`, and the few collective operations the trainers need.

`torchrun --nproc_per_node N -m flairsuite train-charlm ...` starts N processes with RANK,
WORLD_SIZE and LOCAL_RANK in their environment; `ranks_from_environment()` joins them in one
process group (NCCL when every rank has its own GPU, gloo otherwise) and returns this process's
`Ranks`. Without torchrun it returns the single rank of an ordinary run and touches nothing, so
the single-process path makes no distributed call at all.

Every collective here is a no-op for one rank: `agree` (rank 0's decision for everybody, e.g. a
decision taken by the clock), `broadcast_value`, `all_sum` and `gather` (objects to rank 0).
"""

import gc
import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Optional, TypeVar

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from flairsuite.errors import FlairsuiteError

T = TypeVar("T")


@dataclass(frozen=True)
class Ranks:
    """This process's place in a data-parallel run (rank 0 of 1 for an ordinary run)."""

    rank: int = 0
    world: int = 1
    device: Optional[torch.device] = None

    @property
    def main(self) -> bool:
        """Whether this is rank 0: the one that validates, writes checkpoints and models, shows progress."""
        return self.rank == 0

    @property
    def parallel(self) -> bool:
        return self.world > 1

    def share(self, count: int) -> tuple[int, int]:
        """(start, stop) of this rank's contiguous block of `count` items, the blocks as even as they can be."""
        base, extra = divmod(count, self.world)
        start = self.rank * base + min(self.rank, extra)
        return start, start + base + (self.rank < extra)

    def _tensor(self, values: list[float]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.float64, device=self.device if dist.get_backend() == "nccl" else "cpu")

    def agree(self, flag: bool) -> bool:
        """Rank 0's `flag` on every rank (decisions that must not differ between ranks, such as the clock's)."""
        return bool(self.broadcast_value(float(flag)))

    def broadcast_value(self, value: float) -> float:
        """Rank 0's `value` on every rank."""
        if not self.parallel:
            return value
        tensor = self._tensor([value])
        dist.broadcast(tensor, src=0)
        return float(tensor.item())

    def all_sum(self, *values: float) -> list[float]:
        """The sums of `values` over all ranks, on every rank."""
        if not self.parallel:
            return list(values)
        tensor = self._tensor(list(values))
        dist.all_reduce(tensor)
        return tensor.tolist()

    def gather(self, item: Any) -> Optional[list[Any]]:
        """Every rank's `item` (picklable), in rank order, on rank 0; None on the other ranks."""
        if not self.parallel:
            return [item]
        items: Optional[list[Any]] = [None] * self.world if self.main else None
        dist.gather_object(item, items, dst=0)
        return items

    def barrier(self) -> None:
        if self.parallel:
            dist.barrier()


def ranks_from_environment(timeout_minutes: float = 30) -> Ranks:
    """The ranks of a `torchrun` launch (the process group joined), or the single rank of an ordinary run.

    With GPUs, rank r uses cuda:LOCAL_RANK (one GPU per rank, NCCL); on CPU, or with fewer GPUs than
    ranks on the node, all ranks use the CPU and gloo. `timeout_minutes` bounds the wait for a rank
    that is busy alone (rank 0 validating while the others wait).
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Ranks()
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    per_node = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    gpus = torch.cuda.is_available() and torch.cuda.device_count() >= per_node
    if gpus:
        torch.cuda.set_device(local)
    device = torch.device(f"cuda:{local}") if gpus else torch.device("cpu")
    if not dist.is_initialized():
        try:
            dist.init_process_group("nccl" if gpus else "gloo", timeout=timedelta(minutes=timeout_minutes))
        except Exception as err:  # rendezvous failures come in many types
            raise FlairsuiteError(f"rank {rank} of {world}: cannot join the process group ({type(err).__name__}: {err})") from None
    return Ranks(rank, world, device)


def first_on_rank_zero(ranks: Ranks, make: Callable[[], T]) -> T:
    """`make()` on rank 0 first, then on the other ranks (which find its files ready: corpus preparation, caches)."""
    if ranks.main:
        made = make()
    ranks.barrier()
    if not ranks.main:
        made = make()
    return made


def leave(ranks: Ranks) -> None:
    """Leave the process group at the end of a run (nothing for one rank).

    Every `DistributedDataParallel` wrapper must be gone by then (a trainer drops its own first). A wrapper's reducer
    holds the process group; left as its last holder after `destroy_process_group`, it frees the gloo group when the
    wrapper dies, with the GIL held, while the group's worker threads may still need the GIL to drop the tensors of a
    finished collective: the rank then waits forever (torch issue #56297; seen as a hung `train-bert` under torchrun
    at the end of a finished run). So a wrapper still alive here is an error on every rank, not a hang on some.
    """
    if not (ranks.parallel and dist.is_initialized()):
        return
    gc.collect()  # wrappers in unreachable reference cycles go now, while the group still has its other holders
    if any(issubclass(type(thing), DistributedDataParallel) for thing in gc.get_objects()):
        raise RuntimeError("a DistributedDataParallel wrapper outlives the process group: drop it before leave()")
    dist.barrier()
    dist.destroy_process_group()
