"""The self-contained small-BERT module: relative positions (Eq. 1-4), Whole-Word Attention (§5.2), save/load."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from flairsuite.bert.modeling_flairsuite_bert import (
    FlairsuiteBertConfig,
    FlairsuiteBertForMaskedLM,
    FlairsuiteBertForPreTraining,
    FlairsuiteBertModel,
    FlairsuiteRelativeSelfAttention,
    FlairsuiteWindowedSelfAttention,
    clipped_distances,
    continuation_token_ids,
    pool_words,
    word_ids_from_continuation,
)

torch.set_num_threads(1)

CONTINUATION = [40, 41, 42, 43]
REPO = Path(__file__).resolve().parents[1]


def tiny_config(**overrides) -> FlairsuiteBertConfig:
    """A tiny config without dropout."""
    values = dict(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        relative_clip=3,
        window=2,
    )
    values.update(overrides)
    return FlairsuiteBertConfig(**values)


def tiny_model(cls=FlairsuiteBertModel, seed: int = 0, **overrides):
    """A seeded tiny model in eval mode with continuation ids 40..43."""
    torch.manual_seed(seed)
    model = cls(tiny_config(**overrides)).eval()
    (model if isinstance(model, FlairsuiteBertModel) else model.bert).set_continuation(CONTINUATION)
    return model


def randomise_relative_tables(attention: FlairsuiteRelativeSelfAttention) -> None:
    """Give rK and rV large random values so that their effect is visible."""
    with torch.no_grad():
        attention.relative_key.weight.normal_(0, 1.0)
        attention.relative_value.weight.normal_(0, 1.0)


def project(attention: FlairsuiteRelativeSelfAttention, hidden: torch.Tensor):
    """The module's own q, k, v as (B, H, n, d)."""
    return tuple(attention.split_heads(layer(hidden)) for layer in (attention.query, attention.key, attention.value))


def naive_relative_attention(query, key, value, rel_key, rel_value, clip, allowed):
    """Eq. 1-4 the slow way: explicit (n, n) distance vectors; allowed (B, n, n) says which key each query may see."""
    length = query.shape[2]
    distance = torch.tensor([[max(-clip, min(clip, j - i)) + clip for j in range(length)] for i in range(length)])
    d_key, d_value = rel_key[distance], rel_value[distance]  # (n, n, H, d)
    scores = torch.einsum("bhid,bhjd->bhij", query, key) + torch.einsum("bhid,ijhd->bhij", query, d_key)
    scores = (scores / query.shape[-1] ** 0.5).masked_fill(~allowed[:, None], float("-inf"))
    probs = scores.softmax(-1)
    context = probs @ value + torch.einsum("bhij,ijhd->bhid", probs, d_value)
    return context.transpose(1, 2).flatten(2)


# ----------------------------------------------------------------------------------------------------------------------
# Relative positions (Eq. 1-4)
# ----------------------------------------------------------------------------------------------------------------------


def test_clipped_distance_matrix():
    """clip_tau(j - i) for tau=2, n=6; rK and rV have exactly 2 tau + 1 rows."""
    expected = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2],
            [-1, 0, 1, 2, 2, 2],
            [-2, -1, 0, 1, 2, 2],
            [-2, -2, -1, 0, 1, 2],
            [-2, -2, -2, -1, 0, 1],
            [-2, -2, -2, -2, -1, 0],
        ]
    )
    assert torch.equal(clipped_distances(6, 2), expected)
    attention = FlairsuiteRelativeSelfAttention(tiny_config(), clip=2)
    assert attention.relative_key.num_embeddings == attention.relative_value.num_embeddings == 5


def test_key_term_is_constant_beyond_the_clipping_distance():
    """Keys farther than tau from the query share one key term; nearer ones do not."""
    torch.manual_seed(1)
    attention = FlairsuiteRelativeSelfAttention(tiny_config(), clip=2)
    randomise_relative_tables(attention)
    query, value = torch.randn(1, 4, 8, 8), torch.randn(1, 4, 8, 8)
    _, probs = attention.attend(query, torch.zeros_like(query), value, torch.ones(1, 8, dtype=torch.bool))
    # with zero keys the energies are the key term alone: every key 2 or more to the right of token 0 looks alike
    far = probs[0, :, 0, 2:]
    assert torch.allclose(far, far[:, :1].expand_as(far))
    assert not torch.allclose(probs[0, :, 0, 0], probs[0, :, 0, 1])
    assert not torch.allclose(probs[0, :, 0, 1], probs[0, :, 0, 2])  # distances below tau stay distinct
    left = probs[0, :, 7, :6]
    assert torch.allclose(left, left[:, :1].expand_as(left))


def test_relative_attention_matches_the_slow_definition():
    """The gather/scatter implementation equals Eq. 1-4 with explicit (n, n) distance vectors."""
    torch.manual_seed(2)
    attention = FlairsuiteRelativeSelfAttention(tiny_config(), clip=2)
    randomise_relative_tables(attention)
    hidden = torch.randn(2, 7, 32)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 5:] = False
    context, _ = attention(hidden, mask)
    allowed = mask[:, None, :].expand(2, 7, 7)
    expected = naive_relative_attention(*project(attention, hidden), *attention.relative_tables(), 2, allowed)
    assert torch.allclose(context, expected, atol=1e-5)


def test_value_term_changes_the_output_and_zero_tables_give_plain_attention():
    """rV matters; with rK = rV = 0 the result is scaled dot-product attention."""
    torch.manual_seed(3)
    attention = FlairsuiteRelativeSelfAttention(tiny_config(), clip=2)
    randomise_relative_tables(attention)
    hidden = torch.randn(2, 6, 32)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=torch.bool)
    with_value_term, _ = attention(hidden, mask)
    with torch.no_grad():
        attention.relative_value.weight.zero_()
    without_value_term, _ = attention(hidden, mask)
    assert not torch.allclose(with_value_term, without_value_term, atol=1e-3)
    with torch.no_grad():
        attention.relative_key.weight.zero_()
    plain, _ = attention(hidden, mask)
    query, key, value = project(attention, hidden)
    reference = F.scaled_dot_product_attention(query, key, value, attn_mask=mask[:, None, None, :])
    assert torch.allclose(plain, reference.transpose(1, 2).flatten(2), atol=1e-5)


def test_windowed_attention_equals_band_masked_relative_attention():
    """mha_wind equals relative attention (clip w) restricted to |i - j| <= w."""
    torch.manual_seed(4)
    window = FlairsuiteWindowedSelfAttention(tiny_config(), clip=2)
    randomise_relative_tables(window)
    hidden = torch.randn(2, 9, 32)
    mask = torch.ones(2, 9, dtype=torch.bool)
    mask[1, 6:] = False
    context, probs = window(hidden, mask)
    assert probs.shape == (2, 4, 9, 5)  # O(n (2w+1)), no n x n matrix
    positions = torch.arange(9)
    band = (positions[None, :] - positions[:, None]).abs() <= 2
    allowed = band[None] & mask[:, None, :]
    expected = naive_relative_attention(*project(window, hidden), *window.relative_tables(), 2, allowed)
    assert torch.allclose(context[0], expected[0], atol=1e-5)
    assert torch.allclose(context[1, :6], expected[1, :6], atol=1e-5)


# ----------------------------------------------------------------------------------------------------------------------
# Words and Whole-Word Attention (§5.2)
# ----------------------------------------------------------------------------------------------------------------------


def test_word_ids_from_continuation_pieces_and_padding():
    """Word ids follow continuation pieces; padding never joins a word."""
    model = tiny_model(attention="wwa")
    ids = torch.tensor([[41, 5, 40, 41, 6, 0, 0], [0, 0, 7, 42, 8, 43, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1, 0]])
    # position 0 always starts a word; padded tokens are words of their own; a piece after padding starts a word
    assert model.word_ids(ids, mask).tolist() == [[0, 1, 1, 1, 2, 3, 4], [0, 1, 2, 2, 3, 3, 4]]
    left_padded = word_ids_from_continuation(torch.tensor([[False, True, True]]), torch.tensor([[0, 1, 1]]))
    assert left_padded.tolist() == [[0, 1, 1]]
    assert continuation_token_ids({"a": 0, "##b": 1, "##": 2, "##c": 3}) == [1, 3]


def test_mean_pooling_of_a_three_piece_word():
    """A word's vector is the mean of its pieces (Eq. 8); words without attended tokens are masked."""
    hidden = torch.arange(2 * 5 * 3, dtype=torch.float).view(2, 5, 3)
    word_ids = torch.tensor([[0, 1, 1, 1, 2], [0, 1, 2, 3, 4]])
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    words, word_mask = pool_words(hidden, word_ids, mask)
    assert words.shape == (2, 5, 3)
    assert torch.allclose(words[0, 1], hidden[0, 1:4].mean(0))
    assert torch.equal(words[1], hidden[1])
    assert word_mask.tolist() == [[True, True, False, False, False], [True] * 5]


def test_mha_wwa_attends_over_mean_pooled_words():
    """mha_wwa = word attention over the pooled words, repeated for every piece of a word."""
    model = tiny_model(attention="wwa", seed=5)
    block = model.encoder[0].attention
    randomise_relative_tables(block.word_attention)
    ids = torch.tensor([[2, 5, 40, 41, 6, 7, 3]])  # word 1 = tokens 1..3
    mask = torch.ones_like(ids, dtype=torch.bool)
    hidden = torch.randn(1, 7, 32)
    output, _ = block.mha_wwa(hidden, mask, model.word_ids(ids, mask))
    assert torch.allclose(output[0, 1], output[0, 2]) and torch.allclose(output[0, 1], output[0, 3])
    words = torch.cat([hidden[:, :1], hidden[:, 1:4].mean(1, keepdim=True), hidden[:, 4:]], dim=1)
    expected, _ = block.word_attention(words, torch.ones(1, 5, dtype=torch.bool))
    assert torch.allclose(output[0, [0, 1, 4, 5, 6]], expected[0], atol=1e-6)


def test_wwa_without_multi_piece_words_is_token_attention_plus_window():
    """With one-token words a WWA layer is token relative attention plus windowed attention."""
    model = tiny_model(attention="wwa", seed=6)
    ids = torch.tensor([[2, 5, 9, 11, 6, 7, 3, 0], [2, 8, 9, 3, 0, 0, 0, 0]])
    mask = (ids != 0).long()
    layer = model.encoder[0]
    block = layer.attention
    with torch.no_grad():
        hidden = model.embeddings(ids)
        tokens, _ = block.word_attention(hidden, mask.bool())
        windowed, _ = block.window_attention(hidden, mask.bool())
        attended = block.LayerNorm(hidden + block.dense_word(tokens) + block.dense_window(windowed))
        expected = layer.output(layer.intermediate(attended), attended)
        actual = model(ids, attention_mask=mask, output_hidden_states=True).hidden_states[1]
    assert torch.allclose(actual, expected, atol=1e-5)


# ----------------------------------------------------------------------------------------------------------------------
# Whole models
# ----------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attention", ["full", "wwa"])
def test_appended_padding_does_not_change_real_positions(attention):
    """Extra padding leaves the outputs at real tokens unchanged."""
    model = tiny_model(attention=attention, seed=7)
    ids = torch.tensor([[2, 5, 40, 41, 6, 3], [2, 9, 42, 3, 0, 0]])
    mask = (ids != 0).long()
    padded_ids = torch.cat([ids, torch.zeros(2, 5, dtype=torch.long)], dim=1)
    padded_mask = torch.cat([mask, torch.zeros(2, 5, dtype=torch.long)], dim=1)
    with torch.no_grad():
        short = model(ids, attention_mask=mask).last_hidden_state
        long = model(padded_ids, attention_mask=padded_mask).last_hidden_state
    assert torch.allclose(short[0], long[0, :6], atol=1e-5)
    assert torch.allclose(short[1, :4], long[1, :4], atol=1e-5)


@pytest.mark.parametrize("attention", ["full", "wwa"])
def test_gradients_reach_every_parameter(attention):
    """One backward pass reaches rK, rV and every other parameter."""
    model = tiny_model(FlairsuiteBertForPreTraining, attention=attention, seed=8).train()
    ids = torch.tensor([[2, 5, 40, 41, 6, 3, 1], [2, 9, 42, 3, 0, 0, 0]])
    output = model(ids, attention_mask=(ids != 0).long(), token_type_ids=(ids == 9).long(), labels=ids, next_sentence_label=torch.tensor([0, 1]))
    output.loss.backward()
    names = [name for name, _ in model.named_parameters()]
    assert any("relative_key" in name for name in names) and any("relative_value" in name for name in names)
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_mlm_head_is_tied_and_loss_ignores_minus_100():
    """The decoder shares the word embeddings; the loss counts only labels != -100."""
    model = tiny_model(FlairsuiteBertForMaskedLM, seed=9)
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert model.bert.pooler is None
    ids = torch.tensor([[2, 5, 40, 41, 6, 3]])
    labels = torch.full_like(ids, -100)
    labels[0, 2] = 7
    output = model(ids, labels=labels)
    assert output.logits.shape == (1, 6, 50)
    assert torch.allclose(output.loss, F.cross_entropy(output.logits[0, 2:3], torch.tensor([7])))
    assert torch.allclose(model.cls.predictions(model.bert(ids).last_hidden_state), output.logits)


def test_config_rejects_unknown_attention():
    """Only 'full' and 'wwa' are accepted."""
    with pytest.raises(ValueError, match=r"^attention must be one of .*, not 'sparse'$"):
        FlairsuiteBertConfig(attention="sparse")


def test_resizing_the_vocabulary_resizes_continuation():
    """resize_token_embeddings grows `continuation`; new ids start words."""
    model = tiny_model(FlairsuiteBertForMaskedLM, attention="wwa")
    model.resize_token_embeddings(53)
    assert model.bert.continuation.shape == (53,) and model.bert.continuation[40:44].all()
    assert model.bert.word_ids(torch.tensor([[2, 52, 40]])).tolist() == [[0, 1, 1]]
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight


# ----------------------------------------------------------------------------------------------------------------------
# Saving and loading
# ----------------------------------------------------------------------------------------------------------------------

LOADER = textwrap.dedent(
    """
    import json, sys
    import torch
    torch.set_num_threads(1)
    from transformers import AutoModel, AutoModelForMaskedLM

    folder, data = sys.argv[1], torch.load(sys.argv[2])
    def hidden(model):
        with torch.no_grad():
            return model(data["ids"], attention_mask=data["mask"]).last_hidden_state
    def matches(model):
        return torch.allclose(hidden(model), data["expected"], atol=1e-5)
    report = {}
    remote = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
    remote_mlm = AutoModelForMaskedLM.from_pretrained(folder, trust_remote_code=True).eval()
    report["remote_matches"] = matches(remote) and matches(remote_mlm.bert)
    report["remote_continuation"] = torch.equal(remote.continuation, data["continuation"])
    report["remote_tied"] = remote_mlm.cls.predictions.decoder.weight is remote_mlm.bert.embeddings.word_embeddings.weight
    report["remote_module"] = type(remote).__module__
    report["flairsuite_imported"] = any(name.split(".")[0] == "flairsuite" for name in sys.modules)
    import flairsuite.bert  # noqa: F401
    local = AutoModel.from_pretrained(folder).eval()
    report["local_module"] = type(local).__module__
    report["local_matches"] = matches(local)
    report["local_continuation"] = torch.equal(local.continuation, data["continuation"])
    print(json.dumps(report))
    """
)


def test_save_pretrained_folder_loads_with_and_without_remote_code(tmp_path):
    """The folder loads via remote code without flairsuite, and via the registration without trust_remote_code."""
    model = tiny_model(FlairsuiteBertForMaskedLM, attention="wwa", seed=10)
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    assert (folder / "modeling_flairsuite_bert.py").is_file()
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "flairsuite_bert"
    assert config["auto_map"]["AutoModel"] == "modeling_flairsuite_bert.FlairsuiteBertModel"
    assert config["auto_map"]["AutoModelForMaskedLM"] == "modeling_flairsuite_bert.FlairsuiteBertForMaskedLM"

    reloaded = FlairsuiteBertForMaskedLM.from_pretrained(folder).eval()
    assert reloaded.cls.predictions.decoder.weight is reloaded.bert.embeddings.word_embeddings.weight
    assert torch.equal(reloaded.bert.continuation, model.bert.continuation) and reloaded.bert.continuation.sum() == 4

    ids = torch.tensor([[2, 5, 40, 41, 6, 3], [2, 9, 42, 3, 0, 0]])
    mask = (ids != 0).long()
    with torch.no_grad():
        expected = model.bert(ids, attention_mask=mask).last_hidden_state
    torch.save({"ids": ids, "mask": mask, "expected": expected, "continuation": model.bert.continuation}, tmp_path / "data.pt")
    (tmp_path / "loader.py").write_text(LOADER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules"), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(tmp_path / "loader.py"), str(folder), str(tmp_path / "data.pt")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["flairsuite_imported"] is False
    assert report["remote_module"].startswith("transformers_modules.")
    assert report["remote_matches"] and report["remote_continuation"] and report["remote_tied"]
    assert report["local_module"] == "flairsuite.bert.modeling_flairsuite_bert"
    assert report["local_matches"] and report["local_continuation"]
