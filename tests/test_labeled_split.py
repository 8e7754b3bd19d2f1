"""The runner's compact corpus (`LabeledSplit`): the cache keys and Flair tokens of the labeled Flair sentences it replaced, in far less memory."""

import gc
import hashlib
import json
import os
import tracemalloc
from pathlib import Path

import pytest

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import to_flair
from flairsuite.corpora.registry import dataset
from flairsuite.tagging.cache import tokens_digest
from flairsuite.tagging.data import LabeledSplit, load_labeled

ROOT = Path(os.environ["FLAIRSUITE_CORPORA"]) if os.environ.get("FLAIRSUITE_CORPORA") else None
real = pytest.mark.skipif(ROOT is None, reason="FLAIRSUITE_CORPORA is not set (point it at ../shared/corpora)")


def flair_digest(sentences) -> str:
    """The cache's token digest as it was computed from Flair sentences: every cached array's name depends on it."""
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(json.dumps([[t.text, t.whitespace_after] for t in sentence], ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


@real
@pytest.mark.corpora
@pytest.mark.parametrize("name", ["sturm", "cluener"])  # words with spaces; Chinese characters without
def test_compact_split_keeps_the_cache_keys_and_flair_tokens_of_the_labeled_flair_sentences(name):
    spec = dataset(name)
    for split, data in read_splits(spec, ROOT, ["train", "dev"]).items():
        compact = LabeledSplit.of(data.sentences)
        labeled = [to_flair(s, spec) for s in data.sentences]
        assert tokens_digest(compact) == flair_digest(labeled), split
        rebuilt = compact.flair_sentences()
        assert [[(t.text, t.whitespace_after) for t in s] for s in rebuilt] == [[(t.text, t.whitespace_after) for t in s] for s in labeled]
        assert compact.tags == [s.tags for s in data.sentences] and len(compact) == len(labeled)
    assert any(0 in spaces for spaces in compact.spaces) == (name == "cluener")


@real
@pytest.mark.corpora
def test_a_loaded_corpus_holds_under_a_tenth_of_the_memory_flair_sentences_take():
    gc.collect()
    tracemalloc.start()
    splits = load_labeled("arendt", {}, None, ROOT)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    tokens = sum(split.tokens for split in splits.values())
    assert tokens == 125066 + 16471 + 16602
    assert held / tokens < 60, f"{held / tokens:.0f} bytes a token"  # measured 39; Flair sentences ~630 (benchmarks/tagging_memory.py)


def test_train_plus_dev_and_tagged_give_back_the_sentences_in_order(tmp_path, sturm):
    root = sturm("Am O\nMontag B-date\n\nWalden B-pers\nkam O\n")
    splits = load_labeled("sturm", {}, None, root)
    both = splits["train"] + splits["dev"]
    assert len(both) == len(splits["train"]) + len(splits["dev"]) and both.tokens == splits["train"].tokens + splits["dev"].tokens
    assert both.texts[:2] == [("Am", "Montag"), ("Walden", "kam")] and both.tags[1] == ["B-pers", "O"]
    again = both.tagged(1)
    assert (again.tokens, again.tags, again.whitespace_after) == (["Walden", "kam"], ["B-pers", "O"], [True, True])
    (chosen,) = both.flair_sentences([1])
    assert chosen.to_tokenized_string() == "Walden kam" and not chosen.get_labels()
