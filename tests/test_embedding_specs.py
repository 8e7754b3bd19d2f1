"""Embedding specs on a tiny trained character LM and tiny fastText vectors: resolution, stacking, errors, digests;
and a new embedding kind added by one entry in the kinds' table."""

import hashlib
import json
import shutil
import threading
from pathlib import Path
from types import MappingProxyType
from typing import Optional

import numpy as np
import pytest
import torch
from conftest import train_tiny_embeddings
from flair.data import Sentence
from flair.embeddings import CharacterEmbeddings, FlairEmbeddings, StackedEmbeddings, TokenEmbeddings, WordEmbeddings

from flairsuite import embeddings
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.embeddings import EmbeddingKind, artifact_digest, artifact_path, kinds, resolve, stack
from flairsuite.errors import FlairsuiteError
from flairsuite.files.locks import waited_for
from flairsuite.files.paths import embeddings_cache_dir, wordvectors_dir
from flairsuite.inference.embed import stack_featurizers
from flairsuite.tagging import cache
from flairsuite.tagging.data import LabeledSplit


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A home folder holding `charlm/de-forward` and `wordvectors/de-fasttext`, both trained by the CLI."""
    return train_tiny_embeddings(tmp_path_factory.mktemp("specs"), "forward", fasttext=True)


def test_specs_resolve_to_flair_embeddings(home):
    assert isinstance(resolve("charlm:de-forward", home), FlairEmbeddings)
    assert isinstance(resolve("fasttext:de", home), WordEmbeddings)
    assert isinstance(resolve("char", home), CharacterEmbeddings)
    assert artifact_path("charlm:de-forward", home) == home / "charlm" / "de-forward" / "best-lm.pt"
    assert artifact_path("char", home) is None


def test_stacked_lengths_add_up(home):
    specs = ["charlm:de-forward", "fasttext:de", "char"]
    stacked = stack(specs, home)
    assert isinstance(stacked, StackedEmbeddings)
    assert stacked.embedding_length == 16 + 16 + 50 == sum(resolve(s, home).embedding_length for s in specs)
    sentence = Sentence("Am Montag kam Walden nach Berlin".split())
    stacked.embed(sentence)
    assert [len(token.embedding) for token in sentence] == [82] * 6
    assert stack(["fasttext:de"], home).embedding_length == 16  # a single spec is not wrapped


@pytest.mark.parametrize(
    "spec, message",
    [
        ("charlm:de-backward", "{home}/charlm/de-backward/best-lm.pt not found: run `flairsuite train-charlm --lang de --direction backward`"),
        ("charlm:news-forward", "{home}/charlm/news-forward/best-lm.pt not found: run `flairsuite train-charlm --lang LANG --name news --direction forward`"),
        ("fasttext:da", "{home}/wordvectors/da-fasttext/vectors.kv not found: run `flairsuite train-fasttext --lang da`"),
        ("charlms:de-forward", "unknown embedding kind 'charlms'. Did you mean charlm, char?"),
        ("bert-base", "unknown embedding kind 'bert-base'. Did you mean bert?"),
        ("fasttext", "embedding spec 'fasttext' needs a name, e.g. fasttext:de"),
        ("char:de", "embedding spec 'char:de': char takes no name (write 'char')"),
        ("charlm:de", "embedding spec 'charlm:de': write charlm:NAME-forward or charlm:NAME-backward"),
    ],
)
def test_bad_spec_is_one_line_error(home, spec, message):
    with pytest.raises(FlairsuiteError) as caught:
        stack(["char", spec], home)
    assert str(caught.value) == message.format(home=home)


def test_repeated_or_no_spec_is_an_error(home):
    with pytest.raises(FlairsuiteError, match="embedding char listed more than once"):
        stack(["char", "fasttext:de", "char"], home)
    with pytest.raises(FlairsuiteError, match="no embeddings given"):
        stack([], home)


def test_digest_follows_content_not_place(home, tmp_path):
    specs = ["charlm:de-forward", "fasttext:de", "char"]
    digests = [artifact_digest(s, home) for s in specs]
    assert len(set(digests)) == 3 and all(len(d) == 64 for d in digests)
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    assert [artifact_digest(s, copy) for s in specs] == digests
    with artifact_path("fasttext:de", copy).open("ab") as handle:
        handle.write(b"\0")
    assert artifact_digest("fasttext:de", copy) != digests[1]


class ToyEmbeddings(TokenEmbeddings):
    """A made-up frozen embedding: each word's vector read from a JSON file, zeros for other words."""

    def __init__(self, path: Path) -> None:
        self.name = f"toy-{path.stem}"
        self.static_embeddings = True
        super().__init__()
        self.table = json.loads(path.read_text(encoding="utf-8"))
        self.dim = len(next(iter(self.table.values())))

    @property
    def embedding_length(self) -> int:
        return self.dim

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        for sentence in sentences:
            for token in sentence:
                token.set_embedding(self.name, torch.tensor(self.table.get(token.text, [0.0] * self.dim)))
        return sentences


class ToyFeatures:
    """The toy kind's fast path: the table looked up for a whole batch."""

    def __init__(self, embedding: ToyEmbeddings, quantize: bool) -> None:
        self.embedding = embedding

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        zeros = [0.0] * self.embedding.dim
        return torch.tensor([self.embedding.table.get(token.text, zeros) for sentence in sentences for token in sentence])


def toy_name_check(name: str) -> Optional[str]:
    return None if name.isalpha() and name.islower() else "write toy:LOWERCASE"


TOY = EmbeddingKind(  # the one change a new kind needs: this entry (and the module holding its functions)
    takes_name=True,
    example="toy:mini",
    check_name=toy_name_check,
    artifact=lambda name, home: wordvectors_dir(home) / f"{name}-toy.json",
    build_command=lambda name: f"flairsuite make-toy {name}",
    digested=lambda path: [path],
    frozen=lambda fine_tune: not fine_tune,
    resolve=lambda name, path: ToyEmbeddings(path),
    recognizes=lambda embedding: isinstance(embedding, ToyEmbeddings),
    featurizer=ToyFeatures,
)
TOY_VECTORS = {"Montag": [1.0, 2.0, 3.0], "Berlin": [0.5, 0.25, -1.0]}


@pytest.fixture
def toy_home(tmp_path, monkeypatch):
    """A home folder with the toy kind's artifact `toy:mini`, and the kinds' table with the toy entry added."""
    with pytest.raises(FlairsuiteError, match="unknown embedding kind 'toy'"):
        embeddings.parse("toy:mini")
    monkeypatch.setattr(kinds, "EMBEDDING_KINDS", MappingProxyType({**kinds.EMBEDDING_KINDS, "toy": TOY}))
    path = wordvectors_dir(tmp_path) / "mini-toy.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(TOY_VECTORS), encoding="utf-8")
    return tmp_path


def test_a_new_kind_is_one_table_entry(toy_home):
    home = toy_home
    assert embeddings.parse("toy:mini") == ("toy", "mini")
    for spec, message in [
        ("toy", "embedding spec 'toy' needs a name, e.g. toy:mini"),
        ("toy:Mini", "embedding spec 'toy:Mini': write toy:LOWERCASE"),
        ("elmo", "unknown embedding kind 'elmo'. Known: charlm, fasttext, char, lexicon, bert, toy."),
        ("toy:big", f"{home}/wordvectors/big-toy.json not found: run `flairsuite make-toy big`"),
    ]:
        with pytest.raises(FlairsuiteError) as caught:
            stack([spec], home)
        assert str(caught.value) == message
    path = home / "wordvectors" / "mini-toy.json"
    assert artifact_path("toy:mini", home) == embeddings.existing_artifact("toy:mini", home) == path
    assert embeddings.build_command("toy:mini") == "flairsuite make-toy mini"
    assert artifact_digest("toy:mini", home) == hashlib.sha256(b"mini-toy.json\0" + path.read_bytes()).hexdigest()
    assert embeddings.frozen("toy:mini") and not embeddings.frozen("toy:mini", fine_tune=True)
    assert cache.frozen("toy:mini") and not cache.frozen("char")

    toy = resolve("toy:mini", home)
    assert isinstance(toy, ToyEmbeddings) and toy.embedding_length == 3
    stacked = stack(["toy:mini", "char"], home)
    assert isinstance(stacked, StackedEmbeddings) and stacked.embedding_length == 3 + 50
    sentences = [Sentence("Am Montag kam Walden".split()), Sentence("nach Berlin".split())]
    expected = torch.tensor([[0.0] * 3, TOY_VECTORS["Montag"], [0.0] * 3, [0.0] * 3, [0.0] * 3, TOY_VECTORS["Berlin"]])
    assert torch.equal(embeddings.token_vectors(toy, sentences), expected)
    assert all(not token._embeddings for sentence in sentences for token in sentence)  # cleared again

    # the fast inference path: the toy featurizer for the toy part, Flair's own embed for `char`
    featurizers = stack_featurizers(stacked, quantize=False)
    assert sorted(type(f).__name__ for f in featurizers) == ["FlairFeatures", "ToyFeatures"]
    with torch.no_grad():
        fast = torch.cat([featurize(sentences) for featurize in featurizers], dim=1)
        flair_vectors = embeddings.token_vectors(stacked, sentences)
    assert torch.allclose(fast, flair_vectors)


def test_a_new_kind_is_cached(toy_home):
    home = toy_home
    sentences = LabeledSplit.of([TaggedSentence("Am Montag kam Walden".split(), ["O"] * 4, [], [True] * 4),
                                 TaggedSentence("nach Berlin".split(), ["O", "B-LOC"], [], [True, False])])
    vectors, computed = cache.cached_vectors("toy:mini", sentences, home, "toy")
    target = cache.cache_path("toy:mini", sentences, home)
    assert computed and target.parent == embeddings_cache_dir(home) / "toy-mini"
    assert vectors.shape == (6, 3) and vectors.dtype == np.float16
    assert vectors[1].tolist() == TOY_VECTORS["Montag"] and vectors[5].tolist() == TOY_VECTORS["Berlin"] and not vectors[0].any()
    assert not cache.cached_vectors("toy:mini", sentences, home, "toy")[1]
    (home / "wordvectors" / "mini-toy.json").write_text(json.dumps({"Montag": [0.0, 0.0, 1.0]}), encoding="utf-8")
    assert cache.cache_path("toy:mini", sentences, home) != target  # a changed artifact is a new cache key


def test_workers_needing_one_cache_at_once_compute_it_once(toy_home, monkeypatch):
    home = toy_home
    sentences = LabeledSplit.of([TaggedSentence("Am Montag kam Walden".split(), ["O"] * 4, [], [True] * 4)])
    target = cache.cache_path("toy:mini", sentences, home)
    real_compute, calls, answers, waiting = cache.compute, [], {}, threading.Event()
    monkeypatch.setattr(cache, "compute", lambda *args: (calls.append(args), real_compute(*args)))
    monkeypatch.setattr(cache, "waited_for", lambda lock, on_wait: waited_for(lock, lambda: (on_wait(), waiting.set())))
    with waited_for(target.with_name(target.name + ".lock")):  # another grid worker is computing it
        worker = threading.Thread(target=lambda: answers.update(got=cache.cached_vectors("toy:mini", sentences, home, "toy")))
        worker.start()
        assert waiting.wait(30)  # it found the lock held: it waits instead of computing the same cache beside the other one
        assert worker.is_alive()
        real_compute(resolve("toy:mini", home), sentences, target, "toy")
    worker.join(30)
    vectors, computed = answers["got"]
    assert not computed and not calls and vectors[1].tolist() == TOY_VECTORS["Montag"]


def test_artifact_summary_reads_what_training_recorded(tmp_path) -> None:
    import json
    import shutil
    from pathlib import Path

    from flairsuite.embeddings import artifact_summary

    repo = Path(__file__).resolve().parents[1]
    recorded = json.loads((repo / "charlm" / "de-forward" / "summary.json").read_text(encoding="utf-8"))
    summary = artifact_summary("charlm:de-forward", repo)
    assert summary == {"chars": recorded["chars_seen"], "hours": recorded["hours"], "valid_ppl": recorded["valid_ppl"],
                       "hidden_size": recorded["hyper"]["hidden_size"]}
    assert artifact_summary("fasttext:de-quickstart", repo) == {"dim": 300}
    assert artifact_summary("char", repo) is None
    copy = tmp_path / "charlm" / "de-forward"
    copy.mkdir(parents=True)
    shutil.copy(repo / "charlm" / "de-forward" / "best-lm.pt", copy)
    assert artifact_summary("charlm:de-forward", tmp_path) is None  # no summary.json beside it
    (copy / "summary.json").write_text("{not json", encoding="utf-8")
    assert artifact_summary("charlm:de-forward", tmp_path) is None  # a damaged one loses the record only


def test_a_model_in_training_or_stopped_midway_is_refused(home, tmp_path) -> None:
    import os

    from flairsuite.files.locks import claimed

    folder = tmp_path / "charlm" / "de-forward"
    shutil.copytree(home / "charlm" / "de-forward", folder)
    model = folder / "best-lm.pt"
    assert embeddings.existing_artifact("charlm:de-forward", tmp_path) == model  # finished: summary.json written last
    with claimed(folder) as mine:  # a training holds the folder (a lock held through another open file, as a process would)
        assert mine
        with pytest.raises(FlairsuiteError) as caught:
            stack(["charlm:de-forward"], tmp_path)
    assert str(caught.value) == f"charlm:de-forward: {folder} is being trained by another process (it holds {folder / '.lock'}): wait for it to end"
    assert embeddings.existing_artifact("charlm:de-forward", tmp_path) == model  # the lock is gone with its holder
    # a training killed after a checkpoint of a --resume: its model files are an intermediate state
    checkpoint, summary = folder / "checkpoint.pt", folder / "summary.json"
    checkpoint.write_bytes(b"state")
    written = summary.stat().st_mtime_ns
    os.utime(checkpoint, ns=(written + 10**9, written + 10**9))
    expected = (f"charlm:de-forward: the training of {folder} stopped before its end (checkpoint.pt is newer than any summary.json): "
                "finish it with the command that trained it and --resume")
    for _ in range(2):
        with pytest.raises(FlairsuiteError) as caught:
            artifact_digest("charlm:de-forward", tmp_path)
        assert str(caught.value) == expected
        summary.unlink(missing_ok=True)  # the second time: killed before its first summary
    summary.write_text("{}", encoding="utf-8")
    os.utime(summary, ns=(written + 2 * 10**9, written + 2 * 10**9))  # the resumed training finished
    assert embeddings.existing_artifact("charlm:de-forward", tmp_path) == model
