"""The suite's WordEmbeddings builder (`embeddings/vector_table.py`) against Flair's own constructor."""

import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from flair.data import Sentence
from flair.embeddings import WordEmbeddings
from flair.models import SequenceTagger
from gensim.models import KeyedVectors

from flairsuite.embeddings.vector_table import word_embeddings

WORDS = ["Brief", "brief", "Berlin", "##.##", "00.00", "und", "der"] + [f"wort{i}" for i in range(3000)]


def saved_vectors(folder, separate: bool):
    """A gensim vectors file of WORDS (dim 16); `separate`: the matrix in a side .npy file (memory-mapped when loaded)."""
    vectors = KeyedVectors(vector_size=16)
    vectors.add_vectors(WORDS, np.random.default_rng(7).normal(size=(len(WORDS), 16)).astype(np.float32))
    path = folder / "vectors.kv"
    vectors.save(str(path), separately=["vectors"] if separate else [], sep_limit=1 << 40)
    assert (folder / "vectors.kv.vectors.npy").is_file() == separate
    return path


@pytest.mark.parametrize("separate", [True, False])
def test_the_embedding_is_flairs_table_vocabulary_and_lookup(tmp_path, separate):
    path = saved_vectors(tmp_path, separate)
    built, flairs = word_embeddings(path), WordEmbeddings(str(path))
    assert type(built) is WordEmbeddings
    assert torch.equal(built.embedding.weight, flairs.embedding.weight)
    assert built.embedding.weight.dtype == torch.float32 and not built.embedding.weight.requires_grad
    assert built.vocab == flairs.vocab and built.to_params() == flairs.to_params()
    assert built.name == flairs.name == str(path) and built.embeddings == flairs.embeddings
    mine, theirs = Sentence("Brief BERLIN 12.34 Xqzt der"), Sentence("Brief BERLIN 12.34 Xqzt der")
    built.embed(mine)
    flairs.embed(theirs)
    assert all(torch.equal(a.embedding, b.embedding) for a, b in zip(mine, theirs))
    assert not mine[3].embedding.any()  # unknown: the zero row


def test_a_tagger_over_the_embedding_saves_and_loads_in_plain_flair(tmp_path):
    from flair.data import Dictionary

    path = saved_vectors(tmp_path, True)
    tags = Dictionary(add_unk=False)
    for tag in ["O", "B-PER", "I-PER"]:
        tags.add_item(tag)
    tagger = SequenceTagger(word_embeddings(path), tag_dictionary=tags, tag_type="ner", hidden_size=8)
    tagger.save(tmp_path / "model.pt")
    script = (
        "import sys, torch; from flair.models import SequenceTagger; from flair.embeddings import WordEmbeddings;"
        "m = SequenceTagger.load(sys.argv[1]); w = WordEmbeddings(sys.argv[2]);"
        "print(type(m.embeddings).__name__, torch.equal(m.embeddings.embedding.weight, w.embedding.weight))"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "model.pt"), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == ["WordEmbeddings", "True"]  # after Flair's INFO lines on stdout


def test_building_allocates_the_table_once(tmp_path):
    """Peak memory while building: about one table (Flair's constructor: about four, a float64 copy among them)."""
    vectors = KeyedVectors(vector_size=200)
    vectors.add_vectors([f"w{i}" for i in range(100_000)], np.ones((100_000, 200), dtype=np.float32))  # an 80 MB table
    path = tmp_path / "vectors.kv"
    vectors.save(str(path))
    script = (
        "import re, sys; from pathlib import Path; import flair.embeddings as e; from flairsuite.embeddings.vector_table import word_embeddings\n"
        "def hwm(): return int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) / 1024\n"
        "before = hwm(); built = (word_embeddings(Path(sys.argv[1])) if sys.argv[2] == 'suite' else e.WordEmbeddings(sys.argv[1]))\n"
        "print(hwm() - before)"
    )
    grown = {}
    for side in ("suite", "flair"):
        done = subprocess.run([sys.executable, "-c", script, str(path), side], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        grown[side] = float(re.findall(r"[\d.]+", done.stdout)[-1])
    assert grown["suite"] < 1.5 * 80, grown
    assert grown["flair"] > 3 * 80, grown  # what the builder avoids, so that the comparison above means something


def test_the_embedding_built_for_a_cache_is_gone_when_the_cache_is_written(tmp_path, monkeypatch):
    """Flair's WordEmbeddings sits in reference cycles (so `del` alone leaves its table in memory until the collector's
    next full pass); the cache frees the copy it built before it returns, so a grid does not hold one per split."""
    import gc
    import weakref

    from flairsuite.corpora.readers import TaggedSentence
    from flairsuite.tagging import cache
    from flairsuite.tagging.data import LabeledSplit

    folder = tmp_path / "wordvectors" / "mini-fasttext"
    folder.mkdir(parents=True)
    path = saved_vectors(folder, True)
    gc.disable()  # no automatic pass may hide what the cache does
    try:
        lone = word_embeddings(path)
        lone.embed(Sentence("Brief aus Berlin"))
        alive = weakref.ref(lone)
        del lone
        assert alive() is not None  # the premise: once it has embedded, reference counting alone does not free it
        built = []
        real_resolve = cache.resolve
        monkeypatch.setattr(cache, "resolve", lambda *args: (built.append(weakref.ref(embedding := real_resolve(*args))), embedding)[1])
        split = LabeledSplit.of([TaggedSentence(["Brief", "aus", "Berlin"], ["O", "O", "B-LOC"], [], [True, True, False])])
        vectors, computed = cache.cached_vectors("fasttext:mini", split, tmp_path, "mini")
        assert computed and len(built) == 1 and built[0]() is None
        assert vectors.shape == (3, 16) and vectors[0].tolist() == WordEmbeddings(str(path)).embedding.weight[0].half().tolist()
    finally:
        gc.enable()
