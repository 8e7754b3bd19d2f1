"""`flairsuite train-fasttext --init`: tiny vectors trained with their full model, continued on a new text (gensim's
vocabulary update), with --exclude cutting an own corpus's dev sentence out; `--no-model` and its one-line error."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import german_text, invoke, one_error_line, write_file
from gensim.models import FastText, KeyedVectors

TINY = ["--dim", "16", "--epochs", "2", "--min-count", "1", "--buckets", "1000", "--heldout-fraction", "0.1", "--threads", "1"]
LETTER = "Die Gräfin schrieb aus Lübeck an ihren Bruder Heinrich ."
DEV_ONLY = "Wittenberg"  # only in the own corpus's dev sentence, which is in the new text once
DEV = f"Der Kanzler reiste nach {DEV_ONLY} ."
PLAIN_FLAIR = """
import json, sys
from flair.data import Sentence
from flair.embeddings import WordEmbeddings
embeddings = WordEmbeddings(sys.argv[1])
sentence = Sentence("Die Gräfin schrieb dem König".split())
embeddings.embed(sentence)
print(json.dumps({"flairsuite": "flairsuite" in sys.modules, "norms": {t.text: t.embedding.norm().item() for t in sentence}}))
"""


def new_text(lines: int = 200) -> str:
    """Letters: new words (Gräfin, Lübeck, Bruder, ...) beside words of `german_text` (König, Stadt, Berlin)."""
    rows = [f"{LETTER} Der König sah die Stadt Berlin am Montag ." if i % 2 else LETTER for i in range(lines)]
    rows[7] = f"{rows[7]} {DEV}"
    rows[20] = f"{rows[20]} Der Kanzler schwieg ."
    return "\n".join(rows) + "\n"


@pytest.fixture(scope="module")
def continued(tmp_path_factory):
    """Home with tiny vectors `de` (full model kept) and `letters` continued from them; the own corpus folder."""
    root = tmp_path_factory.mktemp("fasttext-init")
    home = root / "home"
    own = root / "letters"
    for split, sentence in (("train", "Hallo Welt ."), ("dev", DEV), ("test", "Ganz andere Worte .")):
        tags = [f"{token} {'B-LOC' if token in ('Welt', DEV_ONLY, 'Worte') else 'O'}" for token in sentence.split()]
        write_file(own / f"{split}.conll", "\n".join(tags) + "\n\n")
    base = write_file(root / "corpus.txt", german_text())
    text = write_file(root / "letters.txt", new_text())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLAIRSUITE_HOME", str(home))
        first = invoke("train-fasttext", "--lang", "de", "--corpus", str(base), "--corpora-dir", str(root / "none"), *TINY)
        assert first.exit_code == 0, first.output
        second = invoke(
            "train-fasttext", "--init", "de", "--corpus", str(text), "--name", "letters", "--exclude", str(own),
            "--epochs", "1", "--heldout-fraction", "0.1", "--threads", "1", "--corpora-dir", str(root / "none"),
        )
        assert second.exit_code == 0, second.output
    return root, home, second.output


def folder(home, name):
    return home / "wordvectors" / f"{name}-fasttext"


def test_train_fasttext_keeps_the_full_model(continued):
    _, home, _ = continued
    summary = json.loads((folder(home, "de") / "summary.json").read_text(encoding="utf-8"))
    model = FastText.load(str(folder(home, "de") / "model" / "fasttext.model"))
    assert model.wv.vectors_ngrams.shape == (1000, 16) and model.syn1neg.shape == (len(model.wv), 16)
    assert summary["model_kept"] and summary["model_bytes"] > 1000 * 16 * 4
    assert np.allclose(KeyedVectors.load(str(folder(home, "de") / "vectors.kv"))["König"], model.wv["König"])


def test_init_adds_the_new_words_and_keeps_the_old_vectors_close(continued):
    root, home, output = continued
    initial = FastText.load(str(folder(home, "de") / "model" / "fasttext.model")).wv
    model = FastText.load(str(folder(home, "letters") / "model" / "fasttext.model")).wv
    new_words = {"Gräfin", "Lübeck", "Bruder", "Heinrich", "schrieb", "Kanzler"}
    assert not new_words & set(initial.key_to_index) and new_words <= set(model.key_to_index)
    assert set(initial.index_to_key) <= set(model.index_to_key) and model.index_to_key[: len(initial)] == initial.index_to_key
    summary = json.loads((folder(home, "letters") / "summary.json").read_text(encoding="utf-8"))
    init = summary["init"]
    assert init["words_added"] == len(model) - len(initial) >= len(new_words)
    assert init["initial_vocabulary"] == len(initial) and summary["vocabulary"] == len(model)
    assert f"{init['words_added']:,} words of the new text added to its {len(initial):,}" in output

    # gensim's update keeps the initial rows: a word the new text lacks keeps its own row bit for bit (only its shared
    # n-grams move), a word of both texts is trained further from it; the new words get rows of their own
    in_text = set(new_text().split())
    absent = [word for word in initial.index_to_key if word not in in_text]
    present = [word for word in initial.index_to_key if word in in_text]
    assert len(absent) > 10 and {"König", "Stadt", "Berlin", "Montag"} <= set(present)
    for word in absent:
        assert np.array_equal(initial.vectors_vocab[initial.key_to_index[word]], model.vectors_vocab[model.key_to_index[word]]), word
    for word in present:
        assert not np.allclose(initial.vectors_vocab[initial.key_to_index[word]], model.vectors_vocab[model.key_to_index[word]]), word
    assert np.linalg.norm(model["Gräfin"]) > 0
    saved = KeyedVectors.load(str(folder(home, "letters") / "vectors.kv"))
    assert np.allclose(saved["Gräfin"], model["Gräfin"]) and len(saved) >= len(model)


def test_init_records_the_initial_digest_the_text_and_its_settings(continued):
    from flairsuite.embeddings import artifact_digest

    root, home, _ = continued
    summary = json.loads((folder(home, "letters") / "summary.json").read_text(encoding="utf-8"))
    init = summary["init"]
    assert init["sha256"] == artifact_digest("fasttext:de", home)  # as the runs on fasttext:de record it
    assert init["vectors"] == str(folder(home, "de")) and list(init["texts"]) == [str(root / "letters.txt")]
    assert summary["config"] == {"dim": 16, "epochs": 1, "min_count": 1, "threads": 1, "buckets": 1000, "window": 5, "seed": 1}
    assert summary["language"] == "de" and summary["model_kept"]


def test_exclude_cuts_an_own_corpus_dev_sentence_out_of_the_new_text(continued):
    _, home, _ = continued
    model = FastText.load(str(folder(home, "letters") / "model" / "fasttext.model")).wv
    summary = json.loads((folder(home, "letters") / "summary.json").read_text(encoding="utf-8"))
    assert DEV_ONLY not in model.key_to_index and "Kanzler" in model.key_to_index  # "Kanzler" occurs outside the cut sentence too
    assert sum(source["sentences_removed"] for source in summary["corpus"]["sources"].values()) == 1


def test_continued_vectors_load_in_plain_flair(continued):
    _, home, _ = continued
    completed = subprocess.run(
        [sys.executable, "-c", PLAIN_FLAIR, str(folder(home, "letters") / "vectors.kv")], capture_output=True, text=True, check=True
    )
    loaded = json.loads(completed.stdout.strip().splitlines()[-1])
    assert not loaded["flairsuite"] and loaded["norms"]["Gräfin"] > 0 and loaded["norms"]["König"] > 0


def test_init_refuses_other_arrays_and_its_own_folder(continued, monkeypatch):
    root, home, _ = continued
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    args = ["train-fasttext", "--init", "de", "--corpus", str(root / "letters.txt"), "--threads", "1"]
    model = folder(home, "de") / "model" / "fasttext.model"
    assert one_error_line(invoke(*args, "--name", "other", "--dim", "32", "--corpora-dir", str(root / "none"))) == (
        f"Error: --init de: {model} has dim 16; a continued model keeps them (leave those options out)"
    )
    assert one_error_line(invoke(*args, "--name", "de")) == (
        f"Error: --name de: {folder(home, 'de')} holds the --init vectors; give the continued vectors a name of their own"
    )
    assert one_error_line(invoke(*args[:-2])) == "Error: --init de needs --name: the continued vectors' folder prefix (wordvectors/NAME-fasttext)"
    assert not folder(home, "other").exists()


def test_no_model_skips_it_and_init_then_fails_in_one_line(tmp_path):
    """The installed command in a subprocess: --no-model writes no model/; --init on such vectors: one error line, exit 1."""
    env = {**os.environ, "FLAIRSUITE_HOME": str(tmp_path / "home")}
    base = write_file(tmp_path / "corpus.txt", german_text(100))
    common = ["--corpora-dir", str(tmp_path / "none")]
    trained = subprocess.run(
        ["flairsuite", "train-fasttext", "--lang", "de", "--corpus", str(base), "--no-model", *TINY, *common],
        capture_output=True, text=True, env=env,
    )
    assert trained.returncode == 0, trained.stderr
    vectors = tmp_path / "home" / "wordvectors" / "de-fasttext"
    assert sorted(p.name for p in vectors.iterdir()) == ["summary.json", "vectors.kv"]
    summary = json.loads((vectors / "summary.json").read_text(encoding="utf-8"))
    assert summary["model_kept"] is False and summary["model_bytes"] == 0
    failed = subprocess.run(
        ["flairsuite", "train-fasttext", "--init", "de", "--corpus", str(base), "--name", "again", *common],
        capture_output=True, text=True, env=env,
    )
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.strip().splitlines() == [
        f"Error: --init de: {vectors} was trained without its full model (model/ is missing); "
        "train it again with `flairsuite train-fasttext` (without --no-model) to continue it"
    ]


def test_init_names_vectors_by_name_or_folder(continued, tmp_path):
    from flairsuite.errors import FlairsuiteError
    from flairsuite.wordvectors.initial import initial_vectors

    _, home, _ = continued
    by_name = initial_vectors("de", (home / "wordvectors",))
    by_folder = initial_vectors(str(folder(home, "de")), ())
    assert by_name == by_folder and by_name.model_path == folder(home, "de") / "model" / "fasttext.model"
    with pytest.raises(FlairsuiteError) as raised:
        initial_vectors("nowhere", (tmp_path,))
    assert str(raised.value) == f"--init nowhere: no vectors folder nowhere nor {tmp_path / 'nowhere-fasttext'} holds vectors.kv"
