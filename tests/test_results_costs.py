"""What runs cost (`flairsuite results --cost`): wall time, CPU time (wall x threads) and peak memory per run."""

from test_results import metrics, run, table_rows, write_run


def test_cells_hold_mean_wall_and_cpu_time_and_the_largest_peaks_and_skip_entity_fix_variants(tmp_path):
    for seed, seconds, rss, anon in ((1, 1800.0, 1000, 700), (2, 2400.0, 1200, 650)):
        write_run(tmp_path, metrics(seed=seed, seconds=seconds, threads=2, memory={"peak_rss_mb": rss, "peak_rss_anon_mb": anon}))
        # the Entity-Fix variant of the same training: not a second run
        fixed = metrics(seed=seed, seconds=99999.0, threads=2, entity_fix=True, memory={"peak_rss_mb": 9999, "peak_rss_anon_mb": 9999})
        write_run(tmp_path, {**fixed, "run": fixed["run"] + "/entity-fix"})
    # before threads were recorded: wall time only; one of two runs without threads: no CPU time for the cell
    write_run(tmp_path, metrics(embeddings="fasttext", seconds=7200.0, memory={"peak_rss_mb": 3000, "peak_rss_anon_mb": 2000}))
    write_run(tmp_path, metrics("ler", seconds=30.0, threads=1))
    write_run(tmp_path, metrics("ler", seed=2, seconds=90.0))
    result = run("results", str(tmp_path), "--cost")
    assert result.exit_code == 0, result.output
    cost = result.output.split("## table3: wall time a run")[1]
    rows = table_rows(cost)
    assert rows["embeddings / tagger"] == ["ler", "sturm"]
    # sturm: (1800 + 2400) / 2 s = 35.0 min, x 2 threads = 70 CPU-min, 1.17 CPU-h; the largest RSS and RssAnon of the two seeds
    # ler: (30 + 90) / 2 s, one run without threads: no CPU time; the cheapest per corpus in bold
    assert rows["proposed / bilstm-crf"] == ["**1.0 min (2)**", "**35.0 min · 1.17 CPU-h · 1,200 / 700 MB (2)**"]
    assert rows["fasttext / bilstm-crf"] == ["", "2.00 h · 3,000 / 2,000 MB (1)"]


def test_older_runs_without_memory_or_threads_still_print(tmp_path):
    write_run(tmp_path, metrics(seconds=600.0))
    result = run("results", str(tmp_path), "--cost")
    assert result.exit_code == 0, result.output
    assert table_rows(result.output.split("## table3: wall time a run")[1])["proposed / bilstm-crf"] == ["**10.0 min (1)**"]
