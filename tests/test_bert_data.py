"""Small-BERT data: WordPiece vocabulary, packing into whole-word samples, masking by token and by whole word, sentence pairs."""

import random
from pathlib import Path

import numpy as np
import pytest

from flairsuite.bert.data import sentences_of, tokenize_corpus
from flairsuite.bert.masking import IGNORE, MaskingRule, mask, sample_generator, sequence, training_batch
from flairsuite.bert.settings import SPECIAL_TOKENS
from flairsuite.bert.vocabulary import CLS, MASK, SEP
from flairsuite.rawtext.prepare import PreparedCorpus

WORDS = [
    "Donaudampfschifffahrt", "Kapitän", "Briefwechsel", "Anna", "schreibt", "Berlin", "München", "Sturmzeitschrift",
    "geht", "heute", "Verlagshaus", "nach", "Walden", "Übersetzung", "Kunstausstellung",
]


def document(rng: random.Random) -> str:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + " ." for _ in range(rng.randint(1, 4))]
    return " ".join(s[0].upper() + s[1:] for s in sentences)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A tokenized fixture corpus with a vocabulary so small that long words split into many pieces."""
    folder = tmp_path_factory.mktemp("prepared")
    rng = random.Random(0)
    for split, documents in (("train", 400), ("valid", 40), ("test", 40)):
        (folder / f"{split}.txt").write_text("\n".join(document(rng) for _ in range(documents)) + "\n", encoding="utf-8")
    return tokenize_corpus(PreparedCorpus(folder, {}), 120, tmp_path_factory.mktemp("cache"))


def test_vocabulary_is_cased_keeps_umlauts_and_fixes_special_ids(corpus) -> None:
    tokenizer = corpus.tokenizer()
    assert [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    pieces = tokenizer.encode("Übersetzung übersetzung", add_special_tokens=False).tokens
    assert "".join(p.removeprefix("##") for p in pieces) == "Übersetzungübersetzung"  # case and umlauts survive
    assert tokenizer.encode("Anna", add_special_tokens=True).ids[0] == CLS
    assert corpus.meta["vocab_size"] == 120


def test_tokenized_splits_hold_every_word_and_sentence(corpus) -> None:
    tokenizer = corpus.tokenizer()
    text = (Path(corpus.meta["prepared"]) / "valid.txt").read_text(encoding="utf-8")
    ids = np.asarray(corpus.ids("valid"))
    pieces = "".join(tokenizer.id_to_token(int(i)).removeprefix("##") for i in ids if i != SEP)
    assert pieces == "".join(text.split())  # every character of the text, none added
    assert int((ids == SEP).sum()) == len(text.splitlines())  # one [SEP] after each document
    starts = np.load(corpus.path / "valid.sentences.npy")
    assert len(starts) == sum(len(sentences_of(line)) for line in text.splitlines())
    assert all(tokenizer.id_to_token(int(ids[s])) in WORDS or not tokenizer.id_to_token(int(ids[s])).startswith("##") for s in starts)


def test_samples_are_whole_words_end_to_end(corpus) -> None:
    samples = corpus.samples("train", 30)
    ids = np.asarray(corpus.ids("train"))
    assert samples.bounds[0] == 0 and samples.bounds[-1] == len(ids)
    lengths = np.diff(samples.bounds)
    assert lengths.max() <= 30 and lengths.mean() > 24  # packed: little room left over
    assert samples.word_start[ids[samples.bounds[:-1]]].all()  # no sample starts inside a word
    assert (corpus.path / "train.samples-30.npy").is_file()


def test_whole_word_masking_masks_all_pieces_of_a_word_or_none(corpus) -> None:
    samples = corpus.samples("train", 30)
    rule = MaskingRule("mlm", True, 120, 32, seed=3)
    split_words = 0
    for index in range(200):
        ids, _, _ = sequence(samples, index, rule, sample_generator(3, 0, index))
        starts = samples.word_start[ids]
        inputs, labels = mask(ids, starts, rule, sample_generator(3, 0, index))
        word = np.cumsum(starts)
        for w in np.unique(word[1:-1]):
            chosen = labels[word == w] != IGNORE
            assert chosen.all() or not chosen.any()
            masked = inputs[word == w] == MASK
            assert masked.all() or not masked.any()  # the 80/10/10 choice is made per word
            split_words += (word == w).sum() > 1 and chosen.all()
    assert split_words > 20  # words of several pieces were masked


def test_token_masking_rate_and_80_10_10(corpus) -> None:
    samples = corpus.samples("train", 30)
    rule = MaskingRule("mlm", False, 120, 32, seed=1)
    batch = {k: v.numpy() for k, v in training_batch(samples, list(range(len(samples))), 0, rule).items()}
    real = (batch["attention_mask"] == 1) & ~np.isin(batch["input_ids"], [CLS, SEP]) | (batch["labels"] != IGNORE)
    chosen = batch["labels"] != IGNORE
    assert chosen.sum() / real.sum() == pytest.approx(0.15, abs=0.01)
    as_mask = (batch["input_ids"][chosen] == MASK).mean()
    kept = (batch["input_ids"][chosen] == batch["labels"][chosen]).mean()
    assert as_mask == pytest.approx(0.8, abs=0.04) and kept == pytest.approx(0.1 + 0.1 / 115, abs=0.03)
    assert not chosen[:, 0].any() and (batch["input_ids"][chosen] >= 0).all()


def test_masks_repeat_for_the_same_seed_epoch_and_index(corpus) -> None:
    samples = corpus.samples("train", 30)
    rule = MaskingRule("mlm", True, 120, 32, seed=5)
    first = training_batch(samples, [7, 8, 9], 2, rule)
    again = training_batch(samples, [9, 7, 8], 2, rule)
    assert (first["input_ids"][0] == again["input_ids"][1]).all() and (first["labels"][2] == again["labels"][0]).all()
    other_epoch = training_batch(samples, [7, 8, 9], 3, rule)
    other_seed = training_batch(samples, [7, 8, 9], 2, MaskingRule("mlm", True, 120, 32, seed=6))
    assert not (first["labels"] == other_epoch["labels"]).all()
    assert not (first["labels"] == other_seed["labels"]).all()


@pytest.mark.parametrize("objective", ["mlm+sop", "mlm+nsp"])
def test_sentence_pairs(corpus, objective: str) -> None:
    rule = MaskingRule(objective, True, 120, 33, seed=1)
    samples = corpus.samples("train", rule.content)
    labels = []
    for index in range(100):
        ids, types, label = sequence(samples, index, rule, sample_generator(1, 0, index))
        labels.append(label)
        boundary = int((types == 0).sum())  # [CLS] A [SEP] are type 0, B [SEP] type 1 (A and B may hold a document's [SEP])
        first, second = ids[1 : boundary - 1], ids[boundary:-1]
        assert len(ids) <= 33 and ids[0] == CLS and ids[boundary - 1] == SEP and ids[-1] == SEP
        assert (types[:boundary] == 0).all() and (types[boundary:] == 1).all()
        original = samples.tokens(index)
        if label == 0:
            assert (np.concatenate([first, second]) == original).all()
        elif objective == "mlm+sop":
            assert (np.concatenate([second, first]) == original).all()
        else:
            assert (first == original[: len(first)]).all() and len(second) <= len(original) - len(first)
            starts = [j for j in range(len(samples)) if j != index and np.array_equal(samples.tokens(j)[: len(second)], second)]
            assert starts  # B is the start of another sample
    assert 30 < sum(labels) < 70
