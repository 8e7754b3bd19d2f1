"""`flairsuite tag` end to end on a tiny grid: tiny forward/backward character LMs, a fake 24-sentence Sturm.

Covers: the run folders and their files, the printed table and the collector; re-scoring of the
raw predictions (with and without Entity-Fix); reloading the models in plain Flair (a process that
never imports flairsuite) with the very tags the suite decoded; resume (finished runs skipped, a
killed run continues from its epoch checkpoint to the weights of an uninterrupted run); the
embedding cache reused by a second grid; a changed config, --force; one-line errors on bad input.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import flair
import pytest
import torch
from click.testing import CliRunner
from conftest import train_tiny_embeddings, write_file
from flair.data import Sentence
from seqeval.metrics import f1_score, precision_score, recall_score
from seqeval.scheme import IOB2

from flairsuite.cli import cli
from flairsuite.corpora.tags import bio_spans
from flairsuite.embeddings import stack
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments import load_experiment, runs
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.run_data import embedding_modules, tag_dictionary
from flairsuite.experiments.runner import select
from flairsuite.files.locks import claimed
from flairsuite.models.cse import ClassStartEndTagger
from flairsuite.models.entity_fix import entity_fix
from flairsuite.models.registry import build_tagger, default_train
from flairsuite.results.collect import collect, read_run
from flairsuite.results.lengths import length_counts
from flairsuite.tagging import tagger_training as train_module
from flairsuite.tagging.cache import cached_vectors
from flairsuite.tagging.data import load_labeled
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.tagger_training import train_tagger

# Tokens separated by spaces; `word/TAG` carries a BIO tag, a bare word is O. Types of Sturm: pers, place, date.
TRAIN = """\
Am Montag/B-date kam Anna/B-pers nach Berlin/B-place .
Karl/B-pers schrieb aus Wien/B-place .
Lieber Herwarth/B-pers Walden/I-pers , herzlichen Dank !
Der Brief blieb liegen .
Am Freitag/B-date reiste Marie/B-pers nach Hamburg/B-place .
Otto/B-pers wohnte in München/B-place .
Liebe Else/B-pers Lasker-Schüler/I-pers , ich danke Ihnen sehr .
Die Ausstellung ist geschlossen .
Am 12./B-date März/I-date 1914/I-date kam Franz/B-pers Marc/I-pers nach Köln/B-place .
Nell/B-pers schrieb aus Paris/B-place .
Lieber Karl/B-pers , vielen Dank !
Das Heft kam gestern .
Am Sonntag/B-date fuhr Otto/B-pers nach Wien/B-place .
Marie/B-pers wohnte in Berlin/B-place .
Am Dienstag/B-date schrieb Anna/B-pers aus München/B-place .
Die Bilder sind angekommen ."""
DEV = """\
Am Montag/B-date kam Else/B-pers nach Paris/B-place .
Franz/B-pers Marc/I-pers schrieb aus Berlin/B-place .
Lieber Otto/B-pers , herzlichen Dank !
Der Brief kam am Freitag/B-date ."""
TEST = """\
Am Sonntag/B-date kam Karl/B-pers nach Hamburg/B-place .
Herwarth/B-pers Walden/I-pers wohnte in Köln/B-place .
Liebe Nell/B-pers , vielen Dank !
Das Heft blieb in Wien/B-place ."""

STACKS = {"both": ["charlm:de-forward", "charlm:de-backward"], "fwd": ["charlm:de-forward"]}
GRID_TAGGERS = ["bilstm-crf", "map-crf", "map", "lcrf-ner", "cse"]
PLAIN_TAGGERS = ["bilstm-crf", "map-crf", "map", "lcrf-ner"]  # saved as plain Flair SequenceTaggers
SEEDS = [1, 2]
TAGS = {"O"} | {f"{prefix}-{kind}" for prefix in "BI" for kind in ("pers", "place", "date")}

# Loads each model with flairsuite made unimportable; prints the raw token tags of each sentence.
PLAIN_FLAIR = """
import json, sys
sys.modules["flairsuite"] = None
from flair.data import Sentence
from flair.models import SequenceTagger
jobs = json.loads(open(sys.argv[1], encoding="utf-8").read())
found = {}
for path, sentences in jobs.items():
    tagger = SequenceTagger.load(path)
    found[path] = {"class": type(tagger).__name__, "tags": []}
    for tokens in sentences:
        sentence = Sentence(tokens)
        tagger.predict(sentence, label_name="raw", force_token_predictions=True)
        found[path]["tags"].append([token.get_label("raw").value for token in sentence])
print(json.dumps(found))
"""


def conll(text: str, repeat: int = 1) -> str:
    """The marked-up sentences of `text` (repeated `repeat` times) as a Sturm column file: token SPACE tag, blank line between sentences."""
    sentences = []
    for line in text.splitlines() * repeat:
        sentences.append("\n".join(" ".join(word.rsplit("/", 1)) if "/" in word[1:] else f"{word} O" for word in line.split()))
    return "\n\n".join(sentences) + "\n"


def gold(text: str) -> list[list[tuple[str, str]]]:
    """(token, tag) of every word of every sentence of `text`."""
    return [[tuple(pair.split(" ")) for pair in sentence.splitlines()] for sentence in conll(text).strip().split("\n\n")]


def write_sturm(root: Path, repeat: int = 1) -> Path:
    """A corpora folder holding the fake Sturm (train repeated `repeat` times)."""
    write_file(root / "sturm" / "train_sturm.conll", conll(TRAIN, repeat))
    write_file(root / "sturm" / "dev_sturm.conll", conll(DEV))
    write_file(root / "sturm" / "test_sturm.conll", conll(TEST))
    return root


def experiment_yaml(path: Path, name: str, stacks: dict[str, list[str]], taggers: list[str], seeds: list[int], train: str,
                    entity_fix_values: str = "[false, true]") -> Path:
    """An experiment file on the fake Sturm."""
    lines = [f"name: {name}", "corpora: [sturm]", "embeddings:", *[f"  {name}: [{', '.join(specs)}]" for name, specs in stacks.items()],
             f"taggers: [{', '.join(taggers)}]", f"seeds: [{', '.join(map(str, seeds))}]", f"train: {train}", f"entity_fix: {entity_fix_values}"]
    return write_file(path, "\n".join(lines) + "\n")


def tag(home: Path, corpora: Path, experiment: Path, *extra: str):
    """`flairsuite tag EXPERIMENT --corpora-dir CORPORA [extra]` with FLAIRSUITE_HOME=home."""
    return CliRunner().invoke(cli, ["tag", str(experiment), "--corpora-dir", str(corpora), *extra], env={"FLAIRSUITE_HOME": str(home)})


def error_line(result) -> str:
    """The output of a failed command, which must be exactly one line."""
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 1, result.output
    return lines[0]


def run_ids(stacks, taggers, seeds) -> list[str]:
    return [f"sturm/{s}/{t}/seed-{n}" for s in stacks for t in taggers for n in seeds]


def read_predictions(path: Path) -> list[list[list[str]]]:
    """predictions.tsv as sentences of [token, gold, raw tag] rows."""
    text = path.read_text(encoding="utf-8").strip()
    return [[line.split("\t") for line in block.splitlines()] for block in text.split("\n\n")]


def files_state(root: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple[int, int]]:
    """path -> (mtime_ns, size) of every file below root, except names in `skip`."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*") if p.is_file() and p.name not in skip}


@pytest.fixture(scope="module")
def lm_home(tmp_path_factory) -> Path:
    """A home holding only tiny `charlm/de-forward` and `charlm/de-backward` (trained by the CLI)."""
    return train_tiny_embeddings(tmp_path_factory.mktemp("lms"), "both")


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> Path:
    return write_sturm(tmp_path_factory.mktemp("corpora"))


@pytest.fixture(scope="module")
def grid(lm_home, corpora, tmp_path_factory):
    """The tiny grid 2 stacks x 5 taggers x 2 seeds x Entity-Fix no/yes, 2 epochs, run once: (home, experiment file, result)."""
    root = tmp_path_factory.mktemp("grid")
    home = root / "home"
    shutil.copytree(lm_home, home)
    experiment = experiment_yaml(root / "tiny.yaml", "tiny", STACKS, GRID_TAGGERS, SEEDS, "{max_epochs: 2, mini_batch_size: 4}")
    result = tag(home, corpora, experiment)
    assert result.exit_code == 0, result.output
    return home, experiment, result


def test_grid_runs_end_to_end(grid):
    home, _, result = grid
    out = home / "results" / "tiny"
    ids = run_ids(STACKS, GRID_TAGGERS, SEEDS)
    assert "tiny: 20 runs, 0 finished before, 20 to train" in result.output
    # 3 splits x 2 specs, each computed once for all 20 runs, kept as .npy (+ .json) below cache/embeddings
    assert "embeddings computed for 6 (corpus split, embedding) pairs" in result.output
    assert len(list((home / "cache" / "embeddings").rglob("*.npy"))) == 6
    expected_gold = gold(TEST)
    for run_id in ids:
        run_dir = out / run_id
        assert (run_dir / "model.pt").is_file() and not (run_dir / "checkpoint.pt").exists()
        rows = read_predictions(run_dir / "predictions.tsv")
        assert [[(token, tag) for token, tag, _ in sentence] for sentence in rows] == expected_gold
        assert all(len(row) == 3 and row[2] in TAGS for sentence in rows for row in sentence)
        plain, fixed = read_run(run_dir / "metrics.json").metrics, read_run(run_dir / "entity-fix" / "metrics.json").metrics
        stack_name, tagger, seed = run_id.split("/")[1:]
        assert (plain["run"], plain["entity_fix"], fixed["run"], fixed["entity_fix"]) == (run_id, False, f"{run_id}/entity-fix", True)
        assert (plain["embeddings"], plain["embedding_specs"], plain["tagger"], plain["seed"]) == (stack_name, STACKS[stack_name], tagger, int(seed[5:]))
        assert plain["epochs"] == 2 and plain["train"]["max_epochs"] == 2 and len(plain["history"]) == 2
        assert plain["memory"]["peak_rss_anon_mb"] > 50 and plain["memory"]["peak_rss_mb"] >= plain["memory"]["peak_rss_anon_mb"]
        trained = {spec: summary["chars"] for spec, summary in plain["artifact_summaries"].items()}  # from train-charlm's summary.json
        assert list(trained) == STACKS[stack_name] and all(chars > 0 for chars in trained.values())
        assert plain["experiment"] == "tiny" and plain["corpus_label"] == "sturm" and plain["subsample"] is None
        assert {name: s["support"] for name, s in plain["test"]["per_type"].items()} == {"pers": 3, "place": 3, "date": 1}  # TEST's entities
        assert {k: v for k, v in plain.items() if k not in ("run", "entity_fix", "dev", "test", "flair_f1", "test_lengths")} == \
            {k: v for k, v in fixed.items() if k not in ("run", "entity_fix", "dev", "test", "flair_f1", "test_lengths")}
    assert sorted(str(p.parent.relative_to(out)) for p in out.rglob("metrics.json")) == sorted(ids + [f"{i}/entity-fix" for i in ids])

    # the table: one row per stack x tagger x Entity-Fix, every cell over 2 seeds
    rows = [line for line in result.output.splitlines() if re.match(r"\| (both|fwd) \|", line)]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in rows]
    assert sorted((c[0], c[1], c[2]) for c in cells) == sorted((s, t, f) for s in STACKS for t in GRID_TAGGERS for f in ("no", "yes"))
    assert all(re.fullmatch(r"(\*\*)?\d+\.\d\d ± \d+\.\d\d \(2\)(\*\*)?", c[3]) for c in cells), rows

    frame = collect(out)
    assert len(frame) == 40 and sorted(frame["run"]) == sorted(ids + [f"{i}/entity-fix" for i in ids])
    assert frame.groupby(["embeddings", "tagger", "entity_fix"]).size().tolist() == [2] * 20
    assert set(frame["seed"]) == set(SEEDS) and frame["test_f1"].between(0, 1).all()


def test_predictions_rescore_to_the_metrics(grid):
    home = grid[0]
    out = home / "results" / "tiny"
    changed_by_fix, cse_runs = 0, 0
    for run_id in run_ids(STACKS, GRID_TAGGERS, SEEDS):
        rows = read_predictions(out / run_id / "predictions.tsv")
        gold_tags = [[row[1] for row in sentence] for sentence in rows]
        raw = [[row[2] for row in sentence] for sentence in rows]
        fixed = [entity_fix(tags) for tags in raw]
        changed_by_fix += fixed != raw
        for tags, metrics_file in ((raw, out / run_id / "metrics.json"), (fixed, out / run_id / "entity-fix" / "metrics.json")):
            recorded = json.loads(metrics_file.read_text())
            assert recorded["test_lengths"] == length_counts(gold_tags, tags), run_id  # what --by-length reads from a clean clone
            test = recorded["test"]
            strict = {"mode": "strict", "scheme": IOB2, "zero_division": 0}
            assert test["f1"] == pytest.approx(f1_score(gold_tags, tags, **strict), abs=1e-12), run_id
            assert test["precision"] == pytest.approx(precision_score(gold_tags, tags, **strict), abs=1e-12), run_id
            assert test["recall"] == pytest.approx(recall_score(gold_tags, tags, **strict), abs=1e-12), run_id
        if isinstance(build_tagger(run_id.split("/")[2], stack(["char"], home), tag_dictionary(CorpusChoice("sturm", {})), "ner"),
                      ClassStartEndTagger):
            cse_runs += 1
            assert fixed == raw, run_id  # CSE decodes to well-formed spans
    assert cse_runs == len(STACKS) * len(SEEDS)  # the check above ran for every CSE run
    assert changed_by_fix > 0  # the fixed variants were scored on repaired tags, not on the raw ones again


def test_models_reload_in_plain_flair_with_the_suites_tags(grid, tmp_path):
    home = grid[0]
    out = home / "results" / "tiny"
    sentences = [[token for token, _ in sentence] for sentence in gold(TEST)]
    decoded = {}
    for run_id in run_ids(STACKS, PLAIN_TAGGERS, SEEDS):
        decoded[str(out / run_id / "model.pt")] = [[row[2] for row in s] for s in read_predictions(out / run_id / "predictions.tsv")]
    jobs = write_file(tmp_path / "jobs.json", json.dumps({path: sentences for path in decoded}))
    result = subprocess.run([sys.executable, "-c", PLAIN_FLAIR, str(jobs)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {path: value["class"] for path, value in found.items()} == {path: "SequenceTagger" for path in decoded}
    # Plain Flair embeds in float32, the suite's cache holds float16: the tags still agree token for token here.
    assert {path: value["tags"] for path, value in found.items()} == decoded

    # CSE is the suite's own class: it loads with ClassStartEndTagger.load and predicts the spans of its raw tags.
    for run_id in run_ids(STACKS, ["cse"], SEEDS):
        model = ClassStartEndTagger.load(out / run_id / "model.pt")
        raw = [[row[2] for row in s] for s in read_predictions(out / run_id / "predictions.tsv")]
        for tokens, tags in zip(sentences, raw):
            sentence = Sentence(tokens)
            model.predict(sentence, label_name="raw")
            spans = [(label.data_point[0].idx - 1, label.data_point[-1].idx, label.value) for label in sentence.get_labels("raw")]
            assert sorted(spans) == sorted(bio_spans(tags)), run_id


def test_rerun_trains_nothing_and_a_second_grid_computes_no_embeddings(grid, corpora, tmp_path):
    home, experiment, _ = grid
    out, cache = home / "results" / "tiny", home / "cache"
    results_before, cache_before = files_state(out, skip=("experiment.json",)), files_state(cache)
    again = tag(home, corpora, experiment)
    assert again.exit_code == 0, again.output
    assert "tiny: 20 runs, 20 finished before, 0 to train" in again.output
    assert "trained 0 runs" in again.output and "embeddings computed for 0 (corpus split, embedding) pairs" in again.output
    assert files_state(out, skip=("experiment.json",)) == results_before and files_state(cache) == cache_before
    assert len(collect(out)) == 40

    other = experiment_yaml(tmp_path / "other.yaml", "other", STACKS, ["map"], [3], "{max_epochs: 1}", "[true]")
    second = tag(home, corpora, other)
    assert second.exit_code == 0, second.output
    assert "other: 2 runs, 0 finished before, 2 to train" in second.output
    assert "embeddings computed for 0 (corpus split, embedding) pairs" in second.output
    assert files_state(cache) == cache_before
    frame = collect(home / "results" / "other")
    assert sorted(frame["run"]) == ["sturm/both/map/seed-3/entity-fix", "sturm/fwd/map/seed-3/entity-fix"]
    assert not (home / "results" / "other" / "sturm" / "both" / "map" / "seed-3" / "metrics.json").exists()


def test_tag_reads_the_experiment_file_once(lm_home, corpora, tmp_path, monkeypatch):
    """`flairsuite tag` reads the file into one experiment object that the grid takes (it read it four times before)."""
    import builtins
    import io

    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    experiment = experiment_yaml(tmp_path / "once.yaml", "once", {"fwd": STACKS["fwd"]}, ["map"], [1], "{max_epochs: 1, mini_batch_size: 4}",
                                 "[false]")
    reads, real_open = [], io.open

    def counting_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file).resolve() == experiment.resolve():
            reads.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    result = tag(home, corpora, experiment)
    assert result.exit_code == 0, result.output
    assert "once: 1 runs, 0 finished before, 1 to train" in result.output
    assert len(reads) == 1


def test_runs_finished_under_another_experiment_are_copied(grid, corpora, tmp_path):
    """A cell shared with an earlier experiment (same corpus, stack, tagger, seed, settings, files) is copied, not trained."""
    home = grid[0]
    tiny = home / "results" / "tiny"
    settings = "{max_epochs: 2, mini_batch_size: 4}"
    # tiny decoded both variants; this one asks for the plain one only, and has one cell tiny lacks (seed 3)
    path = experiment_yaml(tmp_path / "overlap.yaml", "overlap", {"fwd": STACKS["fwd"]}, ["map-crf"], [1, 3], settings, "[false]")
    result = tag(home, corpora, path)
    assert result.exit_code == 0, result.output
    assert "sturm/fwd/map-crf/seed-1: copied from tiny/sturm/fwd/map-crf/seed-1 (the same run, finished there)" in result.output
    assert "overlap: 2 runs, 0 finished before, 1 copied from other experiments, 1 to train" in result.output
    assert "trained 1 runs" in result.output
    source, copy = (root / "sturm/fwd/map-crf/seed-1" for root in (tiny, home / "results" / "overlap"))
    old, new = (json.loads((folder / "metrics.json").read_text()) for folder in (source, copy))
    assert (new["experiment"], new["copied_from"]) == ("overlap", "tiny/sturm/fwd/map-crf/seed-1")
    assert new["fingerprint"] != old["fingerprint"]  # the record names the variants decoded
    assert {k: v for k, v in new.items() if k not in ("experiment", "fingerprint", "copied_from")} == {
        k: v for k, v in old.items() if k not in ("experiment", "fingerprint")}
    assert not (copy / "entity-fix").exists()
    assert read_predictions(copy / "predictions.tsv") == read_predictions(source / "predictions.tsv")
    again = tag(home, corpora, path)  # the copy is this experiment's run now
    assert again.exit_code == 0 and "overlap: 2 runs, 2 finished before, 0 to train" in again.output, again.output

    # other settings (one epoch), or a variant the source never decoded: trained, not copied
    fewer = experiment_yaml(tmp_path / "fewer.yaml", "fewer", {"fwd": STACKS["fwd"]}, ["map-crf"], [1], "{max_epochs: 1, mini_batch_size: 4}")
    assert "fewer: 1 runs, 0 finished before, 1 to train" in tag(home, corpora, fewer).output
    both = experiment_yaml(tmp_path / "both.yaml", "both-fix", {"fwd": STACKS["fwd"]}, ["map-crf"], [3], settings)
    assert "both-fix: 1 runs, 0 finished before, 1 to train" in tag(home, corpora, both).output


def germeval(text: str) -> str:
    """The marked-up sentences of `text` as a GermEval 2014 file (index, token, outer tag, inner tag; its types)."""
    types = {"pers": "PER", "place": "LOC", "date": "OTH"}
    blocks = []
    for sentence in conll(text).strip().split("\n\n"):
        rows = [line.split(" ") for line in sentence.splitlines()]
        tags = [tag if tag == "O" else f"{tag[:2]}{types[tag[2:]]}" for _, tag in rows]
        blocks.append("#\tsource\n" + "\n".join(f"{i}\t{token}\t{tag}\tO" for i, ((token, _), tag) in enumerate(zip(rows, tags), 1)))
    return "\n\n".join(blocks) + "\n"


def test_an_if_present_corpus_joins_once_its_files_are_there(grid, tmp_path):
    """GermEval's train is user-supplied: with `if_present` its runs are left out (one line) until the files exist, then
    they join the same experiment without --force."""
    home, corpora = grid[0], write_sturm(tmp_path / "corpora")
    lines = ["name: joins", "corpora: [sturm, {name: germeval14, if_present: true}]", "embeddings:", "  fwd: [charlm:de-forward]",
             "taggers: [map]", "seeds: [1]", "train: {max_epochs: 2, mini_batch_size: 4}", "entity_fix: [false, true]"]
    path = write_file(tmp_path / "joins.yaml", "\n".join(lines) + "\n")
    result = tag(home, corpora, path)
    assert result.exit_code == 0, result.output
    assert (f"germeval14: left out, its train and dev and test files not under {corpora / 'germeval2014'} "
            "(if_present: its runs join once the files are there)") in result.output
    assert "joins: 1 runs, 0 finished before, 1 copied from other experiments, 0 to train" in result.output  # tiny's Sturm cell
    for split, text in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        write_file(corpora / "germeval2014" / f"NER-de-{split}.tsv", germeval(text))
    again = tag(home, corpora, path)
    assert again.exit_code == 0, again.output
    assert "left out" not in again.output
    assert "joins: 2 runs, 1 finished before, 1 to train" in again.output
    metrics = json.loads((home / "results" / "joins" / "germeval14" / "fwd" / "map" / "seed-1" / "metrics.json").read_text())
    assert metrics["corpus"] == "germeval14" and 0.0 <= metrics["test"]["f1"] <= 1.0
    bad = write_file(tmp_path / "bad.yaml", "\n".join(lines).replace("if_present: true", "if_present: maybe") + "\n")
    assert error_line(tag(home, corpora, bad)) == f"Error: {bad}: corpora: germeval14: if_present must be true or false (found \"maybe\")"


def test_a_corpus_cap_reaches_the_trained_run(grid, corpora, tmp_path):
    """A corpora entry's own epoch cap is what the run trains under, and its metrics say so (the table footnotes it)."""
    home = grid[0]
    lines = ["name: capped", "corpora: [{name: sturm, train: {max_epochs: 1}}]", "embeddings:", "  fwd: [charlm:de-forward]",
             "taggers: [map]", "seeds: [1]", "train: {max_epochs: 2, mini_batch_size: 4}"]
    result = tag(home, corpora, write_file(tmp_path / "capped.yaml", "\n".join(lines) + "\n"))
    assert result.exit_code == 0, result.output
    metrics = json.loads((home / "results" / "capped" / "sturm" / "fwd" / "map" / "seed-1" / "metrics.json").read_text())
    assert (metrics["train"]["max_epochs"], metrics["epochs"]) == (1, 1)
    assert metrics["train_note"] == "trained with max_epochs 1 on this corpus"
    assert "† sturm: trained with max_epochs 1 on this corpus" in result.output


def test_a_run_another_process_holds_is_skipped_then_trained(grid, corpora, tmp_path):
    home = grid[0]
    experiment = experiment_yaml(tmp_path / "shared.yaml", "shared", {"both": STACKS["both"]}, ["map"], [1, 2], "{max_epochs: 1}", "[false]")
    busy = home / "results" / "shared" / "sturm/both/map/seed-2"
    with claimed(busy) as mine:  # as if another process were training it
        assert mine
        with claimed(busy) as again:
            assert not again  # a lock is exclusive, within one process too
        first = tag(home, corpora, experiment)
    assert first.exit_code == 0, first.output
    assert "sturm/both/map/seed-2: skipped, being trained by another process" in first.output
    assert "trained 1 runs" in first.output
    assert (home / "results/shared/sturm/both/map/seed-1/metrics.json").is_file() and not (busy / "metrics.json").exists()
    second = tag(home, corpora, experiment)  # the lock went with its holder: the run trains now
    assert second.exit_code == 0, second.output
    assert "shared: 2 runs, 1 finished before, 1 to train" in second.output and (busy / "metrics.json").is_file()


def test_changed_config_needs_force(grid, corpora, tmp_path):
    home = grid[0]
    stacks = {"both": STACKS["both"]}
    path = tmp_path / "change.yaml"
    out = home / "results" / "change"
    first = tag(home, corpora, experiment_yaml(path, "change", stacks, ["map", "map-crf"], [1], "{max_epochs: 1}"))
    assert first.exit_code == 0, first.output

    experiment_yaml(path, "change", stacks, ["map", "map-crf"], [1], "{max_epochs: 3}")
    refused = error_line(tag(home, corpora, path))
    assert refused.startswith(f"Error: {out} holds runs of a different 'change' config") and "--force" in refused
    assert read_run(out / "sturm/both/map/seed-1/metrics.json").metrics["epochs"] == 1

    old_run = out / "sturm/both/map/seed-1"
    with claimed(old_run) as mine:  # another process still trains it: --force must not delete the folder under it
        assert mine
        busy = error_line(tag(home, corpora, path, "--force"))
    assert f"{old_run} is being trained by another process" in busy and (old_run / "metrics.json").is_file()

    forced = tag(home, corpora, path, "--force")
    assert forced.exit_code == 0, forced.output
    assert "change: 2 runs, 0 finished before, 2 to train" in forced.output
    for run_id in run_ids(stacks, ["map", "map-crf"], [1]):
        for metrics in (out / run_id / "metrics.json", out / run_id / "entity-fix" / "metrics.json"):
            assert read_run(metrics).metrics["train"]["max_epochs"] == 3 and len(read_run(metrics).metrics["history"]) == 3

    experiment_yaml(path, "change", stacks, ["map"], [1], "{max_epochs: 3}")
    assert "--force" in error_line(tag(home, corpora, path))
    dropped = tag(home, corpora, path, "--force")
    assert dropped.exit_code == 0, dropped.output
    assert "change: 1 runs, 1 finished before, 0 to train" in dropped.output
    assert f"removed {out / 'sturm/both/map-crf/seed-1'}" in dropped.output
    assert not (out / "sturm/both/map-crf/seed-1").exists()
    assert sorted(collect(out)["run"]) == ["sturm/both/map/seed-1", "sturm/both/map/seed-1/entity-fix"]

    # a run with one Entity-Fix variant's metrics missing (killed between the two writes) is not finished: decoded again
    variant = out / "sturm/both/map/seed-1/entity-fix/metrics.json"
    before = json.loads(variant.read_text())
    variant.unlink()
    again = tag(home, corpora, path)
    assert again.exit_code == 0, again.output
    assert "change: 1 runs, 0 finished before, 1 to train" in again.output
    varying = ("seconds", "memory")
    assert {k: v for k, v in json.loads(variant.read_text()).items() if k not in varying} == {k: v for k, v in before.items() if k not in varying}


def test_runs_finished_on_other_embedding_files_are_kept_only_when_asked(grid, corpora, tmp_path):
    """Word vectors or an LM trained again elsewhere are new files: a finished run is refused, kept with --keep-finished."""
    home = grid[0]
    path, out = tmp_path / "other-files.yaml", home / "results" / "other-files"
    run_dir = out / "sturm/lm/map/seed-1"
    shutil.copytree(home / "charlm" / "de-forward", home / "charlm" / "de-other-forward")
    lm_stack = {"lm": ["charlm:de-other-forward"]}
    first = tag(home, corpora, experiment_yaml(path, "other-files", lm_stack, ["map"], [1], "{max_epochs: 1}"))
    assert first.exit_code == 0, first.output
    before = [file.read_bytes() for file in (run_dir / "metrics.json", run_dir / "entity-fix" / "metrics.json")]
    used = json.loads(before[0])["artifact_digests"]["charlm:de-other-forward"]

    shutil.rmtree(home / "charlm" / "de-other-forward")  # the same name, other bytes: another model now
    shutil.copytree(home / "charlm" / "de-backward", home / "charlm" / "de-other-forward")
    refused = error_line(tag(home, corpora, path))
    assert refused.startswith(f"Error: {run_dir} was trained on other embedding files (charlm:de-other-forward {used[:6]}… (here ")
    assert refused.endswith("): pass --keep-finished to keep it or --force to retrain it")
    kept = tag(home, corpora, path, "--keep-finished")
    assert kept.exit_code == 0, kept.output
    assert "other-files: 1 runs, 1 finished before, 0 to train" in kept.output and "trained 0 runs" in kept.output
    assert [file.read_bytes() for file in (run_dir / "metrics.json", run_dir / "entity-fix" / "metrics.json")] == before

    # a variant's metrics missing (killed between the writes): decoding it again would read the new files, so not kept
    (run_dir / "entity-fix" / "metrics.json").unlink()
    lacking = error_line(tag(home, corpora, path, "--keep-finished"))
    assert lacking.endswith("and lacks a variant's metrics: pass --force to retrain it"), lacking
    (run_dir / "entity-fix" / "metrics.json").write_bytes(before[1])

    # other settings as well: --keep-finished does not keep it; --force (which the config change needs) retrains it
    experiment_yaml(path, "other-files", lm_stack, ["map"], [1], "{max_epochs: 2}")
    forced = tag(home, corpora, path, "--force", "--keep-finished")
    assert forced.exit_code == 0, forced.output
    assert "other-files: 1 runs, 0 finished before, 1 to train" in forced.output
    assert json.loads((run_dir / "metrics.json").read_text())["train"]["max_epochs"] == 2


def test_runs_whose_embedding_files_only_moved_are_kept(grid, corpora, tmp_path):
    home = grid[0]
    path, out = tmp_path / "renamed.yaml", home / "results" / "renamed"
    run_dir = out / "sturm/fwd/map/seed-1"
    first = tag(home, corpora, experiment_yaml(path, "renamed", {"fwd": ["charlm:de-forward"]}, ["map"], [1], "{max_epochs: 1}"))
    assert first.exit_code == 0, first.output
    before = [json.loads(file.read_text()) for file in (run_dir / "metrics.json", run_dir / "entity-fix" / "metrics.json")]

    shutil.copytree(home / "charlm" / "de-forward", home / "charlm" / "de-1h-forward")  # the same bytes under a new name
    experiment_yaml(path, "renamed", {"fwd": ["charlm:de-1h-forward"]}, ["map"], [1], "{max_epochs: 1}")
    assert "--force" in error_line(tag(home, corpora, path))  # the config changed
    kept = tag(home, corpora, path, "--force")
    assert kept.exit_code == 0, kept.output
    assert "renamed: 1 runs, 1 finished before, 0 to train" in kept.output and "trained 0 runs" in kept.output
    for file, old in zip((run_dir / "metrics.json", run_dir / "entity-fix" / "metrics.json"), before):
        new = json.loads(file.read_text())
        assert new["embedding_specs"] == ["charlm:de-1h-forward"] and new["fingerprint"] != old["fingerprint"]
        renamed = ("embedding_specs", "fingerprint", "artifact_digests", "artifact_summaries")
        for key in renamed[2:]:
            assert new[key] == {"charlm:de-1h-forward": old[key]["charlm:de-forward"]}
        assert {k: v for k, v in new.items() if k not in renamed} == {k: v for k, v in old.items() if k not in renamed}
    again = tag(home, corpora, path)  # the rewritten metrics match as they are now
    assert again.exit_code == 0 and "renamed: 1 runs, 1 finished before, 0 to train" in again.output, again.output

    # killed between the two variants' rewrites: one file under the new names, one under the old; still finished
    fixed = run_dir / "entity-fix" / "metrics.json"
    fixed.write_text(json.dumps(before[1]), encoding="utf-8")
    cut_short = tag(home, corpora, path)
    assert cut_short.exit_code == 0 and "renamed: 1 runs, 1 finished before, 0 to train" in cut_short.output, cut_short.output
    assert json.loads(fixed.read_text())["embedding_specs"] == ["charlm:de-1h-forward"]

    # a new name for other bytes is another run: trained again
    shutil.rmtree(home / "charlm" / "de-1h-forward")
    shutil.copytree(home / "charlm" / "de-backward", home / "charlm" / "de-1h-forward")
    other = tag(home, corpora, path, "--force")
    assert other.exit_code == 0, other.output
    assert "renamed: 1 runs, 0 finished before, 1 to train" in other.output and "trained 1 runs" in other.output


def tiny_features(home: Path, corpora: Path) -> dict[str, SplitFeatures]:
    """Train, dev and test of the fake Sturm under both LMs, from the embedding cache."""
    splits = load_labeled("sturm", {}, None, corpora)
    return {name: SplitFeatures(split, [cached_vectors(spec, split, home, name)[0] for spec in STACKS["both"]])
            for name, split in splits.items()}


def fresh_model(tagger: str, home: Path, seed: int) -> torch.nn.Module:
    """An untrained tagger over both LMs, its initial weights fixed by `seed`; the LMs frozen as in the grid."""
    flair.set_seed(seed)
    model = build_tagger(tagger, stack(STACKS["both"], home), tag_dictionary(CorpusChoice("sturm", {})), "ner")
    for module in embedding_modules(model.embeddings):
        module.requires_grad_(False)
    return model


@pytest.mark.parametrize("tagger", GRID_TAGGERS)
def test_resumed_training_equals_uninterrupted(tagger, grid, corpora, tmp_path):
    home = grid[0]
    data = tiny_features(home, corpora)
    # patience 0: the learning rate is halved after every epoch without a dev gain, so the scheduler state matters
    settings = {**default_train(tagger), "max_epochs": 3, "mini_batch_size": 4, "patience": 0}
    whole = fresh_model(tagger, home, 5)
    progress = train_tagger(whole, data["train"], data["dev"], settings, 7, tmp_path / "whole.pt")

    first = fresh_model(tagger, home, 5)
    train_tagger(first, data["train"], data["dev"], {**settings, "max_epochs": 1}, 7, tmp_path / "split.pt")
    first_seconds = torch.load(tmp_path / "split.pt", weights_only=False)["progress"].seconds
    resumed = fresh_model(tagger, home, 6)  # other initial weights and RNG state: the checkpoint must replace them all
    resumed_progress = train_tagger(resumed, data["train"], data["dev"], settings, 7, tmp_path / "split.pt")

    assert [h["lr"] for h in progress.history] == [h["lr"] for h in resumed_progress.history]
    assert progress.history == resumed_progress.history and len(progress.history) == 3
    assert (progress.epoch, progress.best_epoch, progress.best_score) == (resumed_progress.epoch, resumed_progress.best_epoch, resumed_progress.best_score)
    # the training time counts the first process's epoch too (a run's metrics.json adds it to its own wall time)
    assert progress.resumed_at == 0 and resumed_progress.resumed_at == first_seconds > 0 and resumed_progress.seconds > first_seconds
    expected, found = whole.state_dict(), resumed.state_dict()
    assert expected.keys() == found.keys()
    assert [key for key in expected if not torch.equal(expected[key], found[key])] == []


@pytest.fixture
def one_thread():
    """torch on one thread in this process, as the killed child runs (OMP_NUM_THREADS=1): the same float sums."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_killed_grid_resumes_to_the_uninterrupted_result(lm_home, tmp_path, monkeypatch, one_thread):
    corpora = write_sturm(tmp_path / "corpora", repeat=12)  # 192 train sentences: epochs long enough to kill between
    experiment = experiment_yaml(tmp_path / "long.yaml", "long", {"both": STACKS["both"]}, ["bilstm-crf"], [1], "{max_epochs: 6}", "[false]")
    killed_home, clean_home = tmp_path / "killed", tmp_path / "clean"
    shutil.copytree(lm_home, killed_home)
    shutil.copytree(lm_home, clean_home)
    run_dir = killed_home / "results" / "long" / "sturm" / "both" / "bilstm-crf" / "seed-1"

    command = [sys.executable, "-c", "from flairsuite.cli import main; main()", "tag", str(experiment), "--corpora-dir", str(corpora)]
    env = {**os.environ, "FLAIRSUITE_HOME": str(killed_home), "OMP_NUM_THREADS": "1"}
    with (tmp_path / "stderr.txt").open("wb") as stderr:  # a file, not a pipe: tqdm would fill a pipe and block the child
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 120
        while not (run_dir / "checkpoint.pt").exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()[-3000:]
    assert (run_dir / "checkpoint.pt").is_file() and not (run_dir / "metrics.json").exists()
    done = torch.load(run_dir / "checkpoint.pt", weights_only=False)["progress"].epoch
    assert 1 <= done < 6
    changed_home = tmp_path / "changed"
    shutil.copytree(killed_home, changed_home)

    epochs = []
    real_epoch = train_module._epoch
    monkeypatch.setattr(train_module, "_epoch", lambda *args: epochs.append(1) or real_epoch(*args))
    resumed = tag(killed_home, corpora, experiment)
    assert resumed.exit_code == 0, resumed.output
    assert "long: 1 runs, 0 finished before, 1 to train" in resumed.output
    assert len(epochs) == 6 - done  # it continued from the checkpoint
    assert not (run_dir / "checkpoint.pt").exists()

    clean = tag(clean_home, corpora, experiment)
    assert clean.exit_code == 0, clean.output
    clean_dir = clean_home / "results" / "long" / "sturm" / "both" / "bilstm-crf" / "seed-1"
    found, expected = (json.loads((d / "metrics.json").read_text()) for d in (run_dir, clean_dir))
    assert {k: v for k, v in found.items() if k not in ("seconds", "memory")} == {k: v for k, v in expected.items() if k not in ("seconds", "memory")}
    assert (run_dir / "predictions.tsv").read_text() == (clean_dir / "predictions.tsv").read_text()

    # the killed run's checkpoint belongs to the old settings: a changed config (--force) must not continue from it
    epochs.clear()
    changed = experiment_yaml(tmp_path / "long.yaml", "long", {"both": STACKS["both"]}, ["bilstm-crf"], [1],
                              "{max_epochs: 6, learning_rate: 0.05}", "[false]")
    forced = tag(changed_home, corpora, changed, "--force")
    assert forced.exit_code == 0, forced.output
    assert len(epochs) == 6
    history = json.loads((changed_home / "results/long/sturm/both/bilstm-crf/seed-1/metrics.json").read_text())["history"]
    assert history[0]["lr"] == 0.05


def test_missing_lm_is_one_line_naming_the_command(lm_home, corpora, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    shutil.rmtree(home / "charlm" / "de-backward")
    experiment = experiment_yaml(tmp_path / "x.yaml", "x", STACKS, ["map"], [1], "{max_epochs: 1}")
    line = error_line(tag(home, corpora, experiment))
    assert line == f"Error: {home}/charlm/de-backward/best-lm.pt not found: run `flairsuite train-charlm --lang de --direction backward`"
    assert not (home / "results").exists() and not (home / "cache" / "embeddings").exists()



def test_runs_left_out_by_the_pattern_may_lack_their_embedding_files(lm_home, corpora, tmp_path):
    """`--runs` trains the runs whose files exist while another stack's LM is still training; without it the grid refuses."""
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    shutil.rmtree(home / "charlm" / "de-backward")
    experiment = experiment_yaml(tmp_path / "x.yaml", "x", STACKS, ["map"], [1], "{max_epochs: 1, mini_batch_size: 4}", "[false]")
    assert error_line(tag(home, corpora, experiment)).startswith(f"Error: {home}/charlm/de-backward/best-lm.pt not found")
    result = tag(home, corpora, experiment, "--runs", "sturm/fwd/*")
    assert result.exit_code == 0, result.output
    assert "x: 1 runs of 2 (--runs), 0 finished before, 1 to train" in result.output
    assert (home / "results" / "x" / "sturm" / "fwd" / "map" / "seed-1" / "metrics.json").is_file()
    assert not (home / "results" / "x" / "sturm" / "both").exists()
    # the refused pattern names the missing file as before
    assert error_line(tag(home, corpora, experiment, "--runs", "sturm/both/*")).startswith(f"Error: {home}/charlm/de-backward/best-lm.pt not found")

def test_bfloat16_where_the_cpu_cannot_is_one_line_before_any_work(lm_home, corpora, tmp_path, monkeypatch):
    """On a CPU without bfloat16 units oneDNN's LSTM fails at the first step: the grid refuses first, naming file and run."""
    monkeypatch.setattr(flair, "device", torch.device("cpu"))
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    home = tmp_path / "home"
    shutil.copytree(lm_home, home)
    experiment = experiment_yaml(tmp_path / "x.yaml", "x", STACKS, ["map"], [1], "{max_epochs: 1, precision: bfloat16}", "[false]")
    result = tag(home, corpora, experiment)
    assert result.exit_code == 1 and result.output.splitlines()[:-1] == ["x: 2 runs, 0 finished before, 2 to train"], result.output
    assert result.output.splitlines()[-1] == (f"Error: {experiment} (run sturm/{next(iter(STACKS))}/map/seed-1): precision bfloat16 needs a "
                                              "device that computes bfloat16, and this CPU has no bfloat16 units (AVX-512 BF16 or AMX): "
                                              "use precision: float32")
    assert not (home / "cache" / "embeddings").exists()


def test_unknown_tagger_is_one_line_naming_file_and_key(lm_home, corpora, tmp_path):
    experiment = experiment_yaml(tmp_path / "x.yaml", "x", STACKS, ["map", "bilstm"], [1], "{max_epochs: 1}")
    line = error_line(tag(tmp_path / "home", corpora, experiment))
    assert line.startswith(f"Error: {experiment}: taggers: unknown tagger \"bilstm\" (known: bilstm-crf, bilstm512-crf, bilstm-crf-noproj, map-crf, map")
    assert not (tmp_path / "home").exists()


def test_tag_dictionary_holds_the_types_after_the_tag_map() -> None:
    """LER coarse maps 19 fine types onto 7: the tagger must predict those 7 only."""
    from flairsuite.experiments.corpus_choice import CorpusChoice
    from flairsuite.experiments.run_data import tag_dictionary

    coarse = tag_dictionary(CorpusChoice("ler", {"granularity": "coarse"})).get_items()
    assert sorted(coarse) == ["LIT", "LOC", "NRM", "ORG", "PER", "REG", "RS"]
    assert len(tag_dictionary(CorpusChoice("ler", {})).get_items()) == 19


@pytest.mark.parametrize("own", [None, "64"])
def test_tagging_bounds_onednns_primitive_cache_unless_the_user_set_it(grid, corpora, tmp_path, monkeypatch, own):
    """Every batch length is a new oneDNN shape (allocator.py): `tag` bounds the cache before any work, a user's value stays."""
    monkeypatch.setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", own or "")  # recorded, so that teardown restores the session's value
    if own is None:
        monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY")
    lines = ["name: bounded", "corpora: [sturm]", "embeddings:", "  fwd: [charlm:de-forward]",
             "taggers: [map]", "seeds: [1]", "train: {max_epochs: 1, mini_batch_size: 4}"]
    result = tag(grid[0], corpora, write_file(tmp_path / "bounded.yaml", "\n".join(lines) + "\n"))
    assert result.exit_code == 0, result.output
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == (own or "8")


def test_runs_patterns_each_match_or_name_the_id_parts() -> None:
    grid = runs(load_experiment(Path(__file__).parent.parent / "experiments" / "table8-de.yaml"))
    chosen = select(grid, ["ler/*/map/seed-1", "ler-coarse/*/cse/*"])  # LER fine is the default granularity: `ler`
    assert [run.run_id for run in chosen] == ["ler-coarse/proposed+word/cse/seed-1", "ler-coarse/proposed+word/cse/seed-2",
                                              "ler-coarse/proposed+word/cse/seed-3", "ler/proposed+word/map/seed-1"]
    # one mistyped pattern among matching ones is an error too, naming the parts the ids are made of
    with pytest.raises(FlairsuiteError) as raised:
        select(grid, ["ler-coarse/*/map/*", "ler-fine/*/map/*"])
    assert str(raised.value) == (
        "--runs ler-fine/*/map/*: no run id matches (ids look like sturm/proposed+word/map/seed-1; "
        "corpora: sturm, arendt, ler-coarse, ler; embeddings: proposed+word; "
        "taggers: map, map-crf, lcrf-ner, cse, bilstm-crf, bilstm-lcrf-ner)")
