"""The difference of two means over seeds and its confidence interval (Welch's t: unequal variances,
Welch–Satterthwaite degrees of freedom), as the parity verdict and the ablation tables report it; and the paired
interval where both sides share their seeds run by run (self-training's rounds against round 0)."""

import math
from collections.abc import Sequence

from scipy import stats


def mean_and_variance(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the sample variance (ddof 1) of at least two values."""
    mean = sum(values) / len(values)
    return mean, sum((x - mean) ** 2 for x in values) / (len(values) - 1)


def interval(difference: float, variances: tuple[float, float], sizes: tuple[int, int], level: float = 0.90) -> tuple[float, float, float]:
    """`difference` and the two-sided `level` interval around it for samples of `sizes` with `variances`; no spread: no width."""
    (var_a, var_b), (na, nb) = variances, sizes
    se2 = var_a / na + var_b / nb
    if se2 == 0:
        return difference, difference, difference
    df = se2**2 / ((var_a / na) ** 2 / (na - 1) + (var_b / nb) ** 2 / (nb - 1))
    half = stats.t.ppf(0.5 + level / 2, df) * math.sqrt(se2)
    return difference, difference - half, difference + half


def welch_interval(a: Sequence[float], b: Sequence[float], level: float = 0.90) -> tuple[float, float, float]:
    """mean(a) − mean(b) and its two-sided `level` confidence interval (Welch); each side needs two values or more."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("a Welch interval needs two values or more a side")
    (mean_a, var_a), (mean_b, var_b) = mean_and_variance(a), mean_and_variance(b)
    return interval(mean_a - mean_b, (var_a, var_b), (len(a), len(b)), level)


def paired_interval(a: Sequence[float], b: Sequence[float], level: float = 0.90) -> tuple[float, float, float]:
    """The mean of a[i] − b[i] over matched pairs and its two-sided `level` interval (Student's t, n − 1 degrees of
    freedom); two pairs or more."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError("a paired interval needs two matched pairs or more")
    mean, variance = mean_and_variance([x - y for x, y in zip(a, b)])
    half = stats.t.ppf(0.5 + level / 2, len(a) - 1) * math.sqrt(variance / len(a))
    return mean, mean - half, mean + half
