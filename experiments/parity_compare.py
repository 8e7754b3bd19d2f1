"""Parity verdict: the suite's runs against the same runs trained by plain Flair (`parity_flair.py`).

    python experiments/parity_compare.py results/parity-de results/parity-de-flair [--margin 1.0] [--split test]

Per corpus, embedding stack and tagger: test F1 (strict IOB2, %) mean ± std (n) on each side, the
difference of the means (suite − Flair) and its 90 % confidence interval (Welch's t, unequal
variances, Welch–Satterthwaite degrees of freedom). The suite passes where the interval's lower
end lies above −margin points; the last column says how many seeds a side would make it pass if
the means and stds stayed as measured. Prints a Markdown table.
"""

import argparse
import math
import sys
from pathlib import Path
from typing import Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.results.collect import collect
from flairsuite.results.welch import interval, mean_and_variance, welch_interval

KEYS = ["corpus_label", "embeddings", "tagger"]


def projected_lower(a: list[float], b: list[float], n: int, level: float = 0.90) -> float:
    """The lower end of the Welch interval if both sides had `n` seeds with the means and variances measured now."""
    (mean_a, var_a), (mean_b, var_b) = mean_and_variance(a), mean_and_variance(b)
    return interval(mean_a - mean_b, (var_a, var_b), (n, n), level)[1]


def seeds_needed(a: list[float], b: list[float], margin: float, limit: int = 100) -> Optional[int]:
    """The fewest seeds a side for which `projected_lower` clears −`margin`; None if not within `limit` (the means differ by more)."""
    return next((n for n in range(2, limit + 1) if projected_lower(a, b, n) > -margin), None)


def cell(values: list[float]) -> str:
    mean = sum(values) / len(values)
    std = math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1)) if len(values) > 1 else float("nan")
    return f"{mean:.2f} ± {std:.2f} ({len(values)})"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path, help="results folder of `flairsuite tag`")
    parser.add_argument("flair", type=Path, help="results folder of parity_flair.py")
    parser.add_argument("--margin", type=float, default=1.0, help="points the suite may trail Flair by (lower CI end)")
    parser.add_argument("--split", choices=["test", "dev"], default="test")
    args = parser.parse_args(argv)
    try:
        suite, flair = collect(args.suite), collect(args.flair)
    except FlairsuiteError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    suite = suite[~suite["entity_fix"]]
    column = f"{args.split}_f1"
    print(f"| corpus | embeddings | tagger | suite {args.split} F1 | Flair {args.split} F1 | suite − Flair | 90 % CI | "
          f"lower end > −{args.margin:g} | seeds a side to pass at these means and stds |")
    print("| --- | --- | --- | --: | --: | --: | --- | --- | --: |")
    for key, ours in suite.groupby(KEYS):
        theirs = flair[(flair[KEYS] == list(key)).all(axis=1)]
        a, b = (ours[column] * 100).tolist(), (theirs[column] * 100).tolist()
        if len(a) < 2 or len(b) < 2:
            print(f"| {' | '.join(map(str, key))} | {cell(a)} | {cell(b) if b else '–'} | | | needs ≥ 2 seeds a side | |")
            continue
        diff, low, high = welch_interval(a, b)
        verdict = "pass" if low > -args.margin else "FAIL"
        needed = seeds_needed(a, b, args.margin)
        print(f"| {' | '.join(map(str, key))} | {cell(a)} | {cell(b)} | {diff:+.2f} | [{low:+.2f}, {high:+.2f}] | {verdict} | "
              f"{needed if needed is not None else '> 100'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
