"""Accuracy on test tokens seen and unseen in train, and outside the vectors' own vocabulary (results/unseen_token_accuracy.py), on a
tiny UD treebank, hand-made predictions and saved vectors, each count worked out by hand."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gensim.models.keyedvectors import KeyedVectors

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.results.predictions import read_prediction_sentences
from flairsuite.results.unseen_token_accuracy import group_counts, own_vocabulary, unseen_frame, unseen_table
from flairsuite.wordvectors.store import VECTORS_FILE

TRAIN = [("The", "DET"), ("dog", "NOUN"), ("barks", "VERB"), (".", "PUNCT")]


def conllu(rows: list[tuple[str, str]]) -> str:
    return "".join(f"{i}\t{w}\t_\t{tag}\tXX\t_\t0\tdep\t_\t_\n" for i, (w, tag) in enumerate(rows, 1)) + "\n"


def treebank(root: Path) -> Path:
    folder = root / "ud_english_ewt"
    folder.mkdir(parents=True)
    (folder / "en_ewt-ud-train.conllu").write_text(conllu(TRAIN), encoding="utf-8")
    return root


def vectors(folder: Path, own: list[str], added: list[str]) -> Path:
    """A train-fasttext folder: `own` words trained, `added` appended after (as the subword repair does)."""
    folder.mkdir(parents=True)
    kv = KeyedVectors(4)
    kv.add_vectors(own + added, np.ones((len(own) + len(added), 4), dtype=np.float32))
    kv.save(str(folder / VECTORS_FILE))
    (folder / "summary.json").write_text(json.dumps({"vocabulary": len(own)}), encoding="utf-8")
    return folder


# Seen in train: The (right), dog (wrong); unseen: cat (right), Meows (wrong), miaow (right).
PREDICTIONS = "The\tDET\tDET\ndog\tNOUN\tVERB\n\ncat\tNOUN\tNOUN\nMeows\tVERB\tNOUN\nmiaow\tINTJ\tINTJ\n"


def test_groups_count_seen_unseen_and_vocabulary_as_flair_looks_up(tmp_path):
    path = tmp_path / "predictions.tsv"
    path.write_text(PREDICTIONS, encoding="utf-8")
    tokens = [t for s in read_prediction_sentences(path) for t in s]
    vocab = {"the": 0, "dog": 1, "meows": 2}  # Flair's lookup finds The and Meows lowercased; cat and miaow are outside
    counts = group_counts(tokens, {"The", "dog", "barks", "."}, vocab)
    assert counts == {"all": (3, 5), "seen in train": (1, 2), "unseen in train": (2, 3), "outside the vectors": (2, 2)}
    assert "outside the vectors" not in group_counts(tokens, set(), None)


def test_own_vocabulary_leaves_out_the_added_corpus_tokens(tmp_path):
    folder = vectors(tmp_path / "en-fasttext", ["the", "dog"], ["miaow"])
    assert own_vocabulary(folder) == {"the": 0, "dog": 1}
    (folder / "summary.json").write_text(json.dumps({"vocabulary": "many"}), encoding="utf-8")
    with pytest.raises(InputError, match="summary.json: vocabulary must be a positive integer"):
        own_vocabulary(folder)
    with pytest.raises(FlairsuiteError, match="not a train-fasttext folder"):
        own_vocabulary(tmp_path)
    (folder / "summary.json").write_text('{"vocabulary": 2,\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"summary.json:2: not valid JSON"):
        own_vocabulary(folder)
    (folder / "summary.json").write_text(json.dumps({"vocabulary": 2}), encoding="utf-8")
    (folder / VECTORS_FILE).write_bytes(b"not a pickle")
    with pytest.raises(FlairsuiteError, match="vectors.kv: not readable as gensim vectors"):
        own_vocabulary(folder)


def pos_run(tmp_path: Path, seed: int, predictions: str) -> dict:
    run_dir = tmp_path / "results" / "t" / f"seed-{seed}"
    run_dir.mkdir(parents=True)
    (run_dir / "predictions.tsv").write_text(predictions, encoding="utf-8")
    return {"task": "pos", "path": str(run_dir / "metrics.json"), "corpus": "ud-en-ewt", "corpus_options": {"tags": "upos"},
            "corpus_label": "ud-en-ewt", "embeddings": "classic", "tagger": "map", "seed": seed}


def test_frame_and_table_average_the_seeds_per_group(tmp_path):
    root = treebank(tmp_path / "corpora")
    all_right = PREDICTIONS.replace("VERB\n\n", "NOUN\n\n").replace("VERB\tNOUN", "VERB\tVERB")
    runs = pd.DataFrame([pos_run(tmp_path, 1, PREDICTIONS), pos_run(tmp_path, 2, all_right),
                         {"task": "ner", "path": str(tmp_path / "missing" / "metrics.json")}])
    frame = unseen_frame(runs, root, own_vocabulary(vectors(tmp_path / "vec", ["the", "dog", "meows"], ["cat", "miaow"])))
    assert list(frame["seed"]) == [1, 2] and list(frame["all"]) == [0.6, 1.0]
    assert list(frame["unseen in train tokens"]) == [3, 3]
    table = unseen_table(frame)
    assert "| all (5) | seen in train (40.0 %) | unseen in train (60.0 %) | outside the vectors (40.0 %) |" in table
    assert "| classic | map | 2 | 80.00 | 75.00 | 83.33 | 100.00 |" in table


def test_no_predictions_is_one_clear_error(tmp_path):
    runs = pd.DataFrame([{"task": "pos", "path": str(tmp_path / "gone" / "metrics.json"), "corpus": "ud-en-ewt", "corpus_options": {},
                          "corpus_label": "ud-en-ewt", "embeddings": "e", "tagger": "map", "seed": 1}])
    with pytest.raises(FlairsuiteError, match="no PoS run has a predictions.tsv"):
        unseen_frame(runs, tmp_path)


def test_a_line_without_three_fields_names_the_file_and_line(tmp_path):
    path = tmp_path / "predictions.tsv"
    path.write_text("The\tDET\tDET\ndog\tNOUN\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"predictions.tsv:2: expected token, gold tag and predicted tag"):
        read_prediction_sentences(path)
