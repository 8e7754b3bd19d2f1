"""`precision: bfloat16`: the training steps' reprojection and LSTM run in bfloat16 under autocast, while the
parameters, the loss and the decoding stay float32, and the tagger still learns; the setting is checked and
recorded only where it is not the default (old runs keep their fingerprints)."""

import subprocess
import sys

import flair
import numpy as np
import pytest
import torch
from flair.data import Dictionary
from flair.embeddings import CharacterEmbeddings

from flairsuite.errors import FlairsuiteError
from flairsuite.models.registry import build_tagger
from flairsuite.models.settings import TrainSettings
from flairsuite.runtime.precision import native_bfloat16, resolved_precision
from flairsuite.tagging.data import LabeledSplit
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.tagger_training import train_tagger

TAGS = ["O", "B-PER", "I-PER"]


def split(sentences: int, seed: int, width: int) -> SplitFeatures:
    """Random sentences whose token vectors show their tag (a tag's direction, the same in every split, plus noise)."""
    directions = np.random.default_rng(0).normal(size=(len(TAGS), width)) * 2
    rng = np.random.default_rng(seed)
    tags, rows = [], []
    for _ in range(sentences):
        length = int(rng.integers(3, 12))
        sentence = ["O"] * length
        start = int(rng.integers(0, length - 1))
        sentence[start : start + 2] = ["B-PER", "I-PER"]
        tags.append(sentence)
        rows += [directions[TAGS.index(tag)] + rng.normal(size=width) for tag in sentence]
    labeled = LabeledSplit([("w",) * len(t) for t in tags], [bytes([1] * len(t)) for t in tags], tags)
    return SplitFeatures(labeled, [np.asarray(rows, dtype=np.float16)])


NO_BFLOAT16 = "the CPU has no bfloat16 units (AVX-512 BF16 or AMX)"


@pytest.mark.skipif(not native_bfloat16(torch.device("cpu")), reason=NO_BFLOAT16)
def test_bfloat16_training_runs_the_lstm_in_bfloat16_and_learns(tmp_path):
    characters = Dictionary()
    characters.add_item("w")
    embeddings = CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=8)  # 16 wide: the rows' width
    labels = Dictionary(add_unk=False)
    labels.add_item("PER")
    labels.span_labels = True
    train, dev = split(120, 1, embeddings.embedding_length), split(30, 2, embeddings.embedding_length)
    seen: dict[str, set] = {"lstm": set(), "loss": set()}
    results = {}
    for precision in ("float32", "bfloat16"):
        torch.manual_seed(1)
        tagger = build_tagger("bilstm-crf", embeddings, labels, "ner")
        hook = tagger.rnn.register_forward_hook(lambda module, args, out: seen["lstm"].add((precision, module.training, out[0].data.dtype)))
        settings = {"max_epochs": 6, "precision": precision, "learning_rate": 0.1}
        results[precision] = train_tagger(tagger, train, dev, settings, seed=1, checkpoint_path=tmp_path / f"{precision}.pt")
        hook.remove()
        assert {p.dtype for p in tagger.parameters()} == {torch.float32}
    # training steps in bfloat16 only with the setting; dev decoding (eval mode) always float32
    assert seen["lstm"] == {("float32", True, torch.float32), ("float32", False, torch.float32),
                            ("bfloat16", True, torch.bfloat16), ("bfloat16", False, torch.float32)}
    for precision, progress in results.items():
        assert progress.best_score > 0.9, (precision, progress.history)
        assert all(np.isfinite(epoch["loss"]) for epoch in progress.history)
    losses = [[epoch["loss"] for epoch in results[p].history] for p in results]
    assert losses[0] != losses[1]  # the arithmetic differed


def test_precision_is_checked_and_recorded_only_when_set():
    assert "precision" not in TrainSettings().record()
    assert TrainSettings(precision="bfloat16").record()["precision"] == "bfloat16"
    tuned = TrainSettings(bucket_batches=50).record()
    assert "bucket_batches" in tuned and "precision" not in tuned  # records of runs before the setting keep their keys
    with pytest.raises(FlairsuiteError, match=r'^train.precision must be one of: float32, bfloat16 \(found "half"\)$'):
        TrainSettings.from_mapping("train", {"precision": "half"})


def test_bfloat16_training_on_a_cpu_without_it_is_a_one_line_error(monkeypatch, tmp_path):
    monkeypatch.setattr(flair, "device", torch.device("cpu"))
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    characters = Dictionary()
    characters.add_item("w")
    embeddings = CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=8)
    labels = Dictionary(add_unk=False)
    labels.add_item("PER")
    labels.span_labels = True
    train = split(10, 1, embeddings.embedding_length)
    tagger = build_tagger("bilstm-crf", embeddings, labels, "ner")
    with pytest.raises(FlairsuiteError) as caught:
        train_tagger(tagger, train, train, {"max_epochs": 1, "precision": "bfloat16"}, seed=1, checkpoint_path=tmp_path / "x.pt")
    assert str(caught.value) == ("training settings: precision bfloat16 needs a device that computes bfloat16, and this CPU has no "
                                 "bfloat16 units (AVX-512 BF16 or AMX): use precision float32")
    assert not (tmp_path / "x.pt").exists()
    train_tagger(tagger, train, train, {"max_epochs": 1}, seed=1, checkpoint_path=tmp_path / "x.pt")  # float32 trains


def test_auto_precision_follows_the_devices_bfloat16_support(monkeypatch):
    cpu = torch.device("cpu")
    assert resolved_precision("float32", cpu) == "float32" and resolved_precision("bfloat16", cpu) == "bfloat16"
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert resolved_precision("auto", cpu) == "bfloat16"
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    assert resolved_precision("auto", cpu) == "float32"


# An LSTM of the hidden-1024 LM's size in bfloat16 over 80 window lengths, as the LM's window ramp feeds them;
# prints the growth of the resident memory from the 6th length on (MB). The batch is small to keep it quick.
RAMP = """
import sys, torch
from flairsuite.runtime.allocator import bound_primitive_cache
if sys.argv[1] == "bounded":
    bound_primitive_cache()
torch.set_num_threads(1)
lstm = torch.nn.LSTM(100, 1024)
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096 // 2**20
for length in range(25, 105):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = lstm(torch.randn(length, 8, 100))
    out.float().sum().backward()
    if length == 30:
        start = rss()
print(rss() - start)
"""


@pytest.mark.skipif(not native_bfloat16(torch.device("cpu")), reason=NO_BFLOAT16)
def test_the_lm_bounds_onednns_primitive_cache(monkeypatch):
    """Without the bound, every new window length keeps a primitive with its weights.

    glibc's mmap threshold is fixed, so freed buffers go back to the system at once and the resident memory counts
    live allocations only: the glibc default moves the threshold as buffers are freed, and what the heap then keeps
    varied by ±50 MB from run to run (on a CI machine the bounded ramp once grew 59 MB, the default 164 MB).
    Fixed, the growth repeated to the MB here: 1 MB bounded, 30 MB by default.
    """
    monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", raising=False)
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))
    growth = {}
    for mode in ("bounded", "default"):
        done = subprocess.run([sys.executable, "-c", RAMP, mode], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        growth[mode] = int(done.stdout.split()[-1])
    assert growth["default"] >= max(10, 4 * growth["bounded"]), growth


@pytest.mark.skipif(not native_bfloat16(torch.device("cpu")), reason=NO_BFLOAT16)
def test_bfloat16_training_runs_a_live_embedding_in_bfloat16_too(tmp_path):
    """A part that trains with the tagger (`char` here, a fine-tuned BERT likewise) is embedded inside the step's autocast,
    so its forward pass (and so its backward) runs in bfloat16 as the head's does; dev decoding stays float32."""
    characters = Dictionary()
    for character in "abc":
        characters.add_item(character)
    labels = Dictionary(add_unk=False)
    labels.add_item("PER")
    labels.span_labels = True
    rng = np.random.default_rng(3)
    texts, tags = [], []
    for _ in range(40):
        words = ["".join(rng.choice(list("abc"), size=3)) for _ in range(5)]
        texts.append(tuple(words))
        tags.append(["B-PER" if word.startswith("a") else "O" for word in words])
    labeled = LabeledSplit(texts, [bytes([1] * len(t)) for t in tags], tags)
    seen = set()
    for precision in ("float32", "bfloat16"):
        embeddings = CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=8)
        hook = embeddings.char_rnn.register_forward_hook(lambda module, args, out: seen.add((precision, module.training, out[0].data.dtype)))
        tagger = build_tagger("map-crf", embeddings, labels, "ner")
        features = SplitFeatures(labeled, [tagger.embeddings])  # the tagger's own module: a live part
        train_tagger(tagger, features, features, {"max_epochs": 1, "precision": precision}, seed=1, checkpoint_path=tmp_path / f"{precision}.pt")
        hook.remove()
    assert ("bfloat16", True, torch.bfloat16) in seen and ("float32", True, torch.float32) in seen
    assert ("bfloat16", True, torch.float32) not in seen and ("bfloat16", False, torch.float32) in seen
