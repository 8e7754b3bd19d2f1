"""PoS (one tag per token) in experiments: UD `upos`/`xpos` and own corpora with `task: pos`.

Covers: token and per-tag accuracy; a grid on UD English EWT (real files, `xpos`) whose metrics
re-score from its predictions, whose best epoch is chosen by dev accuracy and whose model reloads
as a plain Flair SequenceTagger predicting `xpos` token labels; an own PoS corpus beside an own
NER corpus in one experiment and one table (F1 and accuracy columns, each named); span-only
taggers and Entity-Fix refused on PoS with one line; `predict` refuses markup and Entity-Fix for
a PoS model; the collector's schema per task.
"""

import json
import os
import re
from pathlib import Path

import pytest
from conftest import invoke as run
from conftest import one_error_line, write_file
from flair.data import Sentence
from flair.models import SequenceTagger

from flairsuite.results.collect import read_run
from flairsuite.tagging.scoring import accuracy_scores

CORPORA = Path(os.environ["FLAIRSUITE_CORPORA"]) if os.environ.get("FLAIRSUITE_CORPORA") else None

# token TAB upos; the NER corpus beside it: token TAB BIO tag
POS_TRAIN = """\
Anna\tPROPN
schreibt\tVERB
einen\tDET
Brief\tNOUN
.\tPUNCT

Der\tDET
Brief\tNOUN
kommt\tVERB
an\tADP
.\tPUNCT

Karl\tPROPN
liest\tVERB
.\tPUNCT
"""
POS_DEV = "Marie\tPROPN\nschreibt\tVERB\n.\tPUNCT\n"
POS_TEST = "Otto\tPROPN\nliest\tVERB\neinen\tDET\nBrief\tNOUN\n.\tPUNCT\n"
NER_TRAIN = "Anna\tB-pers\nschreibt\tO\naus\tO\nWien\tB-place\n.\tO\n\nKarl\tB-pers\nliest\tO\n.\tO\n"
NER_DEV = "Marie\tB-pers\nschreibt\tO\n"
NER_TEST = "Otto\tB-pers\nkam\tO\nnach\tO\nBerlin\tB-place\n"






def corpus_folder(root: Path, train: str, dev: str, test: str) -> Path:
    for name, text in (("train.tsv", train), ("dev.tsv", dev), ("test.tsv", test)):
        write_file(root / name, text)
    return root


def predictions(path: Path) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """Tokens, gold and predicted tags per sentence of a run's predictions.tsv."""
    tokens, gold, predicted = [[]], [[]], [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line:
            tokens.append([]), gold.append([]), predicted.append([])
            continue
        token, expected, found = line.split("\t")
        tokens[-1].append(token), gold[-1].append(expected), predicted[-1].append(found)
    keep = [i for i, sentence in enumerate(tokens) if sentence]
    return [tokens[i] for i in keep], [gold[i] for i in keep], [predicted[i] for i in keep]


def test_accuracy_counts_tokens_and_each_gold_tag():
    gold = [["DET", "NOUN", "VERB"], ["PROPN", "VERB", "PUNCT"]]
    predicted = [["DET", "VERB", "VERB"], ["NOUN", "VERB", "PUNCT"]]
    scores = accuracy_scores(gold, predicted)
    assert scores["accuracy"] == pytest.approx(4 / 6)
    assert scores["per_type"] == {
        "DET": {"accuracy": 1.0, "support": 1}, "NOUN": {"accuracy": 0.0, "support": 1}, "PROPN": {"accuracy": 0.0, "support": 1},
        "PUNCT": {"accuracy": 1.0, "support": 1}, "VERB": {"accuracy": 1.0, "support": 2},
    }
    with pytest.raises(ValueError, match="a sentence of 3 gold tags got 2 predicted ones"):
        accuracy_scores(gold, [["DET", "NOUN"], ["PROPN", "VERB", "PUNCT"]])


@pytest.mark.corpora
@pytest.mark.skipif(CORPORA is None, reason="FLAIRSUITE_CORPORA is not set (point it at ../shared/corpora)")
def test_ud_xpos_grid_scores_by_accuracy_and_the_model_predicts_xpos_in_plain_flair(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    path = write_file(tmp_path / "pos.yaml", """\
name: ewt-pos
corpora: [{name: ud-en-ewt, tags: xpos, subsample: 0.01}]
embeddings: {char: [char]}
taggers: [map, bilstm-crf]
seeds: [1]
train: {max_epochs: 2}
""")
    result = run("tag", str(path), "--threads", "1", "--corpora-dir", str(CORPORA))
    assert result.exit_code == 0, result.output
    assert re.search(r"ud-en-ewt-xpos-1pct/char/map/seed-1: test accuracy \d+\.\d\d \(dev \d+\.\d\d\), 2 epochs", result.output), result.output
    assert "## ewt-pos: test accuracy (%), mean ± std over seeds (n)" in result.output
    assert re.search(r"\| embeddings \| tagger \| ud-en-ewt \(xpos, 1% train\)† \|", result.output), result.output

    for tagger in ("map", "bilstm-crf"):
        run_dir = home / "results" / "ewt-pos" / "ud-en-ewt-xpos-1pct" / "char" / tagger / "seed-1"
        metrics = read_run(run_dir / "metrics.json").metrics
        assert metrics["task"] == "pos" and "flair_f1" not in metrics and "f1" not in metrics["test"]
        tokens, gold, predicted = predictions(run_dir / "predictions.tsv")
        assert len(tokens) == 2077 and sum(map(len, tokens)) == 25094  # all of EWT test (PROVENANCE.md)
        rescored = accuracy_scores(gold, predicted)
        assert metrics["test"]["accuracy"] == pytest.approx(rescored["accuracy"])
        assert metrics["test"]["per_type"].keys() == rescored["per_type"].keys() == {tag for tags in gold for tag in tags}
        for tag, scores in rescored["per_type"].items():
            assert metrics["test"]["per_type"][tag] == pytest.approx(scores)
        history = metrics["history"]
        assert [entry["epoch"] for entry in history] == [1, 2] and all("dev_accuracy" in entry for entry in history)
        best = max(history, key=lambda entry: entry["dev_accuracy"])
        assert metrics["best_epoch"] == best["epoch"] and metrics["dev"]["accuracy"] == pytest.approx(best["dev_accuracy"])

        model = SequenceTagger.load(run_dir / "model.pt")
        assert model.tag_type == "xpos" and not model.predict_spans
        sentences = [Sentence(words) for words in tokens[:30]]
        model.predict(sentences, mini_batch_size=8)
        assert [[token.get_label("xpos").value for token in sentence] for sentence in sentences] == predicted[:30]


def test_own_pos_corpus_beside_an_ner_corpus_in_one_table_and_predict_refuses_markup(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    corpus_folder(tmp_path / "data" / "tags", POS_TRAIN, POS_DEV, POS_TEST)
    corpus_folder(tmp_path / "data" / "names", NER_TRAIN, NER_DEV, NER_TEST)
    path = write_file(tmp_path / "mixed.yaml", """\
name: mixed
corpora: [{path: data/tags/, task: pos}, {path: data/names/}]
embeddings: {char: [char]}
taggers: [map-crf]
seeds: [1, 2]
train: {max_epochs: 3}
""")
    result = run("tag", str(path), "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "## mixed: test F1 (NER), accuracy (PoS) (%), mean ± std over seeds (n)" in result.output
    assert re.search(r"^\| embeddings \| tagger \| names \| tags \[accuracy\] \|$", result.output, re.M), result.output
    assert re.search(r"^\| char \| map-crf \| (\*\*)?\d+\.\d\d ± \d+\.\d\d \(2\)(\*\*)? \| (\*\*)?\d+\.\d\d ± \d+\.\d\d \(2\)(\*\*)? \|$",
                     result.output, re.M), result.output
    pos_run = home / "results" / "mixed" / "tags" / "char" / "map-crf" / "seed-1"
    pos = json.loads((pos_run / "metrics.json").read_text())
    ner = json.loads((home / "results" / "mixed" / "names" / "char" / "map-crf" / "seed-1" / "metrics.json").read_text())
    assert pos["task"] == "pos" and pos["corpus_files"]["task"] == "pos"
    assert pos["corpus_files"]["labels"] == ["ADP", "DET", "NOUN", "PROPN", "PUNCT", "VERB"]
    assert ner["task"] == "ner" and "task" not in ner["corpus_files"] and "f1" in ner["test"]
    assert pos["test"]["per_type"].keys() == {"PROPN", "VERB", "DET", "NOUN", "PUNCT"}

    # the F1-only table leaves the PoS column blank; the accuracy-only one the NER column; per-tag tables name tags
    f1 = run("results", str(home / "results" / "mixed"), "--metric", "f1")
    assert re.search(r"^\| char \| map-crf \| (\*\*)?\d+\.\d\d ± \d+\.\d\d \(2\)(\*\*)? \|  \|$", f1.output, re.M), f1.output
    per_tag = run("results", str(home / "results" / "mixed"), "--per-type")
    assert "## mixed: tags, test accuracy per tag (%), mean over seeds" in per_tag.output
    assert "## mixed: names, test F1 per entity type (%), mean over seeds" in per_tag.output

    text = write_file(tmp_path / "letter.txt", "Anna schreibt einen Brief.")
    column = run("predict", str(pos_run / "model.pt"), str(text))
    assert column.exit_code == 0 and re.search(r"^Brief\t(ADP|DET|NOUN|PROPN|PUNCT|VERB)$", column.output, re.M), column.output
    assert one_error_line(run("predict", str(pos_run / "model.pt"), str(text), "--format", "tei")) == (
        f"Error: {pos_run / 'model.pt'}: --format tei and html mark entity spans, and this model tags one 'pos' label per token (not spans): "
        "use --format column or json"
    )
    assert one_error_line(run("predict", str(pos_run / "model.pt"), str(text), "--entity-fix")) == (
        f"Error: {pos_run / 'model.pt'}: --entity-fix repairs BIO entity tags, and this model tags one 'pos' label per token (not spans): "
        "leave --entity-fix out"
    )


def test_pos_corpus_stats_and_bad_pos_entries(tmp_path):
    root = corpus_folder(tmp_path / "tags", POS_TRAIN, POS_DEV, POS_TEST)
    stats = run("corpora", "stats", str(root), "--option", "task=pos")
    assert stats.exit_code == 0, stats.output
    assert "task: pos, one tag per token; tags: ADP DET NOUN PROPN PUNCT VERB" in stats.output
    assert one_error_line(run("corpora", "stats", str(root), "--option", "task=pos", "--option", "scheme=bio")) == (
        "Error: tags: scheme: applies to task ner only (task pos reads every tag as it is)"
    )
    assert one_error_line(run("corpora", "stats", str(root), "--option", "task=chunks")) == (
        "Error: tags: task: \"chunks\" is not one of ner, pos"
    )
    write_file(root / "test.tsv", "Otto\tPROPN\nliest\n")
    assert one_error_line(run("corpora", "stats", str(root), "--option", "task=pos")).startswith(f"Error: {root / 'test.tsv'}:2: ")


def test_collector_checks_pos_metrics_by_their_own_schema(tmp_path):
    metrics = {
        "experiment": "e", "run": "tags/char/map/seed-1", "task": "pos", "corpus": "tags", "corpus_options": {}, "corpus_label": "tags",
        "subsample": None, "embeddings": "char", "embedding_specs": ["char"], "tagger": "map", "seed": 1, "entity_fix": False, "train": {},
        "versions": {}, "dev": {"accuracy": 0.9, "per_type": {"NOUN": {"accuracy": 0.9, "support": 10}}},
        "test": {"accuracy": 0.8, "per_type": {"NOUN": {"accuracy": 0.8, "support": 10}}}, "epochs": 1, "seconds": 1.0,
    }
    path = write_file(tmp_path / "metrics.json", json.dumps(metrics))
    assert read_run(path).metrics["test"]["accuracy"] == 0.8
    broken = {**metrics, "test": {"f1": 0.8, "per_type": {}}}
    write_file(path, json.dumps(broken))
    with pytest.raises(Exception, match=r"metrics.json: missing key 'test.accuracy'"):
        read_run(path)
    write_file(path, json.dumps({**metrics, "task": "chunks"}))
    with pytest.raises(Exception, match=r"task must be one of: ner, pos \(found \"chunks\"\)"):
        read_run(path)
