"""The user docs (README.md and docs/*.md) name only what a fresh clone has.

- Every page of docs/ is linked from README.md, and every relative link of these pages resolves.
- Every `flairsuite COMMAND` (and `flairsuite GROUP SUB`) they show exists in the command group,
  read from `flairsuite.cli` itself, so a new command needs no edit here.
- The README's two set-up commands come first, and the second is the test command `.ci/run` runs.
- No dated history: a date (`2026-11-27`) belongs in CHANGELOG.md, not in a page that describes the suite.
- README.md's command table (the table whose first header cell is "command") has one row per
  top-level command of the group, each exactly once.
- Paths. Only code is read (inline code and fenced blocks). A path there is a word that starts with
  `../` or with a top-level folder git tracks (`experiments/`, `results/`, `charlm/`, ...). Rule:
  1. `../...` is outside the clone: always an error (a user's datasets folder is `--corpora-dir` or
     `$FLAIRSUITE_CORPORA`, never a sibling folder of the clone).
  2. A placeholder component ends the path: `<run>`, `NAME`, `TAGGER`, `…`, `...`, `*`, `{a,b}`,
     `$VAR`; what comes before it is checked.
  3. The path exists in the clone; or it lies in an artifact folder of `flairsuite.files.paths`
     (`results/`, `charlm/`, `corpora/`, `wordvectors/`, ...) inside an entry the clone does not
     ship (no tracked file under `results/<name>/`): a run, a dataset, vectors that the user's own
     commands make. A missing file inside an entry the clone ships, such as the git-ignored
     weights of a committed experiment (`results/sturm-table3/.../model.pt`), is an error.
"""

import re
import subprocess
from collections import Counter
from pathlib import Path

import click
import pytest

from flairsuite.cli import cli
from flairsuite.files import paths

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]

FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
COMMAND = re.compile(r"(?<![\w./-])flairsuite ([a-z][a-z0-9-]*)(?: ([a-z][a-z0-9-]*))?")
# the artifact folders below $FLAIRSUITE_HOME, and the default datasets folder (`corpora/`)
ARTIFACTS = {folder(Path(".")).parts[0] for folder in (paths.charlm_dir, paths.wordvectors_dir, paths.bert_dir,
                                                       paths.lexicons_dir, paths.results_dir, paths.cache_dir)} | {"corpora"}
PLACEHOLDER = re.compile(r"[<>*…{}$]|\.\.\.|[A-Z]{2,}")


def tracked() -> list[str]:
    result = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return result.stdout.splitlines()


def code(text: str) -> list[str]:
    """The fenced blocks and the inline code spans of a Markdown page."""
    blocks = [match.group(2) for match in FENCE.finditer(text)]
    prose = FENCE.sub("", text)
    return blocks + INLINE.findall(prose)


def commands_named(text: str) -> set[tuple[str, ...]]:
    found = set()
    for snippet in code(text):
        for match in COMMAND.finditer(snippet):
            found.add(tuple(word for word in match.groups() if word))
    return found


def unknown_command(words: tuple[str, ...]) -> bool:
    command = cli.commands.get(words[0])
    if command is None:
        return True
    return isinstance(command, click.Group) and len(words) > 1 and words[1] not in command.commands


def path_problem(path: str, files: set[str], dirs: set[str]) -> str | None:
    """Why `path` (as written in a page) is not in a clone, or None (the rule of the module docstring)."""
    if path.startswith("../"):
        return "outside the clone"
    parts = []
    for part in path.rstrip("/").split("/"):
        if PLACEHOLDER.search(part) and "/".join([*parts, part]) not in files | dirs:
            break
        parts.append(part)
    name = "/".join(parts)
    if name in files or name in dirs or (ROOT / name).exists():
        return None
    if parts[0] in ARTIFACTS and len(parts) >= 2:
        entry = "/".join(parts[:2])
        if entry in dirs or entry in files:
            return f"{entry}/ is in the clone, but not {name}"
        if len(parts) > 2 or path.endswith("/"):
            return None  # inside a run, dataset or model folder the user's own command makes
    return "not in the clone"


def paths_named(text: str, tops: set[str]) -> list[str]:
    start = "|".join(re.escape(top) for top in sorted(tops))
    pattern = re.compile(rf"(?<![\w./$-])(?:\.\./|(?:{start})/)[^\s`'\"()\[\],;:|]*")
    return [match.group(0).rstrip(".") for snippet in code(text) for match in pattern.finditer(snippet)]


def tree(files: list[str]) -> tuple[set[str], set[str], set[str]]:
    dirs = {"/".join(name.split("/")[:i]) for name in files for i in range(1, name.count("/") + 1)}
    tops = {name.split("/")[0] for name in files if "/" in name}
    return set(files), dirs, tops


def test_every_docs_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {(ROOT / target.split("#")[0]).resolve() for target in LINK.findall(readme)}
    assert DOCS, "docs/ holds no page"
    assert [page.name for page in DOCS if page.resolve() not in linked] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_command_named_exists(page):
    named = commands_named(page.read_text(encoding="utf-8"))
    assert named, f"{page.name} names no flairsuite command"
    assert sorted(" ".join(words) for words in named if unknown_command(words)) == []


def test_the_readme_starts_with_the_set_up_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [match.group(2).strip() for match in FENCE.finditer(readme)]
    install, tests = blocks[:2]
    assert install.endswith("pip install -e . && flairsuite quickstart") and "\n" not in install
    assert tests.endswith("python -m pytest -q -n 2 --dist loadfile") and "\n" not in tests
    ci = re.sub(r"\\\n\s*", "", (ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert tests in ci


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_no_dated_history(page):
    assert re.findall(r"\b(?:19|20)\d\d-\d\d-\d\d\b", page.read_text(encoding="utf-8")) == []


def test_the_readme_command_table_lists_every_command_once():
    rows = []
    in_table = False
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells and cells[0] == "command":
            in_table = True
        elif in_table and cells is None:
            break
        elif in_table and not set(cells[0]) <= set("-: "):
            match = COMMAND.search(cells[0])
            assert match, f"command table row without a `flairsuite COMMAND`: {line}"
            rows.append(match.group(1))
    counts = Counter(rows)
    assert {name for name, n in counts.items() if n > 1} == set(), "listed twice"
    assert sorted(counts) == sorted(cli.commands)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_path_named_is_in_a_clone(page):
    files, dirs, tops = tree(tracked())
    named = paths_named(page.read_text(encoding="utf-8"), tops)
    assert sorted({f"{path}: {why}" for path in named if (why := path_problem(path, files, dirs))}) == []


def test_the_path_rule_catches_what_a_clone_lacks():
    files, dirs, tops = tree(tracked())
    text = ("export `FLAIRSUITE_CORPORA=../shared/corpora`, read `../shared/papers/small-bert-german-ner.txt`\n"
            "```bash\nflairsuite predict results/sturm-table3/sturm/proposed/bilstm-crf/seed-1/model.pt letter.txt\n```\n"
            "`experiments/sturm-tabel3.yaml`, `charlm/de-forward/checkpoint.pt`\n")
    problems = {path: path_problem(path, files, dirs) for path in paths_named(text, tops)}
    assert set(problems) == {"../shared/corpora", "../shared/papers/small-bert-german-ner.txt",
                             "results/sturm-table3/sturm/proposed/bilstm-crf/seed-1/model.pt",
                             "experiments/sturm-tabel3.yaml", "charlm/de-forward/checkpoint.pt"}
    assert all(problems.values()), problems
    fine = ("`results/quickstart/sturm/proposed+word/bilstm-crf/seed-1/model.pt`, `corpora/sturm/train_sturm.conll`, "
            "`results/<experiment>/<run>/metrics.json`, `charlm/NAME-DIRECTION/best-lm.pt`, `experiments/walkthrough/brief.txt`, "
            "`wordvectors/de-fasttext/vectors.kv`, `results/letters/`, `$FLAIRSUITE_HOME/results`")
    assert {path: why for path in paths_named(fine, tops) if (why := path_problem(path, files, dirs))} == {}


def test_the_command_check_catches_unknown_commands():
    named = commands_named("`flairsuite tag x.yaml`, `flairsuite corpora lsit`\n```\nflairsuite trian-charlm --lang de\n```")
    assert sorted(" ".join(words) for words in named if unknown_command(words)) == ["corpora lsit", "trian-charlm"]


def test_the_readme_experiment_for_own_letters_reads_as_written(tmp_path):
    """README step 3's letters.yaml, written beside an INCEpTION export (the walk-through's WebAnno TSV letters) and a
    folder of plain letters, is a valid experiment: the adapt: block reads the folder's text files, cuts the export's
    dev/test out of that text by its entry, and the stack names the adapted pair it makes."""
    import shutil

    from flairsuite.experiments.reading import load_experiment
    from flairsuite.rawtext.exclusion import own_entry

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(body for _, body in FENCE.findall(text) if body.startswith("# letters.yaml"))
    shutil.copytree(ROOT / "experiments" / "walkthrough" / "annotations" / "inception", tmp_path / "data" / "letters")
    plain = tmp_path / "data" / "plain" / "brief-1.txt"
    plain.parent.mkdir()
    plain.write_text("Lieber Herwarth, ich komme am Montag nach Berlin.\n", encoding="utf-8")
    (tmp_path / "letters.yaml").write_text(block, encoding="utf-8")
    config = load_experiment(tmp_path / "letters.yaml")
    adaptation = config.adaptation
    assert adaptation.texts == (plain.resolve(),)
    assert [own_entry(e)["format"] for e in adaptation.exclude] == ["webanno"]
    assert set(adaptation.specs()) <= {spec for stack in config.embeddings.values() for spec in stack}


WALKTHROUGH = "experiments/walkthrough/annotations"
TABLE_HEAD = "file sentences tokens entities repairs"


@pytest.mark.parametrize("export, input_format", [("inception", "webanno"), ("doccano", "jsonl")])
def test_the_walkthrough_counts_in_the_docs_are_what_corpora_stats_prints(export, input_format):
    """The split table of `corpora stats` on each shipped export, as docs/own-data.md shows it, and the walk-through's
    README row (sentences / tokens / entities per split) are what the installed command prints now."""
    result = subprocess.run(["flairsuite", "corpora", "stats", f"{WALKTHROUGH}/{export}/", "--input-format", input_format],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.strip() == TABLE_HEAD)
    printed = [" ".join(line.split()) for line in lines[head + 1 : head + 4]]
    page = (ROOT / "docs" / "own-data.md").read_text(encoding="utf-8")
    shown = [" ".join(block.split("\n")[i].split()) for block in page.split(f"{export}: own corpus in ")[1:2] for i in (3, 4, 5)]
    if export == "doccano":  # the page shows the doccano table without its first two lines
        block = page.split("and on the doccano export")[1]
        rows = block.split(TABLE_HEAD)[1].strip("\n").split("\n")[:3]
        shown = [" ".join(row.split()) for row in rows]
    assert shown == printed
    columns = [line.split()[-4:-1] for line in printed]  # sentences, tokens, entities of train, dev, test
    row = next(line for line in (ROOT / WALKTHROUGH / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith(f"| `{export}/`"))
    cells = [cell.strip() for cell in row.split("|")[-4:-1]]
    assert cells == [" / ".join(f"{int(n):,}" for n in column) for column in zip(*columns)]


def steps_benchmark():
    """benchmarks/readme_steps.py, loaded by path (benchmarks/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_steps", ROOT / "benchmarks" / "readme_steps.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_states_the_measured_cost_of_each_step():
    """The README's cost table and the quickstart's time and memory in the set-up line are what the benchmark measured
    (benchmarks/results/readme-steps.json), and the table names every step the benchmark runs."""
    import json

    steps = steps_benchmark()
    record = json.loads(steps.RESULTS.read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert steps.readme_block(record) in readme
    assert steps.quickstart_phrase(record) in readme.split("## A five-minute tour")[0]
    assert set(record["steps"]) == {key for key, _, _ in steps.STEPS}
    for _, _, args in steps.STEPS:  # each step is a command the group has
        assert args[0] in cli.commands
