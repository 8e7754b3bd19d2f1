"""The left-to-right pass of a longest-match rule (Algorithm 1, the DaLUKE rule) over precomputed marks."""

import numpy as np


def greedy_picks(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which marks (sorted starts, the longest entry length at each) Algorithm 1's left-to-right pass takes.

    A mark that starts at or after the end of every earlier mark is always taken; only the marks
    inside the reach of an earlier one (a cluster behind its first, free mark) need the sequential pass.
    """
    ends = starts + lengths
    free = np.ones(len(starts), dtype=bool)
    if len(starts) > 1:
        free[1:] = starts[1:] >= np.maximum.accumulate(ends)[:-1]
    taken = free.copy()
    crowded = np.flatnonzero(~free)
    if len(crowded):
        leaders = np.maximum.accumulate(np.where(free, np.arange(len(starts)), 0))[crowded]
        cluster, after = -1, 0
        for mark, start, end, leader in zip(crowded.tolist(), starts[crowded].tolist(), ends[crowded].tolist(), leaders.tolist()):
            if leader != cluster:
                cluster, after = leader, int(ends[leader])
            if start >= after:
                taken[mark] = True
                after = end
    return taken
