"""A command line that starts at once: help, `results`, `corpora list/stats/check` and option errors import neither torch
nor Flair (nor transformers, gensim, matplotlib), so they answer in well under a second on a 2-core machine
(benchmarks/startup.py prints the times). Each check runs in a fresh interpreter, as a user's command does.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import write_file

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "flair", "transformers", "gensim", "matplotlib")
PROBE = """
import json, sys
from flairsuite.cli import cli
done = []
for args in json.loads(sys.argv[1]):
    try:
        cli.main(args, standalone_mode=False)
        code = 0
    except SystemExit as exit:
        code = exit.code
    except Exception as error:  # click's usage errors and the suite's own: what the user would see as one line
        code = type(error).__name__
    done.append([args, code, [name for name in %r if name in sys.modules]])
print(json.dumps(done))
""" % (HEAVY,)


def probe(*commands: list[str], cwd: Path) -> list:
    """Run the commands one after the other in one fresh interpreter; (args, exit, heavy modules loaded so far) each."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(commands))], capture_output=True, text=True, cwd=cwd,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def all_command_paths() -> list[list[str]]:
    from flairsuite.cli import cli

    paths = []
    for name, command in cli.commands.items():
        paths.append([name])
        paths.extend([name, sub] for sub in getattr(command, "commands", {}))
    return paths


def test_help_of_every_command_and_option_errors_import_no_heavy_library(tmp_path):
    commands = [["--help"], *([*path, "--help"] for path in all_command_paths()), ["corpora", "stats", "sturm", "--bogus"],
                ["tag", "--no-such-option"], ["predict", "--format", "nonsense", "m.pt", "x.txt"]]
    done = probe(*commands, cwd=tmp_path)
    assert len(done) == len(commands) > 20
    assert all(heavy == [] for _, _, heavy in done), [(args, heavy) for args, _, heavy in done if heavy]
    assert [code for args, code, _ in done if args[-1] == "--help"] == [0] * (len(commands) - 3)
    assert all(code not in (0, None) for _, code, _ in done[-3:])


def test_results_and_corpora_list_stats_check_import_no_heavy_library(tmp_path):
    shutil.copytree(REPO / "results" / "adapt-sturm", tmp_path / "results" / "adapt-sturm")
    corpus = tmp_path / "letters"
    for split in ("train", "dev", "test"):
        write_file(corpus / f"{split}.conll", "Anna B-PER\nschrieb O\naus O\nWien B-LOC\n. O\n")
    commands = [["results", str(tmp_path / "results" / "adapt-sturm")], ["corpora", "list"], ["corpora", "stats", str(corpus)],
                ["corpora", "check", str(corpus)]]
    done = probe(*commands, cwd=tmp_path)
    assert [code for _, code, _ in done] == [0, 0, 0, 0], done
    assert all(heavy == [] for _, _, heavy in done), done
