"""`flairsuite results --layout table6 / table9`: fine-tuned BERT runs grouped by what train-bert recorded of each BERT."""

from pathlib import Path

import pytest
from test_results import metrics, run, table_rows, write_run

BERTS = {
    "bert:abs": {"objective": "mlm", "wwm": False, "positions": "absolute", "attention": "full", "seq_len": 128, "tokens": 3_000_000,
                 "hours": 1.0, "device": "cpu", "threads": 1, "valid_accuracy": 0.12, "precision": "bfloat16"},
    "bert:relwwm": {"objective": "mlm", "wwm": True, "positions": "relative", "attention": "full", "seq_len": 128, "tokens": 2_500_000,
                    "hours": 1.0, "device": "cpu", "threads": 1, "valid_accuracy": 0.15},
    "bert:wwa": {"objective": "mlm", "wwm": True, "positions": "relative", "attention": "wwa", "seq_len": 128, "tokens": 1_700_000,
                 "hours": 1.0, "device": "cpu", "threads": 1, "valid_accuracy": 0.14},
}
CORPORA = {"sturm": ("sturm", {}), "arendt": ("arendt", {}), "ler (coarse)": ("ler", {"granularity": "coarse"})}


def bert_run(root: Path, bert: str, tagger: str, corpus: str, seed: int, f1: float, fix: bool = False, fine_tune: bool = True) -> None:
    name, options = CORPORA[corpus]
    threads = {"threads": 2} if bert == "bert:abs" else {}  # runs since 2026-11-27 record their torch threads
    train = {"optimizer": "adamw", "learning_rate": 5e-5, "mini_batch_size": 16, "max_epochs": 6, "epoch_samples": 5000} if fine_tune else {}
    data = metrics(corpus, embeddings=bert[5:], tagger=tagger, seed=seed, f1=f1, entity_fix=fix, fine_tune=fine_tune,
                   embedding_specs=[bert], artifact_summaries={bert: BERTS[bert]}, corpus=name, corpus_options=options, **threads,
                   **({"train": train} if fine_tune else {}))
    data["experiment"] = "berts"
    data["run"] = f"{corpus}/{bert[5:]}/{'ft/' if fine_tune else ''}{tagger}/{'fix/' if fix else ''}seed-{seed}"
    write_run(root, data)


@pytest.fixture
def berts(tmp_path: Path) -> Path:
    for seed in (1, 2):
        for corpus, base in (("sturm", 0.70), ("arendt", 0.60)):
            bert_run(tmp_path, "bert:abs", "map", corpus, seed, base + seed / 100)
            bert_run(tmp_path, "bert:relwwm", "map", corpus, seed, base + 0.05 + seed / 100)
            bert_run(tmp_path, "bert:relwwm", "map", corpus, seed, 0.99, fine_tune=False)  # frozen: not in Table 6
            bert_run(tmp_path, "bert:relwwm", "map", corpus, seed, 0.98, fix=True)  # Entity-Fix: not in Table 6
            for bert, extra in (("bert:relwwm", 0.0), ("bert:wwa", 0.02)):
                bert_run(tmp_path, bert, "lcrf-ner", corpus, seed, base + extra)
                bert_run(tmp_path, bert, "lcrf-ner", corpus, seed, base + extra + 0.03, fix=True)
    return tmp_path


def test_table6_rows_are_pretraining_variants_with_the_papers_row(berts: Path) -> None:
    result = run("results", str(berts), "--layout", "table6")
    assert result.exit_code == 0, result.output
    assert "Table 6" in result.output
    rows = table_rows(result.output)
    header = next(line for line in result.output.splitlines() if line.startswith("| pre-training"))
    columns = [c.strip() for c in header.strip("|").split("|")][3:]
    assert columns[:3] == ["H. Arendt", "Sturm", "Average"]
    absolute, relative = (dict(zip(columns, rows[key][1:])) for key in ("mlm / absolute", "mlm / relative"))
    assert rows["mlm / absolute"][0] == "-" and rows["mlm / relative"][0] == "WWM"
    assert absolute["Sturm"] == "71.50 ± 0.71 (2)" and absolute["H. Arendt"] == "61.50 ± 0.71 (2)"
    assert relative["Sturm"] == "76.50 ± 0.71 (2)" and relative["Average"] == "71.50"  # frozen and Entity-Fix runs left out
    assert relative["paper Sturm"] == "85.55" and relative["paper H. Arendt"] == "77.41" and relative["paper Average"] == "81.48"
    assert absolute["paper Sturm"] == "82.36"
    assert relative["pre-training tokens"] == "2.5 M" and relative["valid MLM acc. (%)"] == "15.0"
    assert relative["hours"] == "1.00 (cpu, 1 threads)" and relative["BERT"] == "bert:relwwm"  # no precision recorded: float32
    assert absolute["hours"] == "1.00 (cpu, 1 threads, bfloat16)"
    assert relative["fine-tuning h/run"] == "0.03"  # 123.4 s per run (the fixture's), which records no threads
    assert absolute["fine-tuning h/run"] == "0.03 (0.07 CPU-h)"  # 123.4 s x 2 threads
    # the fine-tuning length, a fifth of the paper's, is a footnote beside the paper's
    assert "† fine-tuning: 6 × 5,000 sentences (the paper: 30 × 5,000, LER 50 × 5,000 (Zöllner et al. 2021, §6.1))" in result.output.splitlines()


def test_table9_compares_attention_with_and_without_entity_fix(berts: Path) -> None:
    result = run("results", str(berts), "--layout", "table9")
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    full, wwa = rows["- / 128 tokens"], rows["WWA / 128 tokens"]
    # mean over seeds per task (sturm 0.70, arendt 0.60), then over tasks: 65.00; Entity-Fix adds 3
    assert full[:2] == ["65.00", "68.00"] and wwa[:2] == ["67.00", "70.00"]
    assert full[-2:] == ["86.51", "88.23"] and wwa[-2:] == ["86.76", "88.32"]  # the paper's rows of the same attention, at 320 tokens
    assert "† fine-tuning: 6 × 5,000 sentences" in result.output


def test_layouts_need_fine_tuned_bert_runs(tmp_path: Path) -> None:
    write_run(tmp_path, metrics())
    result = run("results", str(tmp_path), "--layout", "table6")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no fine-tuned map runs on one bert: embedding") and len(result.output.splitlines()) == 1
    assert run("results", str(tmp_path), "--layout", "table6", "--ablation-file", "a.yaml").output == (
        "Error: --layout ablation reads --ablation-file FILE: give both or neither\n"
    )
