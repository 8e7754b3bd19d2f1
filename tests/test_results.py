"""The results collector on hand-made metrics.json files: tables, formats, schema errors, plot, CLI."""

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.container import BarContainer

from flairsuite.cli import cli
from flairsuite.results import collect, collect_per_type, comparison_figure, comparison_table, per_type_table, report

STURM_F1 = (0.7712, 0.7757, 0.7667)  # mean 77.12 %, sample std 0.45 points


def split_scores(f1: float) -> dict:
    """One split's scores: precision = f1 + 0.01, recall = f1 - 0.01 (within [0, 1]); per type pers = f1, place = f1 / 2."""
    types = {"pers": {"precision": f1, "recall": f1, "f1": f1, "support": 84}, "place": {"precision": f1, "recall": f1, "f1": f1 / 2, "support": 12}}
    return {"precision": min(1.0, f1 + 0.01), "recall": max(0.0, f1 - 0.01), "f1": f1, "per_type": types}


def metrics(corpus_label: str = "sturm", embeddings: str = "proposed", tagger: str = "bilstm-crf", seed: int = 1, f1: float = 0.5, **extra: Any) -> dict:
    """A valid metrics.json dict of experiment table3 with `split_scores(f1)` for dev and test."""
    fix = extra.get("entity_fix", False)
    return {
        "experiment": "table3",
        "run": f"{corpus_label}/{embeddings}/{tagger}/{'fix' if fix else 'plain'}/seed-{seed}",
        "corpus": corpus_label.split()[0],
        "corpus_options": {},
        "corpus_label": corpus_label,
        "subsample": None,
        "embeddings": embeddings,
        "embedding_specs": ["charlm:de-forward", "charlm:de-backward"],
        "tagger": tagger,
        "seed": seed,
        "entity_fix": False,
        "train": {"learning_rate": 0.1, "max_epochs": 20, "mini_batch_size": 32},
        "versions": {"flairsuite": "0.1.0", "flair": "0.15.1", "torch": "2.13.0"},
        "dev": split_scores(min(1.0, f1 + 0.05)),  # dev 5 points above test, so a table of the wrong split shows
        "test": split_scores(f1),
        "flair_f1": {"dev": f1, "test": f1},
        "epochs": 20,
        "seconds": 123.4,
        **extra,
    }


def write_run(root: Path, data: dict) -> Path:
    path = root / data["experiment"] / data["run"] / "metrics.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def table3(tmp_path: Path) -> Path:
    """results/table3: proposed on sturm (3 seeds) and ler (2 seeds, subsample), fasttext on sturm (1 seed)."""
    for seed, f1 in enumerate(STURM_F1, 1):
        write_run(tmp_path, metrics(seed=seed, f1=f1))
    for seed, f1 in enumerate((0.60, 0.62), 1):
        write_run(tmp_path, metrics("ler (coarse)", seed=seed, f1=f1, subsample="10% of train (seed 1)"))
    write_run(tmp_path, metrics(embeddings="fasttext", f1=0.7))
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def table_rows(text: str) -> dict[str, list[str]]:
    """Markdown table rows by their first two cells joined with ' / ' -> the remaining cells."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) > 2 and not cells[0].startswith("---"):
            rows[f"{cells[0]} / {cells[1]}"] = cells[2:]
    return rows


def test_cells_are_mean_std_n_in_percent_and_best_is_bold(table3):
    result = run("results", str(table3))
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    assert rows["embeddings / tagger"] == ["ler (coarse)†", "sturm"]
    assert rows["proposed / bilstm-crf"] == ["**61.00 ± 1.41 (2)**", "**77.12 ± 0.45 (3)**"]
    assert rows["fasttext / bilstm-crf"] == ["", "70.00 ± – (1)"]
    assert result.output.startswith("## table3: test F1 (%), mean ± std over seeds (n)\n")


def test_best_per_column_marks_ties_and_nothing_else(tmp_path):
    for embeddings in ("a", "b"):
        write_run(tmp_path, metrics(embeddings=embeddings, f1=0.8))
    write_run(tmp_path, metrics(embeddings="c", f1=0.79999))  # 80.00 as shown: a tie too
    write_run(tmp_path, metrics(embeddings="d", f1=0.7))
    rows = table_rows(run("results", str(tmp_path)).output)
    assert [rows[f"{e} / bilstm-crf"][0].startswith("**") for e in "abcd"] == [True, True, True, False]


def test_entity_fix_is_a_row_key_only_when_used(table3):
    assert "Entity-Fix" not in run("results", str(table3)).output
    write_run(table3, metrics(seed=1, f1=0.8, entity_fix=True))
    lines = run("results", str(table3)).output.splitlines()
    assert "| embeddings | tagger | Entity-Fix | ler (coarse)† | sturm |" in lines
    assert "| proposed | bilstm-crf | yes |  | **80.00 ± – (1)** |" in lines
    assert "| proposed | bilstm-crf | no | **61.00 ± 1.41 (2)** | 77.12 ± 0.45 (3) |" in lines


def test_subsample_is_footnoted(table3):
    output = run("results", str(table3)).output
    assert output.rstrip("\n").splitlines()[-1] == "† ler (coarse): 2 of 2 runs on a subsample: 10% of train (seed 1)"
    write_run(table3, metrics("ler (coarse)", seed=3, f1=0.7))
    output = run("results", str(table3)).output
    assert output.rstrip("\n").splitlines()[-1] == "† ler (coarse): 2 of 3 runs on a subsample: 10% of train (seed 1)"
    # a run's Entity-Fix variant re-decodes the same model: not one more run on the subsample
    write_run(table3, metrics("ler (coarse)", seed=1, f1=0.63, subsample="10% of train (seed 1)", entity_fix=True))
    output = run("results", str(table3)).output
    assert output.rstrip("\n").splitlines()[-1] == "† ler (coarse): 2 of 3 runs on a subsample: 10% of train (seed 1)"


def test_corpus_training_overrides_are_footnoted(table3):
    """A corpus trained under its own epoch cap says so under the table, beside its subsample."""
    write_run(table3, metrics("ler (coarse)", seed=3, f1=0.7, train_note="trained with max_epochs 10 on this corpus"))
    output = run("results", str(table3)).output
    assert output.rstrip("\n").splitlines()[-1] == (
        "† ler (coarse): 2 of 3 runs on a subsample: 10% of train (seed 1); trained with max_epochs 10 on this corpus"
    )


def test_a_taggers_overrides_are_footnoted_from_its_own_runs(table3):
    """A run's note speaks for its own tagger only: a linear run written before the BiLSTM got new settings does not
    put the BiLSTM's old settings beside its new ones."""
    old = "trained with max_epochs 30; bilstm-crf: max_epochs 10 on this corpus"
    new = "trained with max_epochs 30; bilstm-crf: max_epochs 10, precision bfloat16 on this corpus"
    write_run(table3, metrics("ler (coarse)", tagger="map-crf", seed=1, f1=0.8, train_note=old))
    write_run(table3, metrics("ler (coarse)", tagger="bilstm-crf", seed=3, f1=0.9, train_note=new))
    last = run("results", str(table3)).output.rstrip("\n").splitlines()[-1]
    assert last.endswith("; trained with max_epochs 30; bilstm-crf: max_epochs 10, precision bfloat16 on this corpus")
    # with no BiLSTM run on the corpus, its settings are not footnoted at all
    (table3 / "table3" / "ler (coarse)/proposed/bilstm-crf/plain/seed-3/metrics.json").unlink()
    last = run("results", str(table3)).output.rstrip("\n").splitlines()[-1]
    assert last.endswith("; trained with max_epochs 30 on this corpus")


def test_train_note_footnote_reads_the_format_experiments_write():
    """merged_train_note parses what CorpusChoice.train_note writes (the two live in different layers)."""
    from flairsuite.experiments.corpus_choice import CorpusChoice
    from flairsuite.results.tables import merged_train_note

    note = CorpusChoice("ler", {}, train={"max_epochs": 30}, tagger_train={"bilstm-crf": {"max_epochs": 10, "precision": "bfloat16"}}).train_note
    runs = pd.DataFrame({"tagger": ["map", "bilstm-crf"], "train_note": [note, note]})
    assert merged_train_note(runs) == note
    assert merged_train_note(runs[runs["tagger"] == "map"]) == "trained with max_epochs 30 on this corpus"


def test_runs_on_different_embedding_files_are_footnoted(tmp_path):
    """Runs of one table that read different bytes under one spec (vectors trained on another machine) say so, with counts."""
    old, new = "ab6fba" + "0" * 58, "e266ce" + "1" * 58
    for seed in (1, 2):
        write_run(tmp_path, metrics(seed=seed, artifact_digests={"fasttext:de": old, "charlm:de-forward": "c" * 64}))
    output = run("results", str(tmp_path)).output
    assert "†" not in output
    write_run(tmp_path, metrics(seed=3, artifact_digests={"fasttext:de": new, "charlm:de-forward": "c" * 64}))
    write_run(tmp_path, metrics(seed=4))  # recorded no digests: not counted
    lines = run("results", str(tmp_path)).output.rstrip("\n").splitlines()
    assert lines[-1] == "† fasttext:de: 2 files (SHA-256) across the runs: ab6fba… 2 runs, e266ce… 1 run"
    # a run's Entity-Fix variant re-decodes the same model: it is not a second run on the file
    fixed = metrics(seed=3, entity_fix=True, artifact_digests={"fasttext:de": new, "charlm:de-forward": "c" * 64})
    write_run(tmp_path, {**fixed, "run": fixed["run"].replace("/fix/", "/plain/") + "/entity-fix"})
    lines = run("results", str(tmp_path)).output.rstrip("\n").splitlines()
    assert lines[-1] == "† fasttext:de: 2 files (SHA-256) across the runs: ab6fba… 2 runs, e266ce… 1 run"
    # a run recorded under the vectors' former name (before a renaming) counts with the same stack member
    write_run(tmp_path, metrics(seed=5, artifact_digests={"fasttext:de-old": "c64877" + "2" * 58, "charlm:de-forward": "c" * 64}))
    lines = run("results", str(tmp_path)).output.rstrip("\n").splitlines()
    assert lines[-1] == "† fasttext:de: 3 files (SHA-256) across the runs: ab6fba… 2 runs, c64877… 1 run, e266ce… 1 run"
    assert not any("charlm" in line for line in lines if line.startswith("†"))


def test_artifacts_table_puts_each_stacks_lm_record_beside_the_scores(tmp_path):
    """--artifacts: per stack and member what its runs recorded of the training (characters, hours, perplexity, dim),
    the files they read, and how many runs (a run's Entity-Fix variant is the same run)."""
    def lm(chars: int, ppl: float) -> dict:
        return {"chars": chars, "hours": 1.005, "valid_ppl": ppl, "hidden_size": 512}

    short = {"charlm:de-1h-forward": lm(20_512_300, 4.1617), "fasttext:de100": {"dim": 100}}
    long = {"charlm:de-forward": lm(82_000_000, 3.5021), "fasttext:de100": {"dim": 100}}
    for seed in (1, 2):
        digests = {"charlm:de-1h-forward": "bbb337" + "0" * 58, "fasttext:de100": ("c64877" if seed == 1 else "ab6fba") + "1" * 58}
        write_run(tmp_path, metrics(embeddings="lm-1h", seed=seed, artifact_summaries=short, artifact_digests=digests))
    plain = metrics(embeddings="lm-4h", artifact_summaries=long, artifact_digests={"charlm:de-forward": "cc4c37" + "2" * 58})
    write_run(tmp_path, plain)
    write_run(tmp_path, {**plain, "run": plain["run"] + "/entity-fix", "entity_fix": True})
    write_run(tmp_path, metrics(embeddings="old", seed=3))  # from before the record: no row
    output = run("results", str(tmp_path), "--artifacts").output
    assert "table3: the embedding files of each stack" in output
    rows = table_rows(output.split("embedding files of each stack")[1])
    assert rows == {
        "stack / embedding": ["how it was trained (the runs' record)", "file SHA-256", "runs"],
        "lm-1h / charlm:de-1h-forward": ["20.5 M characters, 1.00 h, valid perplexity 4.162, hidden 512", "bbb337…", "2"],
        "lm-1h / fasttext:de100": ["dim 100", "c64877… / ab6fba…", "2"],
        "lm-4h / charlm:de-forward": ["82.0 M characters, 1.00 h, valid perplexity 3.502, hidden 512", "cc4c37…", "1"],
        "lm-4h / fasttext:de100": ["dim 100", "", "1"],
    }
    assert "embedding files" not in run("results", str(tmp_path)).output  # only when asked
    done = run("results", str(tmp_path), "--artifacts", "--format", "csv")
    assert "# " in done.stderr and "embedding files of each stack" in done.stderr  # titles go to stderr
    assert not any(line.startswith("#") for line in done.stdout.splitlines())
    assert '"20.5 M characters, 1.00 h, valid perplexity 4.162, hidden 512"' in done.stdout


def test_table3_layout_orders_stacks_and_taggers_as_the_paper_with_dev_and_paper_beside(tmp_path):
    for embeddings in ("classic", "zeta", "proposed+word", "proposed"):
        for tagger in ("map", "bilstm-crf", "map-crf"):
            for seed, f1 in ((1, 0.80), (2, 0.82)):
                write_run(tmp_path, metrics(embeddings=embeddings, tagger=tagger, seed=seed, f1=f1))
    fixed = metrics(embeddings="proposed", tagger="map", f1=0.9, entity_fix=True)
    write_run(tmp_path, {**fixed, "run": fixed["run"] + "/entity-fix"})  # the paper has no Entity-Fix: left out
    output = run("results", str(tmp_path), "--layout", "table3").output
    assert output.startswith("## table3: test F1 (%) in the layout of Akbik et al. 2018, Table 3, dev means beside")
    rows = table_rows(output)
    assert rows["embeddings / tagger"] == ["sturm†", "sturm dev", "paper NER-German (CoNLL-03)†"]
    stacks = ("proposed+word", "proposed", "classic", "zeta")
    assert list(rows)[1:] == [f"{s} / {t}" for s in stacks for t in ("bilstm-crf", "map-crf", "map")] + ["reference / "]
    assert rows["reference / "] == ["87.83 (best)", "", ""]  # the small-BERT paper's best on Sturm, under Sturm's column
    assert "† sturm: best published 87.83: Zöllner et al. 2021, Table 8" in output
    assert rows["proposed / map"] == ["**81.00 ± 1.41 (2)**", "86.00", "73.90 ± 0.09"]  # test, dev (5 points above), the paper's
    assert rows["classic / map-crf"][2] == "72.69 ± 0.12" and rows["zeta / bilstm-crf"][2] == ""
    assert output.rstrip().endswith("† paper NER-German (CoNLL-03): Akbik et al. 2018, Table 3: other data than this table's corpora, "
                                    "a reference line per row, not a target")
    typo = run("results", str(tmp_path), "--layout", "tabel3")
    assert typo.exit_code == 2 and "Error: Invalid value for '--layout': 'tabel3' is not one of 'plain', 'table3'" in typo.output


def typed_scores(counts: dict[str, tuple[int, int, int]]) -> dict:
    """A split's scores from per type (gold, predicted, correct) entity counts, as the suite's scorer records them."""
    def prf(gold: int, found: int, right: int) -> dict:
        p, r = (right / found if found else 0.0), (right / gold if gold else 0.0)
        return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}

    per_type = {name: {**prf(*c), "support": c[0], "predicted": c[1]} for name, c in counts.items()}
    return {**prf(*(sum(c[i] for c in counts.values()) for i in range(3))), "per_type": per_type}


def test_table3_scores_anchored_corpora_by_their_anchors_measure(tmp_path):
    # CLUENER's anchor is a macro F1 (the mean over its types), the Danish one leaves MISC out: their tables add a column
    # of ours measured so, and the anchor stands in that column of the reference row
    danish = {"PER": (10, 10, 9), "LOC": (10, 5, 5), "ORG": (5, 10, 3), "MISC": (20, 20, 2)}
    cluener = {"name": (10, 10, 9), "game": (10, 5, 5), "book": (5, 10, 3)}
    for seed in (1, 2):
        write_run(tmp_path, metrics("danish-ner", seed=seed, dev=typed_scores(danish), test=typed_scores(danish)))
        write_run(tmp_path, metrics("cluener", seed=seed, dev=typed_scores(cluener), test=typed_scores(cluener)))
    output = run("results", str(tmp_path), "--layout", "table3").output
    rows = table_rows(output)
    assert rows["embeddings / tagger"] == ["cluener†", "cluener dev", "cluener macro F1", "danish-ner†", "danish-ner dev", "danish-ner F1 PER/LOC/ORG"]
    micro_all = 2 * 19 / (45 + 45)  # every type: 19 right of 45 gold and 45 found
    without_misc = 2 * 17 / (25 + 25)  # PER/LOC/ORG: 17 right of 25 gold and 25 found
    macro = (0.9 + 2 * 1 * 0.5 / 1.5 + 2 * 0.3 * 0.6 / 0.9) / 3
    cluener_micro = 2 * 17 / (25 + 25)
    assert rows["proposed / bilstm-crf"] == [f"**{100 * cluener_micro:.2f} ± 0.00 (2)**", f"{100 * cluener_micro:.2f}", f"**{100 * macro:.2f} ± 0.00 (2)**",
                                             f"**{100 * micro_all:.2f} ± 0.00 (2)**", f"{100 * micro_all:.2f}", f"**{100 * without_misc:.2f} ± 0.00 (2)**"]
    assert rows["reference / "] == ["", "", "70.00 (anchor)", "", "", "81.78 (anchor)"]
    assert "† danish-ner: anchor 81.78, F1 PER/LOC/ORG (ours so: column 'danish-ner F1 PER/LOC/ORG'): Flair on DaNE" in output

    # beside fine-tuned runs of another corpus (a row level more), and a second label of the same corpus
    write_run(tmp_path, metrics("sturm", embeddings="bert", fine_tune=True))
    small = {"PER": (10, 10, 5), "LOC": (10, 10, 5), "MISC": (4, 4, 4)}
    write_run(tmp_path, metrics("danish-ner (5k)", dev=typed_scores(small), test=typed_scores(small)))
    rows = table_rows(run("results", str(tmp_path), "--layout", "table3").output)
    header = rows["embeddings / fine-tuned"]
    assert header[header.index("danish-ner†") + 2] == "danish-ner F1 PER/LOC/ORG"
    assert header[header.index("danish-ner (5k)†") + 2] == "danish-ner (5k) F1 PER/LOC/ORG"
    cells = dict(zip(header, rows["proposed / no"]))
    assert cells["cluener macro F1"] == f"**{100 * macro:.2f} ± 0.00 (2)**" and cells["danish-ner (5k) F1 PER/LOC/ORG"] == "**50.00 ± – (1)**"


def test_an_anchor_measure_that_no_run_allows_falls_back_to_the_corpus_column(tmp_path):
    old = {"PER": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 3}}  # a run from before `predicted`: its found count is unknown
    write_run(tmp_path, metrics("danish-ner", dev={"precision": 0.0, "recall": 0.0, "f1": 0.0, "per_type": old},
                                test={"precision": 0.0, "recall": 0.0, "f1": 0.0, "per_type": old}))
    output = run("results", str(tmp_path), "--layout", "table3").output
    rows = table_rows(output)
    assert rows["embeddings / tagger"] == ["danish-ner†", "danish-ner dev"] and rows["reference / "] == ["81.78 (anchor)", ""]
    assert "† danish-ner: anchor 81.78, F1 PER/LOC/ORG: Flair on DaNE" in output  # no column named that is not there


def test_no_footnote_without_subsample(tmp_path):
    write_run(tmp_path, metrics())
    assert "†" not in run("results", str(tmp_path)).output


def test_per_type_table_per_corpus(table3):
    output = run("results", str(table3), "--per-type").output
    sturm = output.split("## table3: sturm, test F1 per entity type (%), mean over seeds")[1]
    rows = table_rows(sturm)
    assert rows["embeddings / tagger"] == ["pers", "place"]
    assert rows["proposed / bilstm-crf"] == ["**77.12**", "**38.56**"]
    assert rows["fasttext / bilstm-crf"] == ["70.00", "35.00"]
    assert "## table3: ler (coarse), test F1 per entity type (%), mean over seeds" in output


def test_csv_cells_are_numbers_with_mean_std_n_columns_and_footnote(table3):
    done = run("results", str(table3), "--format", "csv")
    output = done.stdout
    assert not any(line.startswith("#") for line in output.splitlines())  # a plain CSV: read_csv needs no comment=
    frame = pd.read_csv(io.StringIO(output.split("\n\n")[0]))
    stats = ["mean", "std", "n"]
    assert list(frame.columns) == ["embeddings", "tagger", *(f"ler (coarse)† {s}" for s in stats), *(f"sturm {s}" for s in stats)]
    assert all(pd.api.types.is_numeric_dtype(frame[column]) for column in frame.columns[2:])
    proposed = frame[frame["embeddings"] == "proposed"].iloc[0]
    assert (proposed["sturm mean"], proposed["sturm std"], proposed["sturm n"]) == (pytest.approx(77.12), pytest.approx(0.45, abs=0.005), 3)
    fasttext = frame[frame["embeddings"] == "fasttext"].iloc[0]
    assert fasttext["sturm n"] == 1 and pd.isna(fasttext["sturm std"]) and pd.isna(fasttext["ler (coarse)† mean"])
    assert "# † ler (coarse): 2 of 2 runs on a subsample: 10% of train (seed 1)" in done.stderr.splitlines()


def test_latex_cells_bold_pm_and_escaped_footnote(table3):
    output = run("results", str(table3), "--format", "latex").output
    assert r"\begin{tabular}{llrr}" in output
    assert r"proposed & bilstm-crf & \textbf{61.00 $\pm$ 1.41 (2)} & \textbf{77.12 $\pm$ 0.45 (3)} \\" in output
    assert r"fasttext & bilstm-crf &  & 70.00 $\pm$ -- (1) \\" in output
    assert r"ler (coarse)\textsuperscript{\dag}" in output
    assert r"10\% of train (seed 1)" in output


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m["test"].pop("f1"), "missing key 'test.f1'"),
        (lambda m: m.pop("entity_fix"), "missing key 'entity_fix'"),
        (lambda m: m.update(seed="one"), 'seed must be an integer (found "one")'),
        (lambda m: m["test"]["per_type"]["pers"].update(f1=84.0), "test.per_type.pers.f1 must be a fraction in [0, 1] (found 84.0)"),
        (lambda m: m["dev"]["per_type"]["pers"].update(predicted=2.5), "dev.per_type.pers.predicted must be an integer (found 2.5)"),
        (lambda m: m.update(subsample=3), "subsample must be a string or null (found 3)"),
    ],
)
def test_malformed_metrics_is_one_error_line_with_file_and_key(tmp_path, change, message):
    data = metrics()
    change(data)
    path = write_run(tmp_path, data)
    result = run("results", str(tmp_path))
    assert result.exit_code == 1
    assert result.output == f"Error: {path}: {message}\n"


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "x" / "r" / "metrics.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"experiment": "x",\n oops}\n')
    assert run("results", str(tmp_path)).output.startswith(f"Error: {path}:2: not valid JSON: ")


def test_a_number_python_cannot_convert_is_one_error_line(tmp_path):
    path = tmp_path / "x" / "r" / "metrics.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"experiment": ' + "9" * 5000 + "}\n")
    result = run("results", str(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: not valid JSON: Exceeds the limit") and result.output.count("\n") == 1


def test_a_plot_path_that_is_a_folder_is_one_error_line(tmp_path):
    write_run(tmp_path / "runs", metrics())
    (tmp_path / "plot").mkdir()
    result = run("results", str(tmp_path / "runs"), f"--plot={tmp_path / 'plot'}")
    assert result.exit_code == 1 and not isinstance(result.exception, OSError)
    assert result.output.splitlines()[-1] == f"Error: cannot write {tmp_path / 'plot'}: Is a directory"
    assert list((tmp_path).glob(".plot*")) == []


def test_empty_or_missing_folder_and_unknown_experiment_are_errors(tmp_path, table3):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("results", str(empty)).output.startswith(f"Error: {empty}: no metrics.json found below it")
    assert run("results", str(tmp_path / "nowhere")).output.startswith(f"Error: {tmp_path / 'nowhere'}: no such folder")
    assert run("results", str(table3), "--experiment", "tabel3").output == "Error: no runs of experiment 'tabel3' (found: table3)\n"


def test_duplicate_run_is_an_error(table3):
    first = table3 / "table3" / "sturm/proposed/bilstm-crf/plain/seed-1" / "metrics.json"
    copy = table3 / "table3" / "copy" / "metrics.json"
    copy.parent.mkdir()
    copy.write_text(first.read_text())
    assert run("results", str(table3)).output.startswith(f"Error: {copy} and {first} both hold run")


def test_unknown_format_is_a_choice_error(table3):
    result = run("results", str(table3), "--format", "html")
    assert result.exit_code == 2
    assert "Invalid value for '--format'" in result.output


def test_one_table_per_experiment_and_filter_and_default_folder(table3, monkeypatch):
    write_run(table3, metrics(f1=0.5, experiment="other"))
    monkeypatch.setenv("FLAIRSUITE_HOME", str(table3.parent))
    (table3.parent / "results").symlink_to(table3)
    output = run("results").output
    assert [line for line in output.splitlines() if line.startswith("## ")] == [
        "## other: test F1 (%), mean ± std over seeds (n)",
        "## table3: test F1 (%), mean ± std over seeds (n)",
    ]
    assert "## other" not in run("results", "--experiment", "table3").output
    assert "## table3" not in run("results", str(table3 / "other")).output


def test_plot_writes_png_with_one_bar_per_row_and_corpus(table3):
    result = run("results", str(table3), "--plot")
    assert result.exit_code == 0, result.output
    png = table3 / "comparison.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = table3 / "charts" / "t3.png"
    run("results", str(table3), f"--plot={target}", "--metric", "precision")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axis = comparison_figure(collect(table3)).axes[0]
    bars = [bar for container in axis.containers if isinstance(container, BarContainer) for bar in container]
    assert len(bars) == 2 * 2  # 2 stack × tagger rows, 2 corpora (a missing cell is an empty bar)
    assert [t.get_text() for t in axis.get_xticklabels()] == ["ler (coarse)", "sturm"]


def test_dataframe_api(table3):
    runs = collect(table3)
    assert len(runs) == 6
    assert {"experiment", "run", "corpus_label", "embeddings", "tagger", "seed", "entity_fix", "subsample", "test_f1",
            "test_precision", "test_recall", "dev_f1", "flair_test_f1", "epochs", "seconds"} <= set(runs.columns)
    assert sorted(runs.loc[runs["corpus_label"] == "sturm", "test_f1"]) == [0.7, *sorted(STURM_F1)]
    cell = comparison_table(runs, metric="f1", split="test").loc[("proposed", "bilstm-crf"), "sturm"]
    assert cell["mean"] == pytest.approx(77.12) and cell["std"] == pytest.approx(0.45) and cell["n"] == 3
    table = comparison_table(runs, metric="f1", split="dev")
    cell = table.loc[("proposed", "bilstm-crf"), "sturm"]
    assert cell["mean"] == pytest.approx(82.12) and cell["std"] == pytest.approx(0.45) and cell["n"] == 3
    precision, recall = (comparison_table(runs, metric=m).loc[("proposed", "bilstm-crf"), ("sturm", "mean")] for m in ("precision", "recall"))
    assert (precision, recall) == (pytest.approx(78.12), pytest.approx(76.12))
    assert pd.isna(table.loc[("fasttext", "bilstm-crf"), ("ler (coarse)", "mean")])
    types = collect_per_type(table3)
    assert per_type_table(types, "sturm").loc[("proposed", "bilstm-crf"), "place"] == pytest.approx(38.56)
    assert report(runs, types, fmt="csv").startswith("embeddings,tagger,")


def test_help_shows_an_example():
    output = run("results", "--help").output
    assert "Usage: cli results [OPTIONS] [DIR]" in output
    assert "flairsuite results results/sturm-table3 --per-type" in output


def test_table8_puts_a_supplied_germeval_first_with_the_papers_values(tmp_path):
    """GermEval (user-supplied train) is the paper's first column; its runs join Table 8 with the paper's values beside."""
    for seed, f1 in enumerate(STURM_F1, start=1):
        write_run(tmp_path, metrics(tagger="map", seed=seed, f1=f1))
        write_run(tmp_path, metrics("germeval14", tagger="map", seed=seed, f1=f1 + 0.02))
    output = run("results", str(tmp_path), "--layout", "table8").output
    header = next(line for line in output.splitlines() if line.startswith("| embeddings"))
    assert header.index("GermEval") < header.index("Sturm")
    # the runs' means (GermEval, Sturm), their average, the paper's DFT values (GermEval 80.86, Sturm 85.55) and average
    assert "| proposed | map | **79.12 ± 0.45 (3)** | **77.12 ± 0.45 (3)** | 78.12 | 80.86 | 85.55 | 83.20 |" in output


def test_table8_leaves_out_a_users_own_corpus(tmp_path):
    """An experiment that also tagged a corpus of the user's own (unknown to the registry) still gets its Table 8."""
    for seed, f1 in enumerate(STURM_F1, start=1):
        write_run(tmp_path, metrics(tagger="map", seed=seed, f1=f1))
        write_run(tmp_path, {**metrics("my letters", tagger="map", seed=seed, f1=0.6), "corpus": "my-letters"})
    output = run("results", str(tmp_path), "--layout", "table8").output
    assert "my letters" not in output
    assert "| proposed | map | **77.12 ± 0.45 (3)** | 77.12 | 85.55 | 85.55 |" in output


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--layout", "table8", "--split", "dev"],
         "Error: --layout table8 always prints each corpus's main score on test, so --split dev would change nothing; "),
        (["--layout", "table3", "--metric", "precision"],
         "Error: --layout table3 always prints each corpus's main score on test, dev beside, so --metric precision"),
        (["--layout", "table6", "--per-type"], "Error: --per-type goes with the plain table, not --layout table6: "),
    ],
)
def test_a_paper_layout_rejects_the_options_it_would_ignore(table3, extra, message):
    """--layout table8 with --split dev used to print the test table without a word; now one error line, and no table."""
    result = run("results", str(table3), *extra)
    assert result.exit_code == 1 and result.output.startswith(message) and result.output.count("\n") == 1


def test_split_beside_a_paper_layout_still_chooses_what_the_plot_draws(table3):
    """--plot draws the chosen split, so --layout table8 --split dev --plot is accepted: the test table printed, the PNG written."""
    result = run("results", str(table3), "--layout", "table8", "--split", "dev", "--plot")
    assert result.exit_code == 0 and (table3 / "comparison.png").stat().st_size > 0
    assert "test E-F1 (%) in the layout of Zöllner et al. 2021, Table 8" in result.output
