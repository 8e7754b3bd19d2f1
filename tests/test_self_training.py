"""Self-training (`self_training:`): the block, the confidence pseudo-labels are kept by, the held-back pool, raw text as a
pool, and `flairsuite tag`'s studies on a tiny own corpus with the committed quickstart word vectors: what each round
trains on, records, a study stopped after round 1 resumed to the uninterrupted result, the refusal of a changed block,
and the table."""

import json
import math
from pathlib import Path

import pytest
from conftest import LETTERS_DEV, LETTERS_TEST, LETTERS_TRAIN, REPO, invoke, one_error_line, tagged_conll, write_file
from flair.data import Sentence
from scipy import stats

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments import load_experiment, read_experiment
from flairsuite.experiments import self_training as module
from flairsuite.experiments.pseudo_labels import confidence
from flairsuite.experiments.self_training import Study, run_self_training
from flairsuite.experiments.self_training_pool import held_back
from flairsuite.experiments.self_training_text import text_split
from flairsuite.experiments.simulation import subset
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.models.uncertainty import Scores
from flairsuite.results.metrics_file import read_run
from flairsuite.results.predictions import read_prediction_sentences
from flairsuite.results.self_training_report import is_self_training, self_training_report
from flairsuite.tagging.scoring import strict_scores
from flairsuite.tagging.tagger_training import decode

TRAIN = [*LETTERS_TRAIN, "Am Sonntag/B-date fuhr Otto/B-pers nach Köln/B-place .", "Anna/B-pers blieb in Hamburg/B-place ."]
TEXT = ("Am Dienstag kam Marie nach Wien. Otto schrieb aus Berlin.\n\nLieber Otto, herzlichen Dank!\n"
        "Am Freitag reiste Karl nach Mün-\nchen. Die Ausstellung ist geschlossen.\n")


@pytest.fixture(autouse=True)
def committed_vectors(monkeypatch) -> None:
    """The clone's models (`fasttext:de-quickstart`, 5 MB) are found beside the test's own home."""
    monkeypatch.setenv("FLAIRSUITE_MODELS", str(REPO))


def experiment_file(folder: Path, block: str, taggers: str = "[map-crf]", stack: str = "[fasttext:de-quickstart]", name: str = "st") -> Path:
    write_file(folder / "data" / "train.conll", tagged_conll(TRAIN * 2))
    write_file(folder / "data" / "dev.conll", tagged_conll(LETTERS_DEV))
    write_file(folder / "data" / "test.conll", tagged_conll(LETTERS_TEST))
    return write_file(folder / f"{name}.yaml", f"name: {name}\ncorpora: [{{name: letters, path: data/}}]\nembeddings: {{words: {stack}}}\n"
                                               f"taggers: {taggers}\nseeds: [1]\ntrain: {{max_epochs: 2, mini_batch_size: 4}}\n"
                                               f"self_training: {block}\n")


def test_block_is_validated(tmp_path):
    write_file(tmp_path / "texts" / "a.txt", TEXT)
    config = load_experiment(experiment_file(tmp_path, "{hold_back: 0.5, thresholds: [0.9, 0.99], rounds: 2}")).self_training
    assert (config.hold_back, config.thresholds, config.rounds, config.mode) == (0.5, (0.9, 0.99), 2, "hold_back")
    config = load_experiment(experiment_file(tmp_path, "{text: texts/, thresholds: [0.9], rounds: 1}")).self_training
    assert config.texts == ((tmp_path / "texts" / "a.txt").resolve(),) and config.mode == "text" and config.max_sentences is None
    assert load_experiment(experiment_file(tmp_path, "{text: texts/, max_sentences: 50, thresholds: [0.9], rounds: 1}")).self_training.max_sentences == 50
    for block, taggers, stack, message in [
        ("{hold_back: 0.5, text: texts/, thresholds: [0.9], rounds: 1}", "[map-crf]", None, "give exactly one of text"),
        ("{thresholds: [0.9], rounds: 1}", "[map-crf]", None, "give exactly one of text"),
        ("{hold_back: 0.5, thresholds: [1.5], rounds: 1}", "[map-crf]", None, r"self_training.thresholds must be a non-empty list of confidences"),
        ("{hold_back: 0.5, thresholds: [], rounds: 1}", "[map-crf]", None, r"self_training.thresholds must be"),
        ("{hold_back: 0.5, thresholds: [0.9, 0.9], rounds: 1}", "[map-crf]", None, r"self_training.thresholds: 0.9 is listed twice"),
        ("{hold_back: 0.5, thresholds: [0.9], rounds: 0}", "[map-crf]", None, r"self_training.rounds must be a positive integer"),
        ("{hold_back: 1, thresholds: [0.9], rounds: 1}", "[map-crf]", None, r"self_training.hold_back must be a share of train in \(0, 1\)"),
        ("{hold_back: 0.5, thresholds: [0.9], round: 1}", "[map-crf]", None, "self_training: unknown key 'round'"),
        ("{hold_back: 0.5, max_sentences: 50, thresholds: [0.9], rounds: 1}", "[map-crf]", None, "self_training.max_sentences caps the pool drawn from text"),
        ("{text: texts/, max_sentences: 0, thresholds: [0.9], rounds: 1}", "[map-crf]", None, "self_training.max_sentences must be a positive integer"),
        ("{hold_back: 0.5, thresholds: [0.9]}", "[map-crf]", None, "self_training: missing key 'rounds'"),
        ("{text: nothing.txt, thresholds: [0.9], rounds: 1}", "[map-crf]", None, "self_training.text: nothing.txt is not a file or folder"),
        ("{hold_back: 0.5, thresholds: [0.9], rounds: 1}", "[cse]", None, "tagger cse gives no probability of its tag sequence"),
        ("{hold_back: 0.5, thresholds: [0.9], rounds: 1}", "[map-crf]", "[char]", "stack words: char trains with the tagger"),
        ("[0.9]", "[map-crf]", None, "self_training must be a mapping"),
    ]:
        with pytest.raises(FlairsuiteError, match=message) as error:
            load_experiment(experiment_file(tmp_path, block, taggers, stack or "[fasttext:de-quickstart]"))
        assert str(error.value).startswith(str(tmp_path / "st.yaml")) and "\n" not in str(error.value)


def test_confidence_is_the_decoded_sequence_probability_per_token():
    crf = Scores([("O", 0.9), ("B-x", 0.8)], 2, math.log(0.49), 0.3)  # p(y*|x) = 0.49 under the CRF
    assert confidence(crf) == pytest.approx(0.7)
    softmax = Scores([("O", 0.9), ("B-x", 0.4)], 2, None, 0.3)  # a softmax head: the chosen tags' probabilities multiply
    assert confidence(softmax) == pytest.approx(math.sqrt(0.36))


def test_hold_back_hides_the_stated_share():
    chosen = held_back(20, 0.5, 1)
    assert len(chosen) == 10 == len(set(chosen)) and chosen == sorted(chosen) and all(0 <= i < 20 for i in chosen)
    assert held_back(20, 0.5, 1) == chosen and held_back(20, 0.5, 2) != chosen and len(held_back(20, 0.3, 1)) == 6
    with pytest.raises(FlairsuiteError, match="self_training.hold_back 0.01 of 20 train sentences leaves no pool"):
        held_back(20, 0.01, 1)


def test_text_is_read_as_predict_reads_it(tmp_path):
    first, second = write_file(tmp_path / "a.txt", TEXT), write_file(tmp_path / "b.txt", "Karl blieb in Wien.\n")
    split, left_out, found = text_split([first, second], "words", None, [("Lieber", "Otto", ",", "herzlichen", "Dank", "!")])
    assert left_out == 1  # the dev sentence
    assert [" ".join(tokens) for tokens in split.texts] == [
        "Am Dienstag kam Marie nach Wien .", "Otto schrieb aus Berlin .", "Am Freitag reiste Karl nach München .",
        "Die Ausstellung ist geschlossen .", "Karl blieb in Wien ."]  # Mün-/chen joined across the line end
    assert all(set(tags) == {"O"} for tags in split.tags) and split.starts == frozenset({4})  # each file a document
    assert [bool(b) for b in split.spaces[0]] == [True, True, True, True, True, False, False]
    assert found == 5
    capped, _, found = text_split([first, second], "words", None, [], max_sentences=3)  # a draw of 3 of the 6, in text order
    assert found == 6 and len(capped.texts) == 3 and capped.texts == [t for t in split_all(first, second) if t in capped.texts]
    assert text_split([first, second], "words", None, [], max_sentences=3)[0].texts == capped.texts  # the same draw every time
    assert text_split([first, second], "words", None, [], max_sentences=6)[0].texts == split_all(first, second)


def split_all(*paths: Path) -> list[tuple[str, ...]]:
    return text_split(list(paths), "words", None, [])[0].texts


def files(out: Path) -> dict[str, object]:
    """Every record of a self-training folder without timings."""
    return {str(path.relative_to(out)): {k: v for k, v in json.loads(path.read_text()).items() if k not in ("seconds", "config")}
            for path in sorted(out.rglob("*.json"))}


def run(path: Path, home: Path, corpora: Path, force: bool = False) -> Path:
    return run_self_training(read_experiment(path), home, corpora, force, echo=lambda line: None)


def test_hold_back_study_trains_on_pseudo_labels_only_and_resumes(tmp_path, monkeypatch):
    block = "{hold_back: 0.5, thresholds: [0.0, 0.6, 0.999], rounds: 2}"
    path = experiment_file(tmp_path, block)
    trained: list[tuple[object, object]] = []  # (training features, model) of every round, in order
    original = Study.train

    def recording(self, train, folder, desc, key):
        model, progress = original(self, train, folder, desc, key)
        trained.append((train, model))
        return model, progress

    monkeypatch.setattr(Study, "train", recording)
    clean_home = tmp_path / "clean"
    out = run(path, clean_home, tmp_path)
    study = out / "letters" / "words" / "map-crf" / "seed-1"
    pool = json.loads((study / "pool.json").read_text())
    held = pool["held_back"]
    assert len(held) == 10 == pool["pool"] and pool["labelled"] == 10 and pool["mode"] == "hold_back"  # exactly half of 20

    gold = tagged_conll(TRAIN * 2).strip().split("\n\n")
    gold_tags = [[line.split()[1] for line in sentence.split("\n")] for sentence in gold]
    labelled = [i for i in range(20) if i not in held]
    rounds = [(t, r) for t in ("0", "0.6", "0.999") for r in (1, 2)]
    records = {(t, r): json.loads((study / f"threshold-{t}" / f"round-{r:02d}.json").read_text()) for t, r in rounds}
    zero = json.loads((study / "round-00.json").read_text())
    retrained = [key for key in rounds if records[key]["kept"]]
    assert len(trained) == 1 + len(retrained)  # a round that keeps nothing is round 0 again: not trained twice
    for key in rounds:
        if not records[key]["kept"]:
            assert (records[key]["same_as"], records[key]["dev"], records[key]["test"]) == ("round 0 (no pool sentence kept)", zero["dev"], zero["test"])
    for train, _ in trained:  # the labelled part, with gold tags; then kept pool sentences, never with their gold tags
        assert train.split.tags[:10] == [gold_tags[i] for i in labelled]
    round_zero_model = trained[0][1]
    labels = json.loads((study / "labels-00.json").read_text())
    assert labels["floor"] == 0.0 and len(labels["confidences"]) == 10 and len(labels["tags"]) == 10

    kept_first = {}
    for threshold in ("0", "0.6", "0.999"):
        first = json.loads((study / f"threshold-{threshold}" / "round-01.json").read_text())
        kept_first[threshold] = first["kept"]
        assert first["kept"] == sum(c >= float(threshold) for c in labels["confidences"])
        assert first["pseudo"] is None or 0 <= first["pseudo"] <= 1
        assert (study / f"threshold-{threshold}" / "round-02.json").is_file() and (study / f"threshold-{threshold}" / "labels-01.json").is_file()
        assert not (study / f"threshold-{threshold}" / "labels-02.json").exists()  # the last round tags nothing
    assert kept_first["0"] == 10 >= kept_first["0.6"] >= kept_first["0.999"]  # a higher threshold keeps no more

    # every later round: the labelled part, then the kept pool sentences under the pseudo-labels of the round before
    gold_texts = [tuple(line.split()[0] for line in sentence.split("\n")) for sentence in gold]
    for (train, _), (threshold, index) in zip(trained[1:], retrained, strict=True):
        before = study / "labels-00.json" if index == 1 else study / f"threshold-{threshold}" / f"labels-{index - 1:02d}.json"
        source = json.loads(before.read_text())
        kept = [i for i, c in enumerate(source["confidences"]) if c >= float(threshold)]
        assert len(train) == 10 + len(kept)
        assert train.split.texts[10:] == [gold_texts[held[i]] for i in kept]
        assert train.split.tags[10:] == [source["tags"][str(i)] for i in kept]

    # the pseudo-labels are round 0's own predictions on the pool (round 1 at threshold 0 holds the whole pool)
    pool_only = subset(trained[1][0], list(range(10, 20)))
    assert decode(round_zero_model, pool_only) == [labels["tags"][str(i)] for i in range(10)]

    # the study keeps its best round on dev (the earliest trained on a tie) as model.pt, a tagger that predicts as it did
    order = [((None, 0), zero)] + [((float(t), r), records[(t, r)]) for t, r in rounds]
    best = max(range(len(order)), key=lambda i: (order[i][1]["dev"], -i))
    chosen = json.loads((study / "model.json").read_text())
    (threshold, index), record = order[best]
    assert chosen["round"] == ("round-0" if index == 0 else f"threshold-{threshold:g}-round-{index}")
    assert (chosen["dev"]["f1"], chosen["test"]["f1"]) == (record["dev"], record["test"])
    assert read_run(study / "model.json").metrics["epochs"] == record["epochs"] and chosen["self_training"]["kept"] == record["kept"]
    test_tokens = read_prediction_sentences(study / "predictions.tsv")  # the kept model's test tags, as a grid run writes them
    assert strict_scores([[t.gold for t in s] for s in test_tokens], [[t.predicted for t in s] for s in test_tokens]) == chosen["test"]
    models = {(None, 0): round_zero_model, **{(float(t), r): m for (t, r), (_, m) in zip(retrained, trained[1:], strict=True)}}
    texts = ["Am Dienstag kam Marie nach Wien .", "Otto schrieb aus Berlin .", "Anna blieb in Hamburg ."]
    saved, ours = [Sentence(text) for text in texts], [Sentence(text) for text in texts]
    load_tagger(study / "model.pt").predict(saved)
    models[(threshold, index)].predict(ours)
    assert [s.to_tagged_string() for s in saved] == [s.to_tagged_string() for s in ours]

    # a study stopped right after round 1 of its first threshold continues to the same records
    monkeypatch.setattr(Study, "train", original)
    killed_home = tmp_path / "killed"

    def stop_after_round_one(line: str) -> None:
        if "round 1" in line:
            raise KeyboardInterrupt

    monkeypatch.setattr(module, "log", stop_after_round_one)
    with pytest.raises(KeyboardInterrupt):
        run(path, killed_home, tmp_path)
    stopped = killed_home / "results" / "st" / "letters" / "words" / "map-crf" / "seed-1"
    assert sorted(p.relative_to(stopped).as_posix() for p in stopped.rglob("round-*.json")) == ["round-00.json", "threshold-0/round-01.json"]
    monkeypatch.setattr(module, "log", lambda line: None)
    resumed = run(path, killed_home, tmp_path)
    assert files(resumed) == files(out)

    # a changed block under the same name is refused without --force
    experiment_file(tmp_path, "{hold_back: 0.5, thresholds: [0.6], rounds: 2}")
    with pytest.raises(FlairsuiteError, match="holds self-training of a different 'st' config: pass --force"):
        run(path, killed_home, tmp_path)
    forced = run(path, killed_home, tmp_path, force=True)  # --force starts the studies over
    assert sorted(p.relative_to(forced).parent.as_posix() for p in forced.rglob("round-*.json")) == [
        "letters/words/map-crf/seed-1", "letters/words/map-crf/seed-1/threshold-0.6", "letters/words/map-crf/seed-1/threshold-0.6"]

    # the table: round 0 and every threshold x round, chosen on dev
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLAIRSUITE_HOME", str(clean_home))
    result = invoke("results", str(out))
    assert result.exit_code == 0, result.output
    table = result.output
    assert "## letters / words / map-crf: self-training" in table and "Chosen on dev (bold)" in table
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| threshold")]
    assert [row.split(" | ")[:2] for row in rows] == [["| –", "0"], ["| 0", "1"], ["| 0", "2"], ["| 0.6", "1"], ["| 0.6", "2"],
                                                      ["| 0.999", "1"], ["| 0.999", "2"]]
    assert "pseudo-label F1" in table and table.count("**") == 2
    assert "Error: " in one_error_line(invoke("results", str(out), "--format", "csv"))


def test_text_study_embeds_the_text_through_the_cache(tmp_path, monkeypatch):
    write_file(tmp_path / "texts" / "letters.txt", TEXT)
    path = experiment_file(tmp_path, "{text: texts/letters.txt, thresholds: [0.0], rounds: 1}", name="st-text")
    home = tmp_path / "home"
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    result = invoke("tag", str(path), "--corpora-dir", str(tmp_path), "--threads", "1")  # the command picks the studies
    assert result.exit_code == 0, result.output
    assert "## letters / words / map-crf: self-training" in result.output and "| 0 | 1 | 4 | 100 % |" in result.output
    out = home / "results" / "st-text"
    assert is_self_training(out)
    study = out / "letters" / "words" / "map-crf" / "seed-1"
    pool = json.loads((study / "pool.json").read_text())
    assert (pool["mode"], pool["labelled"], pool["pool"], pool["left_out_dev_test"]) == ("text", 20, 4, 1)
    first = json.loads((study / "threshold-0" / "round-01.json").read_text())
    assert first["kept"] == 4 and first["pseudo"] is None and first["labelled"] == 20
    arrays = sorted((home / "cache" / "embeddings").rglob("*.npy"))
    assert len(arrays) == 4  # train, dev, test and the text, each once
    again = run(path, home, tmp_path)  # finished: nothing is trained or embedded again
    assert files(again) == files(out) and sorted((home / "cache" / "embeddings").rglob("*.npy")) == arrays


def write_round(study: Path, seed: int, index: int, dev: float, seconds: float, threshold: float | None = None, threads: int | None = 2) -> None:
    folder = study / f"seed-{seed}" if threshold is None else study / f"seed-{seed}" / f"threshold-{threshold:g}"
    record = {"corpus": "letters", "stack": "words", "tagger": "map-crf", "seed": seed, "round": index, "labelled": 10, "pool": 10,
              "kept": 0 if threshold is None else 8, "dev": dev, "test": 0.5, "seconds": seconds}
    if threshold is not None:
        record["threshold"] = threshold
    if threads is not None:
        record["threads"] = threads
    write_file(folder / f"round-{index:02d}.json", json.dumps(record))


def test_table_gives_each_round_its_paired_dev_interval_and_its_cost_so_far(tmp_path):
    study = tmp_path / "st" / "letters" / "words" / "map-crf"
    zero_dev, later_dev = [0.80, 0.70, 0.75], [0.82, 0.73, 0.76]  # per-seed gains 2, 3, 1 points
    for seed, (zero, later) in enumerate(zip(zero_dev, later_dev), 1):
        write_round(study, seed, 0, zero, seconds=60.0 * seed)
        write_round(study, seed, 1, later - 0.01, seconds=120.0, threshold=0.9)
        write_round(study, seed, 2, later, seconds=180.0, threshold=0.9)
    table = self_training_report(tmp_path / "st")
    header = next(line for line in table.splitlines() if line.startswith("| threshold"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns[-1] == "core-min up to this round" and "Δ dev [90 % interval]" in columns
    rows = {tuple(cell.strip() for cell in line.strip("|").split("|"))[:2]: [cell.strip() for cell in line.strip("|").split("|")]
            for line in table.splitlines() if line.startswith("| ") and not line.startswith("| threshold")}
    half = stats.t.ppf(0.95, 2) * 1.0 / math.sqrt(3)  # differences 2, 3, 1: mean 2, sd 1
    delta = columns.index("Δ dev [90 % interval]")
    assert rows[("0.9", "2")][delta] == f"+2.00 [{2 - half:+.2f}, {2 + half:+.2f}]"
    assert rows[("–", "0")][delta] == "–"
    # round 0: 1, 2, 3 minutes on 2 threads (4 core-min on average); round 2 adds rounds 1 and 2 (2 + 3 minutes, 2 threads)
    assert rows[("–", "0")][-1] == "4.0" and rows[("0.9", "1")][-1] == "8.0" and rows[("0.9", "2")][-1] == "14.0"

    # rounds from before the threads were recorded: wall minutes, and the header says so
    write_round(study, 1, 0, 0.80, seconds=60.0, threads=None)
    table = self_training_report(tmp_path / "st")
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| threshold")]
    assert "wall-min up to this round (threads not recorded)" in table
    assert rows[0].endswith("| 2.0 |") and rows[-1].endswith("| 7.0 |")  # 1, 2, 3 minutes; then + 2 + 3 minutes
