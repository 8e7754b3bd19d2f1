"""How long the commands that need no model take to answer, now and at an earlier commit, side by side in one run.

    python benchmarks/startup.py                 # this checkout against the commit before the lazy imports (5cb629d)
    python benchmarks/startup.py --before HEAD~3 --repeat 5

Each command runs as a user runs it (`python -m flairsuite ...` in a fresh process, the earlier commit from a temporary
git worktree on PYTHONPATH), `--repeat` times; the table gives the median wall time and peak RSS of each and the ratio
before/now. Nothing here imports torch: the script itself starts as fast as the commands it times.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BEFORE = "5cb629d"  # the last commit whose commands imported flair, torch and transformers first


def commands(scratch: Path) -> dict[str, list[str]]:
    corpus = scratch / "letters"
    for split in ("train", "dev", "test"):
        corpus.mkdir(parents=True, exist_ok=True)
        (corpus / f"{split}.conll").write_text("Anna B-PER\nschrieb O\naus O\nWien B-LOC\n. O\n", encoding="utf-8")
    return {
        "flairsuite --help": ["--help"],
        "flairsuite tag --help": ["tag", "--help"],
        "flairsuite results results/adapt-sturm": ["results", str(REPO / "results" / "adapt-sturm")],
        "flairsuite corpora list": ["corpora", "list"],
        "flairsuite corpora stats letters/": ["corpora", "stats", str(corpus)],
        "flairsuite corpora check letters/": ["corpora", "check", str(corpus)],
        "flairsuite corpora stats --bogus (option error)": ["corpora", "stats", "--bogus"],
    }


def timed(args: list[str], code: Path, cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `python -m flairsuite ARGS` with the package from `code` (GNU time)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "flairsuite", *args], cwd=cwd, check=False,
                          env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, peak_kb = done.stderr.strip().splitlines()[-1].split()
    return float(wall), int(peak_kb) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"the commit to compare with [default: {BEFORE}]")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command [default: 3]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        old = scratch / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(old), args.before], check=True, capture_output=True)
        try:
            rows = []
            for label, command in commands(scratch).items():
                now = [timed(command, REPO, scratch) for _ in range(args.repeat)]
                then = [timed(command, old, scratch) for _ in range(args.repeat)]
                rows.append((label, statistics.median(t for t, _ in then), statistics.median(t for t, _ in now),
                             statistics.median(m for _, m in then), statistics.median(m for _, m in now)))
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)], check=False, capture_output=True)
            shutil.rmtree(old, ignore_errors=True)
    print(f"| command | before ({args.before}) | now | before / now | peak RSS before | now |")
    print("|---|--:|--:|--:|--:|--:|")
    for label, then, now, then_mb, now_mb in rows:
        print(f"| `{label}` | {then:.2f} s | {now:.2f} s | {then / now:.1f}x | {then_mb:.0f} MB | {now_mb:.0f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
