"""The fast path's character-LM states are computed into memory kept from batch to batch (`CharLMFeatures.kept`):
whatever an earlier, larger batch left there must not reach a later batch's features, for one-layer LMs (the released
ones: the buffer is not zeroed) and for deeper or projected LMs (an affine map reads the whole buffer: zeroed)."""

import pytest
import torch
from flair.data import Dictionary, Sentence
from flair.embeddings import FlairEmbeddings
from flair.models import LanguageModel

from flairsuite.embeddings.charlm import CharLMFeatures

LONG = ["Am Montag besuchte Anna die Stadt Berlin und schrieb ihrem Bruder Karl einen langen Brief über die Reise .",
        "Sie sagte das dem König , der in Wien wohnte .", "Dann verließ Karl die Stadt ."]
SHORT = ["Anna schrieb .", "Wien !"]


def language_model(layers: int, nout, forward: bool) -> FlairEmbeddings:
    torch.manual_seed(layers * 10 + (nout or 0) + forward)
    characters = Dictionary()
    for character in sorted(set("".join(LONG + SHORT) + " \n")):
        characters.add_item(character)
    lm = LanguageModel(characters, is_forward_lm=forward, hidden_size=24, nlayers=layers, embedding_size=8, nout=nout)
    with torch.no_grad():
        for parameter in lm.parameters():
            parameter.uniform_(-0.8, 0.8)  # large weights: states far from zero, so stale values would show
    return FlairEmbeddings(lm.eval())


def sentences(texts: list[str]) -> list[Sentence]:
    return [Sentence(text.split()) for text in texts]


@pytest.mark.parametrize("quantize", [False, True])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("layers,nout", [(1, None), (2, None), (1, 16)])
def test_a_later_batch_gets_what_a_fresh_featurizer_gives(layers: int, nout, forward: bool, quantize: bool) -> None:
    embedding = language_model(layers, nout, forward)
    reused = CharLMFeatures(embedding, quantize)
    with torch.inference_mode():
        reused(sentences(LONG))  # fills the kept memory with a larger batch's states
        later = reused(sentences(SHORT))
        fresh = CharLMFeatures(embedding, quantize)(sentences(SHORT))
    assert later.shape == (sum(len(text.split()) for text in SHORT), embedding.embedding_length)
    assert torch.equal(later, fresh)
    if not quantize:  # and both are Flair's own vectors
        flair_sentences = sentences(SHORT)
        embedding.embed(flair_sentences)
        expected = torch.stack([token.get_embedding() for sentence in flair_sentences for token in sentence])
        assert torch.allclose(later, expected, atol=1e-5)


def test_the_memory_is_kept_grown_and_left_alone_by_a_concurrent_call() -> None:
    featurizer = CharLMFeatures(language_model(1, None, True), quantize=False)
    with torch.inference_mode():
        alone = featurizer(sentences(SHORT))
        small = featurizer.kept[0]
        featurizer(sentences(SHORT))
        assert featurizer.kept[0] is small  # reused
        featurizer(sentences(LONG))
        grown = featurizer.kept[0]
        assert grown.numel() > small.numel()  # grown for the larger batch
        with featurizer.keeping:  # another call is using the kept memory: this one computes in memory of its own
            before = grown.clone()
            assert torch.equal(featurizer(sentences(SHORT)), alone)
            assert torch.equal(grown, before) and featurizer.kept[0] is grown
