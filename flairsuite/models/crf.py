"""Linear-chain CRF math in Flair's layout, vectorised over the batch: loss, Viterbi, emissions of a SequenceTagger.

Flair's `ViterbiLoss` and `ViterbiDecoder` build the (batch, time, tags, tags) score tensor and
format targets in Python lists; here the forward algorithm and Viterbi loop over time only, on
(batch, tags) tensors with a padding mask, the forward algorithm as scaled matrix products in exp
space (`log_partition`, float64). `transitions[to, from]` is Flair's CRF parameter (with `<START>`
and `<STOP>` rows/columns), so the values equal Flair's (tests/test_lcrf.py, tests/test_crf_forward.py):
the loss summed over the batch (to float32 rounding), the tags, and the confidences (max softmax of
the Viterbi scores).
Plain CRF taggers use `transitions = model.crf.transitions`, LCRF-NER its Eq. 7 matrix.
`emissions` maps only the real tokens through the reprojection (`embedding2nn`), where Flair maps the padded
batch (3.7x the tokens on Sturm): the same values, epochs 1.5x faster (benchmarks/bilstm_step_speed.py).
"""

from typing import Any, Callable, Optional

import torch
from flair.data import Dictionary
from flair.models import SequenceTagger

IMPOSSIBLE = -10000.0  # Flair's CRF score of transitions into <START> and out of <STOP>
Tagged = list[list[tuple[str, float]]]  # per sentence, per token: (raw BIO tag, confidence)


def padding_mask(lengths: torch.Tensor, longest: int, device: torch.device) -> torch.Tensor:
    """(batch, longest) bool: True at the real tokens."""
    return torch.arange(longest, device=device).unsqueeze(0) < lengths.to(device).unsqueeze(1)


def gold_tensor(dictionary: Dictionary, gold: list[list[str]], longest: int) -> torch.Tensor:
    """Gold tags as ids (batch, longest), padded with 0 (masked out by the loss)."""
    index = dictionary.get_idx_for_item
    return torch.tensor([[index(tag) for tag in tags] + [0] * (longest - len(tags)) for tags in gold], dtype=torch.long)


def real_tokens_only(layer: torch.nn.Module, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A token-wise `layer` applied to the real tokens of a padded batch only; zeros at the padding."""
    mask = padding_mask(lengths, sentence_tensor.size(1), sentence_tensor.device)
    real = layer(sentence_tensor[mask])
    return real.new_zeros(*mask.shape, real.size(-1)).masked_scatter(mask.unsqueeze(-1), real)


def emissions(model: SequenceTagger, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Per token the tag scores before the CRF: Flair's `SequenceTagger.forward` up to its linear map."""
    if model.use_dropout:
        sentence_tensor = model.dropout(sentence_tensor)
    if model.use_word_dropout:
        sentence_tensor = model.word_dropout(sentence_tensor)
    if model.use_locked_dropout:
        sentence_tensor = model.locked_dropout(sentence_tensor)
    if model.use_rnn:
        packed = torch.nn.utils.rnn.pack_padded_sequence(sentence_tensor, lengths, batch_first=True)
        if model.reproject_embeddings:
            packed = packed._replace(data=model.embedding2nn(packed.data))
        sentence_tensor, _ = torch.nn.utils.rnn.pad_packed_sequence(model.rnn(packed)[0], batch_first=True)
    elif model.reproject_embeddings:
        sentence_tensor = real_tokens_only(model.embedding2nn, sentence_tensor, lengths)
    if model.use_dropout:
        sentence_tensor = model.dropout(sentence_tensor)
    if model.use_locked_dropout:
        sentence_tensor = model.locked_dropout(sentence_tensor)
    if not model.use_rnn:  # a linear head: the padding is most of the batch's rows (the scores there are masked out anyway)
        return real_tokens_only(model.linear, sentence_tensor, lengths).float()
    return model.linear(sentence_tensor).float()  # the CRF sums in float32, also under bfloat16 autocast


def _gold_score(scores: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Per sentence: the score of its gold path, <START> and <STOP> transitions included."""
    previous = torch.cat([torch.full_like(tags[:, :1], start), tags[:, :-1]], dim=1)
    steps = scores.gather(2, tags.unsqueeze(2)).squeeze(2) + transitions[tags, previous]
    last = tags.gather(1, mask.sum(1, keepdim=True) - 1).squeeze(1)
    return steps.masked_fill(~mask, 0.0).sum(1) + transitions[stop, last]


class _Vanished(Exception):
    """A scaled forward sum underflowed to zero (float64): the caller falls back to the cube."""


class _ScaledForwardBackward(torch.autograd.Function):
    """The log partition by the scaled forward recursion, its gradient by the matching backward recursion.

    Forward: a_0 = exp(alpha_0 - peak), a_t = (a_(t-1) W * E_t) / n_t with W the exponentiated transitions (from, to),
    E_t the exponentiated emissions scaled by their largest (log factor `top`) and n_t the sum that normalises a_t;
    a sentence's vector stops at its last token. Backward: b_last = stop / Z, b_(t-1) = W (E_t * b_t) / n_t, so that
    a_t . b_t = 1 and a_t * b_t are the marginals of the tags at t (the gradient with respect to the emissions), and
    a_(t-1)[i] W[i, j] E_t[j] b_t[j] / n_t those of the transition i -> j (the gradient with respect to the
    transitions). Autograd would record and replay every operation of the loop; these two loops of a few tensor
    operations a token, and one matrix product for the transition counts, are the whole cost.
    """

    @staticmethod
    def forward(ctx: Any, work: torch.Tensor, moves: torch.Tensor, mask: torch.Tensor, start: int, stop: int) -> torch.Tensor:
        shift = moves.amax(dim=1)  # per target tag its largest incoming transition
        weights = torch.exp(moves - shift.unsqueeze(1)).T  # (from, to)
        shifted = work + shift
        top = shifted.amax(dim=2, keepdim=True)
        emitted = torch.exp(shifted - top)
        alpha = work[:, 0] + moves[:, start]
        peak = alpha.amax(dim=1, keepdim=True)
        forward = torch.exp(alpha - peak)
        vectors, norms = [forward], [torch.ones_like(peak)]
        for t in range(1, work.size(1)):
            step = (forward @ weights) * emitted[:, t]
            norm = step.sum(dim=1, keepdim=True)
            keep = mask[:, t].unsqueeze(1)
            forward = torch.where(keep, step / norm, forward)
            vectors.append(forward)
            norms.append(torch.where(keep, norm, 1.0))
        norms = torch.cat(norms, dim=1)
        stop_weights = torch.exp(moves[stop])
        total = forward @ stop_weights
        if bool((norms == 0).any()) or bool((total == 0).any()):
            raise _Vanished
        ctx.save_for_backward(torch.stack(vectors, dim=1), norms, emitted, weights, stop_weights, total, mask)
        ctx.start, ctx.stop = start, stop
        return peak.squeeze(1) + torch.log(norms).sum(dim=1) + top[:, 1:, 0].masked_fill(~mask[:, 1:], 0.0).sum(dim=1) + torch.log(total)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Optional[torch.Tensor], ...]:
        vectors, norms, emitted, weights, stop_weights, total, mask = ctx.saved_tensors
        backward = stop_weights.unsqueeze(0) / total.unsqueeze(1)
        last = vectors[:, -1]
        betas, carried = [backward], []
        for t in range(vectors.size(1) - 1, 0, -1):
            scaled = emitted[:, t] * backward / norms[:, t : t + 1]
            carried.append(scaled)
            backward = torch.where(mask[:, t].unsqueeze(1), scaled @ weights.T, backward)
            betas.append(backward)
        betas = torch.stack(betas[::-1], dim=1)  # (batch, longest, tags)
        weight = grad.unsqueeze(1)
        d_scores = (vectors * betas * mask.unsqueeze(2)) * weight.unsqueeze(2)
        d_moves = torch.zeros_like(weights.T)
        if carried:
            steps = torch.stack(carried[::-1], dim=1) * (mask[:, 1:].unsqueeze(2) * weight.unsqueeze(2))  # (batch, longest - 1, to)
            previous = vectors[:, :-1]  # (batch, longest - 1, from)
            d_moves += (previous.reshape(-1, previous.size(2)).T @ steps.reshape(-1, steps.size(2)) * weights).T
        d_moves[:, ctx.start] += d_scores[:, 0].sum(dim=0)
        d_moves[ctx.stop] += (last * stop_weights * (weight / total.unsqueeze(1))).sum(dim=0)
        return d_scores, d_moves, None, None, None


def log_partition(scores: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Per sentence: the log of the summed exp-scores of all paths (the forward algorithm), scaled in exp space.

    The forward probabilities are carried normalised to sum 1 per sentence, their log scale apart,
    so each step is one (batch, tags) x (tags, tags) matrix product, a product with the step's
    exponentiated emissions (all computed by one exp before the loop) and a normalisation: no exp or
    log inside the loop, where the log-sum-exp over the (batch, tags, tags) cube takes batch x tags x
    tags exponentials a step. The gradient comes from the matching backward recursion
    (`_ScaledForwardBackward`), not from autograd's record of the loop. In float64, whose range keeps the
    scaled sums from underflowing unless a state lies over 700 nats below a sentence's best; should a sum
    vanish all the same, the batch is computed by `log_partition_cube`.
    """
    try:
        return _ScaledForwardBackward.apply(scores.double(), transitions.double(), mask, start, stop).to(scores.dtype)
    except _Vanished:
        return log_partition_cube(scores, mask, transitions, start, stop)


def log_partition_cube(scores: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """`log_partition` by the log-sum-exp recursion over the (batch, tags, tags) cube, as Flair's ViterbiLoss."""
    alpha = scores[:, 0] + transitions[:, start]
    for t in range(1, scores.size(1)):
        step = torch.logsumexp(alpha.unsqueeze(1) + transitions, dim=2) + scores[:, t]
        alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
    return torch.logsumexp(alpha + transitions[stop], dim=1)


def crf_loss(
    scores: torch.Tensor, tags: torch.Tensor, lengths: torch.Tensor, transitions: torch.Tensor, start: int, stop: int,
    partition: Callable[..., torch.Tensor] = log_partition,
) -> torch.Tensor:
    """The negative log-likelihood of the gold `tags` (batch, longest), summed over the batch (`partition`: the recursion)."""
    mask = padding_mask(lengths, scores.size(1), scores.device)
    return (partition(scores, mask, transitions, start, stop) - _gold_score(scores, tags, mask, transitions, start, stop)).sum()


def crf_decode(scores: torch.Tensor, lengths: torch.Tensor, transitions: torch.Tensor, start: int, stop: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The best tag ids (batch, longest) and Flair's confidences (the max softmax of the Viterbi scores)."""
    mask = padding_mask(lengths, scores.size(1), scores.device)
    score = scores[:, 0] + transitions[:, start]
    history, pointers = [score], []
    stay = torch.arange(scores.size(2), device=scores.device).expand_as(score)
    for t in range(1, scores.size(1)):
        # the same sums in the same order as Flair's ViterbiDecoder, so ties and confidences match
        best, pointer = ((scores[:, t].unsqueeze(2) + transitions) + score.unsqueeze(1)).max(dim=2)
        keep = mask[:, t].unsqueeze(1)
        score = torch.where(keep, best, score)
        pointers.append(torch.where(keep, pointer, stay))
        history.append(score)
    tag = (score + transitions[stop]).argmax(dim=1)
    path = [tag]
    for pointer in reversed(pointers):
        tag = pointer.gather(1, tag.unsqueeze(1)).squeeze(1)
        path.append(tag)
    confidences = torch.softmax(torch.stack(history, dim=1), dim=2).amax(dim=2)
    return torch.stack(path[::-1], dim=1), confidences


def tagged(label_dictionary: Dictionary, tags: torch.Tensor, confidences: torch.Tensor, lengths: torch.Tensor) -> Tagged:
    """Decoded ids and confidences as (tag, confidence) per token, padding cut off."""
    item = label_dictionary.get_item_for_index
    return [
        [(item(tag), confidence) for tag, confidence in zip(row[:length], row_confidences[:length])]
        for row, row_confidences, length in zip(tags.tolist(), confidences.tolist(), lengths.tolist())
    ]
