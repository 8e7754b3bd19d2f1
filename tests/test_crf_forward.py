"""The CRF's forward algorithm (flairsuite/models/crf.py): the scaled exp-space recursion against the log-sum-exp
over the score cube, values and gradients, with Flair's and LCRF-NER's transition matrices, and its fallback."""

import torch
from flair.data import Dictionary

from flairsuite.models.crf import IMPOSSIBLE, crf_loss, log_partition, log_partition_cube, padding_mask
from flairsuite.models.lcrf import forbidden_transitions

LENGTHS = torch.tensor([31, 17, 17, 6, 2, 1])


def flair_like_transitions(tags: int, generator: torch.Generator) -> tuple[torch.Tensor, int, int]:
    """Random transitions with Flair's impossible moves (into <START>, out of <STOP>); <START>, <STOP> last."""
    start, stop = tags - 2, tags - 1
    transitions = torch.randn(tags, tags, generator=generator)
    transitions[start, :] = IMPOSSIBLE
    transitions[:, stop] = IMPOSSIBLE
    return transitions, start, stop


def both(scores: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(log partition, gradient wrt the scores, gradient wrt the transitions) by each recursion; the cube's in float64."""
    mask = padding_mask(LENGTHS, scores.size(1), scores.device)
    results = []
    for function, dtype in ((log_partition, torch.float32), (log_partition_cube, torch.float64)):
        values = scores.detach().to(dtype).requires_grad_()
        moves = transitions.detach().to(dtype).requires_grad_()
        total = function(values, mask, moves, start, stop)
        assert total.dtype == dtype
        results.append((total.detach().double(), *[grad.double() for grad in torch.autograd.grad(total.sum(), (values, moves))]))
    return results


def test_scaled_recursion_equals_the_cube_with_flairs_transitions() -> None:
    generator = torch.Generator().manual_seed(3)
    for tags in (5, 17, 41):  # a Sturm-sized, LER-coarse and LER-fine tag set (+ <START>, <STOP>)
        transitions, start, stop = flair_like_transitions(tags, generator)
        scores = 4 * torch.randn(len(LENGTHS), int(LENGTHS[0]), tags, generator=generator)
        (ours, our_scores, our_moves), (cube, cube_scores, cube_moves) = both(scores, transitions, start, stop)
        assert torch.allclose(ours, cube, rtol=1e-6)
        assert torch.allclose(our_scores, cube_scores, atol=1e-5)
        assert torch.allclose(our_moves, cube_moves, atol=1e-4)
        assert our_scores[3, 6:].abs().max() == 0  # nothing flows from a sentence's padding


def test_scaled_recursion_with_lcrf_forbidden_moves() -> None:
    """LCRF-NER's matrix puts IMPOSSIBLE inside the tag block (O -> I-X, B-X1 -> I-X2, ...)."""
    dictionary = Dictionary(add_unk=False)
    tags = ["O"] + [f"{prefix}-{kind}" for kind in ("X1", "X2", "X3") for prefix in "BI"]
    for tag in tags:
        dictionary.add_item(tag)
    dictionary.set_start_stop_tags()
    forbidden = forbidden_transitions(dictionary, "BIO")
    generator = torch.Generator().manual_seed(4)
    transitions = torch.randn(len(dictionary), len(dictionary), generator=generator).masked_fill(forbidden.bool(), IMPOSSIBLE)
    start, stop = dictionary.get_idx_for_item("<START>"), dictionary.get_idx_for_item("<STOP>")
    scores = 6 * torch.randn(len(LENGTHS), int(LENGTHS[0]), len(dictionary), generator=generator)
    (ours, our_scores, _), (cube, cube_scores, _) = both(scores, transitions, start, stop)
    assert torch.allclose(ours, cube, rtol=1e-6)
    assert torch.allclose(our_scores, cube_scores, atol=1e-5)


def test_vanishing_sums_fall_back_to_the_cube() -> None:
    """A state reachable only from one lying 1,000 nats below the best underflows even in float64: the cube computes it."""
    tags = 5
    transitions, start, stop = flair_like_transitions(tags, torch.Generator().manual_seed(5))
    transitions[2, :] = IMPOSSIBLE
    transitions[2, 1] = 0.0  # tag 2 only after tag 1
    scores = torch.full((len(LENGTHS), int(LENGTHS[0]), tags), -5000.0)
    scores[:, 0, 0], scores[:, 0, 1] = 0.0, -1000.0  # tag 1 is 1,000 nats below tag 0 at the first token
    scores[:, 1:, 2] = 0.0  # then every path but 1 -> 2 -> 2 ... costs 5,000 a token
    (ours, our_scores, _), (cube, cube_scores, _) = both(scores, transitions, start, stop)
    assert torch.isfinite(ours).all() and torch.isfinite(our_scores).all()
    assert torch.allclose(ours, cube, rtol=1e-6)
    assert torch.allclose(our_scores, cube_scores, atol=1e-5)


def test_loss_of_a_one_token_batch() -> None:
    """No step of the recursion at all: the loss is the log partition minus the gold score of the single tokens."""
    transitions, start, stop = flair_like_transitions(5, torch.Generator().manual_seed(6))
    scores = torch.randn(3, 1, 5, generator=torch.Generator().manual_seed(7))
    gold = torch.tensor([[0], [1], [2]])
    lengths = torch.tensor([1, 1, 1])
    expected = sum(
        torch.logsumexp(scores[i, 0] + transitions[:, start] + transitions[stop], dim=0)
        - (scores[i, 0, tag] + transitions[tag, start] + transitions[stop, tag])
        for i, tag in enumerate((0, 1, 2))
    )
    assert torch.allclose(crf_loss(scores, gold, lengths, transitions, start, stop), expected, rtol=1e-6)


def test_the_hand_written_backward_is_the_gradient() -> None:
    """`log_partition`'s gradient comes from its backward recursion, not autograd: checked against finite differences
    (float64, per-sentence output weights, padding, Flair's impossible moves)."""
    generator = torch.Generator().manual_seed(8)
    transitions, start, stop = flair_like_transitions(7, generator)
    lengths = torch.tensor([9, 6, 6, 3, 1])
    scores = 3 * torch.randn(len(lengths), int(lengths[0]), 7, generator=generator)
    mask = padding_mask(lengths, scores.size(1), scores.device)
    inputs = (scores.double().requires_grad_(), transitions.double().requires_grad_())
    assert torch.autograd.gradcheck(lambda s, t: log_partition(s, mask, t, start, stop), inputs)
    assert log_partition(*inputs[:1], mask, inputs[1], start, stop).grad_fn.name() == "_ScaledForwardBackwardBackward"
