"""`flairsuite train-fasttext` on a template corpus and a tiny Sturm folder: plain-Flair loading, OOV table, errors."""

import json
import re
import subprocess
import sys
from collections import Counter

import pytest
from click.testing import CliRunner
from conftest import german_text, write_file
from gensim.models import KeyedVectors

from flairsuite.cli import cli
from flairsuite.wordvectors import tokens
from flairsuite.wordvectors.coverage import covered, lookup_forms, oov_tokens
from flairsuite.wordvectors.tokens import TokenStream, tokenize

TINY = ["--dim", "16", "--epochs", "2", "--min-count", "1", "--buckets", "1000", "--heldout-fraction", "0.2", "--threads", "1"]
# "Der" is covered by its lowercased form, "Walden", "ist", "schön", "schrieb" are not in the text
STURM = {
    "train": "Der O\nKönig O\nbesuchte O\nWalden B-pers\n. O\n",
    "dev": "Berlin B-place\nist O\nschön O\n",
    "test": "Walden B-pers\nschrieb O\n",
}
PLAIN_FLAIR = """
import json, sys
from flair.data import Sentence
from flair.embeddings import WordEmbeddings
embeddings = WordEmbeddings(sys.argv[1])
sentence = Sentence("Der König traf Walden in Berlin".split())
embeddings.embed(sentence)
print(json.dumps({"flairsuite": "flairsuite" in sys.modules, "length": embeddings.embedding_length,
                  "norms": {t.text: t.embedding.norm().item() for t in sentence}, "sizes": [len(t.embedding) for t in sentence]}))
"""


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def error_line(result):
    """The `Error: ...` line that ends a failed command (progress bars may come before it)."""
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    return re.split(r"[\r\n]", result.output.rstrip())[-1]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Home folder, corpus file, corpora folder and the CLI result of one tiny training."""
    root = tmp_path_factory.mktemp("fasttext")
    corpus = write_file(root / "corpus.txt", german_text())
    for split, text in STURM.items():
        write_file(root / "corpora" / "sturm" / f"{split}_sturm.conll", text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLAIRSUITE_HOME", str(root / "home"))
        result = run("train-fasttext", "--lang", "de", "--corpus", str(corpus), "--corpora-dir", str(root / "corpora"), *TINY)
    assert result.exit_code == 0, result.output
    return root, result.stdout


def vectors_path(root):
    return root / "home" / "wordvectors" / "de-fasttext" / "vectors.kv"


def test_vectors_load_in_plain_flair_with_subword_tokens_added(trained):
    root, _ = trained
    completed = subprocess.run(
        [sys.executable, "-c", PLAIN_FLAIR, str(vectors_path(root))], capture_output=True, text=True, check=True
    )
    loaded = json.loads(completed.stdout.strip().splitlines()[-1])
    assert not loaded["flairsuite"]
    assert loaded["length"] == 16 and loaded["sizes"] == [16] * 6
    assert loaded["norms"]["Walden"] > 0  # OOV in the text, added from its n-grams
    assert loaded["norms"]["König"] > 0 and loaded["norms"]["Der"] > 0
    assert loaded["norms"]["traf"] == 0 and loaded["norms"]["in"] == 0  # in neither text nor corpora


def test_oov_table_and_summary(trained):
    root, output = trained
    summary = json.loads((vectors_path(root).parent / "summary.json").read_text(encoding="utf-8"))
    assert [(r["split"], r["tokens"], r["oov_before"], r["oov_after"]) for r in summary["coverage"]] == [
        ("train", 5, 1, 0),
        ("dev", 3, 2, 0),
        ("test", 2, 2, 0),
    ]
    assert summary["coverage"][1]["oov_before_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert summary["added_tokens"] == 4  # Walden, ist, schön, schrieb
    assert summary["vocabulary"] == len(set(tokenize(german_text())))
    assert "sturm         train" + " " * 11 + "5      20.00%      0.00%" in output
    assert "sturm         dev" + " " * 13 + "3      66.67%      0.00%" in output
    assert "  König: " in output and "vocabulary: 28 words (dim 16), 4 corpus tokens added" in output
    assert [p.name for p in vectors_path(root).parent.parent.iterdir()] == ["de-fasttext"]  # no temp folder left


def test_existing_vectors_need_force_and_are_replaced_whole(trained, monkeypatch):
    root, _ = trained
    monkeypatch.setenv("FLAIRSUITE_HOME", str(root / "home"))
    args = ["train-fasttext", "--lang", "de", "--corpus", str(root / "corpus.txt"), "--corpora-dir", str(root / "corpora"), *TINY]
    assert error_line(run(*args)) == f"Error: {vectors_path(root).parent} exists: pass --force to replace it"
    (vectors_path(root).parent / "stray.txt").write_text("left over", encoding="utf-8")
    assert run(*args, "--dim", "8", "--force").exit_code == 0  # TINY's dim is 16: the new vectors are another file
    assert sorted(p.name for p in vectors_path(root).parent.iterdir()) == ["model", "summary.json", "vectors.kv"]  # the folder is new
    assert KeyedVectors.load(str(vectors_path(root))).vector_size == 8
    assert json.loads((vectors_path(root).parent / "summary.json").read_text(encoding="utf-8"))["config"]["dim"] == 8
    assert [p.name for p in vectors_path(root).parent.parent.iterdir()] == ["de-fasttext"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the corpus holds no text: {corpus}"),
        (None, "{corpus}: no such file or folder"),
        ("Anna , .\n" * 50, "no word occurs at least 1000 times in the training text; lower --min-count or use more text"),
    ],
)
def test_bad_corpus_is_one_error_line(tmp_path, monkeypatch, content, message):
    monkeypatch.setenv("FLAIRSUITE_HOME", str(tmp_path / "home"))
    corpus = tmp_path / "corpus.txt"
    if content is not None:
        corpus.write_text(content, encoding="utf-8")
    result = run("train-fasttext", "--lang", "de", "--corpus", str(corpus), "--corpora-dir", str(tmp_path), *TINY, "--min-count", "1000")
    assert error_line(result) == f"Error: {message.format(corpus=corpus)}"
    assert not any((tmp_path / "home" / "wordvectors").glob("*"))


def test_unwritable_output_folder_is_one_error_line(tmp_path):
    blocker = write_file(tmp_path / "file", "not a folder")
    corpus = write_file(tmp_path / "corpus.txt", german_text(20))
    result = run("train-fasttext", "--lang", "de", "--corpus", str(corpus), "--out", str(blocker / "vectors"), *TINY)
    assert error_line(result) == f"Error: cannot write to {blocker / 'vectors'}: Not a directory"


def test_token_stream_splits_punctuation_and_cuts_long_documents(tmp_path, monkeypatch):
    assert tokenize("Am Montag, 3. Mai: „Baden-Württemberg“!") == [
        "Am", "Montag", ",", "3", ".", "Mai", ":", "„", "Baden", "-", "Württemberg", "“", "!"
    ]  # fmt: skip
    monkeypatch.setattr(tokens, "MAX_TOKENS", 2)
    path = write_file(tmp_path / "train.txt", "a b c\nd\n")
    stream = TokenStream(path)
    assert list(stream) == [["a", "b"], ["c"], ["d"]] == list(stream)


def test_lookup_forms_follow_flair_word_embeddings():
    assert lookup_forms("Mai1999") == ("Mai1999", "mai1999", "mai####", "mai0000")
    vocab = {"der": 0, "####": 1}
    assert covered("Der", vocab) and covered("2024", vocab) and not covered("Die", vocab)
    assert oov_tokens(Counter(["Der", "Die", "Die", "1999", "1"]), vocab) == 3


def test_named_vectors_sit_beside_and_one_thread_retrains_them_bit_for_bit(trained, tmp_path, monkeypatch):
    """`--name` gives a second set (spec fasttext:NAME); with one thread a retrain gives the same files, so
    cache keys and experiment fingerprints that digest them survive a retrain on another machine."""
    from flairsuite.embeddings import artifact_digest, build_command, resolve

    root, _ = trained
    args = ["train-fasttext", "--lang", "de", "--corpus", str(root / "corpus.txt"), "--corpora-dir", str(root / "corpora"), *TINY]
    digests = []
    for attempt in ("a", "b"):
        home = tmp_path / attempt
        monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
        result = run(*args, "--name", "de16")
        assert result.exit_code == 0
        assert "de16-fasttext:" in result.output and "de-fasttext:" not in result.output  # the progress bar names the set
        assert [p.name for p in (home / "wordvectors").iterdir()] == ["de16-fasttext"]
        assert resolve("fasttext:de16", home).embedding_length == 16
        digests.append(artifact_digest("fasttext:de16", home))
    assert digests[0] == digests[1]
    assert build_command("fasttext:de16") == "flairsuite train-fasttext --lang LANG --name de16"
    assert build_command("fasttext:de") == "flairsuite train-fasttext --lang de"


def test_compact_vectors_give_the_corpus_tokens_the_full_vectors(trained, monkeypatch):
    root, _ = trained
    monkeypatch.setenv("FLAIRSUITE_HOME", str(root / "home"))
    result = run("compact-fasttext", "de", "--dataset", "sturm", "--name", "de-small", "--corpora-dir", str(root / "corpora"))
    assert result.exit_code == 0, result.output
    from flair.data import Sentence
    from flair.embeddings import WordEmbeddings

    full = WordEmbeddings(str(vectors_path(root)))
    small = WordEmbeddings(str(root / "home" / "wordvectors" / "de-small-fasttext" / "vectors.kv"))
    words = "Der König besuchte Walden . Berlin ist schön schrieb".split()  # every token of the Sturm fixture
    a, b = Sentence(words), Sentence(words)
    full.embed(a)
    small.embed(b)
    assert all(torch_equal(x.embedding, y.embedding) and x.embedding.norm() > 0 for x, y in zip(a, b))
    summary = json.loads((root / "home" / "wordvectors" / "de-small-fasttext" / "summary.json").read_text())
    assert summary["corpus_words"] == len(set(words)) and summary["entries"] <= len(set(words))
    assert len(small.vocab) < len(full.vocab)
    assert "Gericht" in full.vocab
    other = Sentence(["Gericht"])  # in the raw text, not in Sturm: the full vectors know it, the compact ones do not
    small.embed(other)
    assert other[0].embedding.norm() == 0
    missing = CliRunner().invoke(cli, ["compact-fasttext", "xx", "--dataset", "sturm", "--name", "x", "--corpora-dir", str(root / "corpora")])
    assert "no vectors" in error_line(missing)


def torch_equal(x, y) -> bool:
    import torch

    return bool(torch.equal(x, y))
