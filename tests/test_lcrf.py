"""LCRF-NER: the forbidden transitions, equality with Flair's CRF loss and Viterbi, saving for plain Flair, gradients."""

import json
import subprocess
import sys
from pathlib import Path

import flair
import pytest
import torch
from flair.data import Dictionary
from flair.embeddings import CharacterEmbeddings
from flair.models import SequenceTagger

from flairsuite.errors import FlairsuiteError
from flairsuite.models.crf import emissions, padding_mask
from flairsuite.models.lcrf import IMPOSSIBLE, LCRFNERTagger, forbidden_transitions
from flairsuite.models.protocol import features_decode, features_loss
from flairsuite.models.registry import build_tagger

# Zöllner et al. 2021, Figure 1: rows = previous tag, columns = next tag, both in the order of ORDER.
ORDER = ("B-X1", "B-X2", "I-X1", "I-X2", "O")
FIGURE_1 = [[0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 0, 1, 1, 0]]
LENGTHS = torch.tensor([7, 5, 5, 2, 1])  # sorted longest first, as the suite's loop gives them
# Loads a saved model with flairsuite made unimportable and prints Flair's Viterbi tags for a saved batch.
PLAIN_FLAIR = """
import json, sys
sys.modules["flairsuite"] = None
import torch
from flair.models import SequenceTagger
tagger = SequenceTagger.load(sys.argv[1])
sentence_tensor, lengths = torch.load(sys.argv[2])
with torch.no_grad():
    tags = tagger.viterbi_decoder.decode(tagger.forward(sentence_tensor, lengths), False, [])[0]
print(json.dumps({"class": type(tagger).__name__, "tags": tags}))
"""


def span_types(*types: str) -> Dictionary:
    """A span-label dictionary as `corpus.make_label_dictionary("ner", add_unk=False)` makes it."""
    dictionary = Dictionary(add_unk=False)
    for kind in types:
        dictionary.add_item(kind)
    dictionary.span_labels = True
    return dictionary


@pytest.fixture(scope="module")
def embeddings() -> CharacterEmbeddings:
    """A tiny character embedding (length 8); the tests feed sentence tensors directly."""
    characters = Dictionary()
    for char in "abc":
        characters.add_item(char)
    return CharacterEmbeddings(characters, char_embedding_dim=4, hidden_size_char=4)


def lcrf_tagger(embeddings: CharacterEmbeddings, tag_format: str = "BIO", use_rnn: bool = False, omegas: tuple[float, float] = (1.0, 0.0)) -> LCRFNERTagger:
    """An LCRF-NER tagger over two types in eval mode, with the given ω_factor and ω_absolute."""
    torch.manual_seed(1)
    tagger = LCRFNERTagger(embeddings, span_types("X1", "X2"), "ner", tag_format=tag_format, use_rnn=use_rnn, reproject_embeddings=use_rnn)
    with torch.no_grad():
        tagger.crf.omega_factor.fill_(omegas[0])
        tagger.crf.omega_absolute.fill_(omegas[1])
    return tagger.eval()


def batch(tagger: LCRFNERTagger) -> tuple[torch.Tensor, list[list[str]]]:
    """A random zero-padded sentence tensor for LENGTHS and random gold tags (forbidden transitions included)."""
    generator = torch.Generator().manual_seed(2)
    tensor = 3 * torch.randn(len(LENGTHS), int(LENGTHS[0]), tagger.embeddings.embedding_length, generator=generator)
    tensor *= (torch.arange(int(LENGTHS[0])).unsqueeze(0) < LENGTHS.unsqueeze(1)).unsqueeze(2)
    tags = [tag for tag in tagger.label_dictionary.get_items() if not tag.startswith("<")]
    gold = [[tags[i] for i in torch.randint(len(tags), (int(n),), generator=generator).tolist()] for n in LENGTHS]
    return tensor, gold


def test_forbidden_transitions_are_figure_1(embeddings: CharacterEmbeddings) -> None:
    labels = lcrf_tagger(embeddings).label_dictionary
    index = labels.get_idx_for_item
    forbidden = forbidden_transitions(labels, "BIO")
    order = [index(tag) for tag in ORDER]
    assert forbidden[order][:, order].T.tolist() == FIGURE_1
    start, stop = index("<START>"), index("<STOP>")
    assert forbidden[start].all() and forbidden[:, stop].all()
    assert forbidden[:, start][order].tolist() == [0, 0, 1, 1, 0]  # no I-X at sentence start
    assert forbidden[stop][order].tolist() == [0] * 5


def test_forbidden_transitions_bioes() -> None:
    labels = Dictionary(add_unk=False)  # as SequenceTagger builds it for one type X
    for tag in ("O", "S-X", "B-X", "E-X", "I-X", "<START>", "<STOP>"):
        labels.add_item(tag)
    outside = ("<START>", "O", "S-X", "E-X")
    allowed = {(before, after) for before in outside for after in ("O", "S-X", "B-X", "<STOP>") if (before, after) != ("<START>", "<STOP>")}
    allowed |= {(before, after) for before in ("B-X", "I-X") for after in ("I-X", "E-X")}
    items = labels.get_items()
    forbidden = forbidden_transitions(labels, "bioes")
    found = {(items[before], items[after]) for after, before in (forbidden == 0).nonzero().tolist()}
    assert found == allowed


def test_bad_input_is_one_line_error(embeddings: CharacterEmbeddings) -> None:
    with pytest.raises(FlairsuiteError, match="unknown tag format 'IOB'"):
        forbidden_transitions(span_types("X"), "IOB")
    with pytest.raises(FlairsuiteError, match="'<unk>' is not a BIO tag"):
        forbidden_transitions(Dictionary(add_unk=True), "BIO")
    with pytest.raises(FlairsuiteError, match="use_crf=False"):
        LCRFNERTagger(embeddings, span_types("X"), "ner", use_crf=False)


@pytest.mark.parametrize("tag_format, use_rnn", [("BIO", False), ("BIO", True), ("BIOES", False)])
@pytest.mark.parametrize("omegas", [(1.0, 0.0), (0.3, 2.5)])
def test_loss_and_viterbi_match_flair(embeddings: CharacterEmbeddings, tag_format: str, use_rnn: bool, omegas: tuple[float, float]) -> None:
    tagger = lcrf_tagger(embeddings, tag_format, use_rnn, omegas)
    lcrf = tagger.crf
    transitions = lcrf.transitions.detach()
    equation_7 = (lcrf.allowed + omegas[0] * lcrf.forbidden) * lcrf.weights - omegas[1] * lcrf.forbidden
    assert torch.allclose(transitions, equation_7.detach().masked_fill(lcrf.fixed, IMPOSSIBLE))
    if omegas == (1.0, 0.0):
        assert torch.equal(transitions, lcrf.weights.detach())  # a plain CRF with transitions W
    plain = SequenceTagger.load(tagger._get_state_dict())
    assert type(plain) is SequenceTagger and torch.equal(plain.crf.transitions, transitions)
    tensor, gold = batch(tagger)
    with torch.no_grad():
        flair_loss = plain._calculate_loss(plain.forward(tensor, LENGTHS), gold_ids(plain, gold))[0]
        flair_tags = plain.viterbi_decoder.decode(plain.forward(tensor, LENGTHS), False, [])[0]
        assert torch.allclose(tagger.features_loss(tensor, LENGTHS, gold), flair_loss, rtol=1e-5)
    decoded = tagger.features_decode(tensor, LENGTHS)
    assert [[tag for tag, _ in row] for row in decoded] == [[tag for tag, _ in row] for row in flair_tags]
    assert torch.allclose(torch.tensor([c for row in decoded for _, c in row]), torch.tensor([c for row in flair_tags for _, c in row]))
    assert len({tag for row in decoded for tag, _ in row}) > 2  # the comparison is not all "O"


def gold_ids(model: SequenceTagger, gold: list[list[str]]) -> torch.Tensor:
    """The batch's gold tags as Flair's flat id tensor."""
    return torch.tensor([model.label_dictionary.get_idx_for_item(tag) for tags in gold for tag in tags])


@pytest.mark.parametrize("name", ["bilstm-crf", "map-crf", "map"])
def test_plain_taggers_train_and_decode_as_flair(embeddings: CharacterEmbeddings, name: str) -> None:
    """The suite's loop gives plain SequenceTaggers Flair's loss and tags, by the vectorised path."""
    tagger = build_tagger(name, embeddings, span_types("PER", "LOC"), "ner").eval()
    tensor, gold = batch(tagger)
    with torch.no_grad():
        scores = tagger.forward(tensor, LENGTHS)
        flair_loss = tagger._calculate_loss(scores, gold_ids(tagger, gold))[0]
        assert torch.allclose(features_loss(tagger, tensor, LENGTHS, gold), flair_loss, rtol=1e-5)
        if tagger.use_crf:
            flair_tags = tagger.viterbi_decoder.decode(scores, False, [])[0]
        else:
            best = scores.argmax(dim=1).tolist()
            bounds = [(int(LENGTHS[:k].sum()), int(LENGTHS[: k + 1].sum())) for k in range(len(LENGTHS))]
            flair_tags = [[(tagger.label_dictionary.get_item_for_index(i), 0.0) for i in best[start:end]] for start, end in bounds]
    assert [[t for t, _ in row] for row in features_decode(tagger, tensor, LENGTHS)] == [[t for t, _ in row] for row in flair_tags]


def assert_loss_and_gradient_equal_flairs(tagger: SequenceTagger, weight: torch.nn.Parameter, tensor: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
    """The suite's training loss and the gradient of `weight` equal Flair's padded forward, seed for seed (the same
    dropout masks both ways); returns the suite's loss."""
    flair.set_seed(5)
    ours = features_loss(tagger, tensor, LENGTHS, gold)
    ours.backward()
    our_grad = weight.grad.clone()
    tagger.zero_grad()
    flair.set_seed(5)
    theirs = tagger._calculate_loss(tagger.forward(tensor, LENGTHS), gold_ids(tagger, gold))[0]
    theirs.backward()
    assert torch.allclose(ours, theirs, rtol=1e-5)
    assert torch.allclose(our_grad, weight.grad, rtol=1e-4, atol=1e-6)
    return ours


def test_training_loss_equals_flairs_with_dropout(embeddings: CharacterEmbeddings) -> None:
    """In training mode (dropouts on) the loss of the real-token reprojection equals Flair's padded forward, seed for seed."""
    tagger = build_tagger("bilstm-crf", embeddings, span_types("PER", "LOC"), "ner").train()
    assert tagger.reproject_embeddings and tagger.use_rnn and tagger.use_locked_dropout and tagger.use_word_dropout
    tensor, gold = batch(tagger)
    ours = assert_loss_and_gradient_equal_flairs(tagger, tagger.embedding2nn.weight, tensor, gold)
    flair.set_seed(6)
    assert not torch.allclose(features_loss(tagger, tensor, LENGTHS, gold), ours)  # the dropouts were on


@pytest.mark.parametrize("name", ["map-crf", "map"])
def test_linear_heads_score_only_the_real_tokens_with_flairs_loss_and_gradient(embeddings: CharacterEmbeddings, name: str) -> None:
    """Without an RNN the tag map runs on the real tokens only (most rows of a padded batch are padding): the padding
    scores zero, and the loss and the weights' gradient are those of Flair's forward over the padded batch."""
    tagger = build_tagger(name, embeddings, span_types("PER", "LOC"), "ner").train()
    assert not tagger.use_rnn and LENGTHS.min() < LENGTHS.max()
    tensor, gold = batch(tagger)
    scores = emissions(tagger, tensor, LENGTHS)
    assert not scores[~padding_mask(LENGTHS, tensor.size(1), tensor.device)].any()
    assert_loss_and_gradient_equal_flairs(tagger, tagger.linear.weight, tensor, gold)


def test_saved_model_decodes_the_same_in_plain_flair(embeddings: CharacterEmbeddings, tmp_path: Path) -> None:
    tagger = lcrf_tagger(embeddings, use_rnn=True, omegas=(0.5, 4.0))
    tensor, gold = batch(tagger)
    torch.save((tensor, LENGTHS), tmp_path / "batch.pt")
    tagger.save(tmp_path / "model.pt")
    child = subprocess.run([sys.executable, "-c", PLAIN_FLAIR, str(tmp_path / "model.pt"), str(tmp_path / "batch.pt")],
                           capture_output=True, text=True, cwd=tmp_path, check=True)
    found = json.loads(child.stdout.strip().splitlines()[-1])
    decoded = tagger.features_decode(tensor, LENGTHS)
    assert found["class"] == "SequenceTagger"
    assert [[tag for tag, _ in row] for row in found["tags"]] == [[tag for tag, _ in row] for row in decoded]
    assert torch.allclose(torch.tensor([c for row in found["tags"] for _, c in row]), torch.tensor([c for row in decoded for _, c in row]))


def test_reload_restores_the_trainable_model(embeddings: CharacterEmbeddings, tmp_path: Path) -> None:
    tagger = lcrf_tagger(embeddings, omegas=(0.5, 4.0))
    tagger.save(tmp_path / "model.pt")
    restored = LCRFNERTagger.load(tmp_path / "model.pt")
    assert type(restored) is LCRFNERTagger
    for name, parameter in tagger.crf.named_parameters():
        assert torch.equal(getattr(restored.crf, name), parameter) and getattr(restored.crf, name).requires_grad
    tensor, gold = batch(tagger)
    assert torch.allclose(restored.features_loss(tensor, LENGTHS, gold), tagger.features_loss(tensor, LENGTHS, gold))
    SequenceTagger.load(tmp_path / "model.pt").save(tmp_path / "plain.pt")
    with pytest.raises(FlairsuiteError, match="no LCRF-NER weights"):
        LCRFNERTagger.load(tmp_path / "plain.pt")


def test_gradients_reach_w_and_both_omegas(embeddings: CharacterEmbeddings) -> None:
    tagger = lcrf_tagger(embeddings)
    tensor, gold = batch(tagger)
    tagger.features_loss(tensor, LENGTHS, gold).backward()
    lcrf = tagger.crf
    for parameter in (lcrf.omega_factor, lcrf.omega_absolute):
        assert parameter.grad is not None and parameter.grad.abs() > 0
    free = ~lcrf.fixed
    free[lcrf.stop, lcrf.start] = False  # <START> -> <STOP> would be an empty sentence
    assert (lcrf.weights.grad[free] != 0).all() and (lcrf.weights.grad[lcrf.fixed] == 0).all()
