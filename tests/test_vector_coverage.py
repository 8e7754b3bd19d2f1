"""The coverage report of `flairsuite tag` (flairsuite/experiments/vector_coverage.py): for an own corpus, the share of
each split's tokens that the stack's fastText vectors lack, and what `@subwords` leaves without a vector, counted on tiny
gensim vectors and a tiny own corpus; compact vectors (no model/) say that @subwords cannot help; registered corpora
and stacks without fastText get no line."""

from pathlib import Path

import yaml
from conftest import write_file
from test_subword_vectors import write_vectors

from flairsuite.experiments.grid import runs
from flairsuite.experiments.reading import load_experiment, read_experiment
from flairsuite.experiments.runner import plan_experiment
from flairsuite.experiments.vector_coverage import coverage_line, coverage_lines, fasttext_uses

# "Königinnen" and "Hauſe" are in no vocabulary of write_vectors; "König" and "Stadt" are
TRAIN = "König\tB-pers\nKöniginnen\tO\nStadt\tB-loc\nHauſe\tO\n\nKönig\tB-pers\n"  # 2 of 5 tokens lack a vector
DEV = "Stadt\tB-loc\nKöniginnen\tO\n"  # 1 of 2
TEST = "König\tB-pers\nStadt\tO\n"  # 0 of 2


def experiment(tmp_path: Path, specs: list[str], corpora: list = None) -> Path:
    for split, text in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        write_file(tmp_path / "letters" / f"{split}.tsv", text)
    corpora = corpora or [{"name": "letters", "path": "letters", "format": "column", "sep": "tab"}]
    data = {"name": "cover", "corpora": corpora, "embeddings": {"s": specs}, "taggers": ["map"], "seeds": [1]}
    return write_file(tmp_path / "cover.yaml", yaml.safe_dump(data))


def lines_of(tmp_path: Path, home: Path, specs: list[str]) -> list[str]:
    return coverage_lines(runs(load_experiment(experiment(tmp_path, specs))), home, tmp_path)


def test_fasttext_uses_names_each_vectors_once_and_whether_a_stack_reads_them_with_subwords():
    specs = ["charlm:de-forward", "fasttext:de", "fasttext:old@subwords", "fasttext:de@subwords", "char"]
    assert fasttext_uses(specs) == {"de": True, "old": True}
    assert fasttext_uses(["fasttext:de"]) == {"de": False}


def test_own_corpus_shares_before_and_with_subwords(tmp_path):
    home = tmp_path / "home"
    write_vectors(home, sep_limit=0)
    [line] = lines_of(tmp_path, home, ["fasttext:de"])
    assert line == ("letters: fasttext:de has no vector for 40.0 % of the train tokens (dev 50.0 %, test 0.0 %); "
                    "fasttext:de@subwords would build them from subwords (none is left without one)")
    [line] = lines_of(tmp_path, home, ["fasttext:de@subwords"])
    assert line.startswith("letters: fasttext:de@subwords builds subword vectors for the 40.0 % of the train tokens (dev 50.0 %")


def test_compact_vectors_say_subwords_cannot_fill_them(tmp_path):
    home = tmp_path / "home"
    write_vectors(home, keep_model=False)
    [line] = lines_of(tmp_path, home, ["fasttext:de"])
    assert line.endswith("these vectors keep no model/, so @subwords cannot build them") and "40.0 %" in line


def test_full_coverage_and_stacks_without_vectors(tmp_path):
    home = tmp_path / "home"
    write_vectors(home)
    rates = {"train": {"oov_before": 0, "oov_before_rate": 0.0, "oov_after": 0, "oov_after_rate": 0.0}}
    assert coverage_line("letters", "de", False, rates) == "letters: fasttext:de has a vector for every token"
    assert lines_of(tmp_path, home, ["char"]) == []
    assert lines_of(tmp_path, tmp_path / "nothing", ["fasttext:de"]) == []  # not trained yet: the grid's own check says so


def test_tag_planning_reports_the_line(tmp_path):
    home = tmp_path / "home"
    write_vectors(home, sep_limit=0)
    said: list[str] = []
    plan_experiment(read_experiment(experiment(tmp_path, ["fasttext:de"])), home, echo=said.append, corpora_root=tmp_path)
    assert any(line.startswith("letters: fasttext:de has no vector for 40.0 % of the train tokens") for line in said)
