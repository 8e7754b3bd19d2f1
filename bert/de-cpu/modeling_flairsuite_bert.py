"""Small BERT encoders with relative positions and optional Whole-Word Attention (WWA).

Design
------
* No absolute position embeddings: the embedding layer is word + token-type embeddings, LayerNorm and dropout.
  Order enters only through Shaw-style relative positions inside every attention (paper §3.2, Eq. 1-4)::

      e_ij = q_i . (k_j + rK[clip(j - i)]) / sqrt(d_k)        y_i = sum_j a_ij (v_j + rV[clip(j - i)])

  with ``clip(x) = max(-tau, min(tau, x))``.  rK and rV are ``nn.Embedding(2 tau + 1, hidden_size)`` tables read as
  ``(2 tau + 1, heads, d_k)``: every head has its own vector per distance.  The key term is computed as ``q . rK`` for
  the ``2 tau + 1`` distances and gathered with an ``(n, n)`` index; the value term sums the attention mass per
  distance bucket (``scatter_add_``) and multiplies it with rV.  Nothing of size ``(B, H, n, n, d_k)`` is built.
  ``config.max_position_embeddings`` is therefore only a length limit for tokenizers and callers.
* ``attention="full"``: every layer runs that relative attention over the tokens (post-LayerNorm, as in BERT).
* ``attention="wwa"`` (paper §5.2, Eq. 8-9): every layer runs two attentions side by side and adds both to the
  residual::

      LayerNorm(x + dropout(dense_word(mha_wwa(x))) + dropout(dense_window(mha_wind(x))))

  ``mha_wwa`` mean-pools the token vectors of each word (Eq. 8), runs relative attention over the word sequence
  (word-wise distances, clip tau) and copies every word's output back to its tokens.  ``mha_wind`` is a separate
  relative attention (own q, k, v and own rK/rV over the offsets -omega..omega) in which token i sees only the tokens
  i-omega..i+omega; it is computed from ``unfold``-ed windows in O(n (2 omega + 1)) memory.  Each of the two has its
  own output projection, so the layer can weigh the coarse word view and the local token view independently.
* Words are found by the model itself: the persistent bool buffer ``continuation`` (one entry per vocabulary id,
  saved with the weights) marks WordPiece continuation pieces (``##...``).  A token starts a new word unless it is a
  continuation piece; the first token, every padded token (attention_mask 0) and every token right after a padded
  one always start a word, so padding never merges with real text.  Ids beyond the buffer (added tokens) start words;
  with ``inputs_embeds`` instead of ids every token is a word.  ``resize_token_embeddings`` resizes the buffer too.
* Char-Entity attention (Jia et al. 2020, §3.2, Eq. 3-5), with ``attention="full"`` and ``config.entities`` (a lexicon:
  each entry a list of token ids): the model matches the entries in its input ids itself (Algorithm 1, maximum
  matching: the longest entry at each position, left to right; entries of ``entity_min_length`` tokens or more) and
  labels every token with its entry (index + 1; 0 for none). In every layer a token with an entry mixes the entry's
  embedding (``entity_embeddings``, ``entity_size`` wide) into its key and value::

      k_t = h_t W_k                      if e_t = 0        k_t = (h_t W_k + E_ent[e_t] W_e,k) / 2   otherwise
      v_t = h_t W_v                      if e_t = 0        v_t = (h_t W_v + E_ent[e_t] W_e,v) / 2   otherwise

  so the attention score of token i to token t is the geometric mean of its char-to-char and char-to-entity scores
  (Eq. 4-5). The entries are saved in ``config.json``; the matcher is a dict trie built on first use.
* ``head_mask`` multiplies the attention probabilities of every attention in a layer; ``position_ids`` is ignored.
* Every config carries an ``auto_map`` for all four Auto classes (config, model, masked LM, pre-training):
  ``save_pretrained`` alone would only record the class that saved, and ``AutoModel.from_pretrained(folder,
  trust_remote_code=True)`` on a masked-LM folder would then fail.

The file is deliberately self-contained (only ``math``, ``typing``, ``torch`` and ``transformers`` imports):
``save_pretrained`` copies it next to the weights, so ``AutoModel.from_pretrained(folder, trust_remote_code=True)``
works without flairsuite installed; with flairsuite installed, ``import flairsuite.bert`` registers the same classes
so no remote code is needed.
"""

import math
from typing import List, Mapping, Optional, Tuple

import torch
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutputWithPooling, MaskedLMOutput
from transformers.models.bert.modeling_bert import (
    BertForPreTrainingOutput,
    BertIntermediate,
    BertLMPredictionHead,
    BertOnlyMLMHead,
    BertOutput,
    BertPooler,
    BertPreTrainingHeads,
)

ATTENTION_KINDS = ("full", "wwa")
_MODULE = __name__.rsplit(".", 1)[-1]
AUTO_MAP = {
    "AutoConfig": f"{_MODULE}.FlairsuiteBertConfig",
    "AutoModel": f"{_MODULE}.FlairsuiteBertModel",
    "AutoModelForMaskedLM": f"{_MODULE}.FlairsuiteBertForMaskedLM",
    "AutoModelForPreTraining": f"{_MODULE}.FlairsuiteBertForPreTraining",
}


class FlairsuiteBertConfig(PretrainedConfig):
    """Configuration of a small relative-position BERT; ``attention`` is "full" or "wwa" (Whole-Word Attention)."""

    model_type = "flairsuite_bert"

    def __init__(
        self,
        vocab_size: int = 30000,
        hidden_size: int = 256,
        num_hidden_layers: int = 4,
        num_attention_heads: int = 4,
        intermediate_size: int = 1024,
        hidden_act: str = "gelu",
        hidden_dropout_prob: float = 0.1,
        attention_probs_dropout_prob: float = 0.1,
        max_position_embeddings: int = 512,
        type_vocab_size: int = 2,
        initializer_range: float = 0.02,
        layer_norm_eps: float = 1e-12,
        pad_token_id: int = 0,
        attention: str = "full",
        relative_clip: int = 16,
        window: int = 5,
        entities: Optional[List[List[int]]] = None,
        entity_size: int = 64,
        entity_min_length: int = 1,
        **kwargs,
    ):
        super().__init__(pad_token_id=pad_token_id, **kwargs)
        if attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, not {attention!r}")
        if entities and attention != "full":
            raise ValueError("Char-Entity attention (entities) needs attention 'full'")
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size {hidden_size} is not a multiple of num_attention_heads {num_attention_heads}")
        if relative_clip < 0 or window < 0:
            raise ValueError(f"relative_clip ({relative_clip}) and window ({window}) must not be negative")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.attention = attention
        self.relative_clip = relative_clip
        self.window = window
        self.entities = [list(entry) for entry in entities] if entities else None
        self.entity_size = entity_size
        self.entity_min_length = entity_min_length
        # save_pretrained only records the saving class; every Auto class needs its entry for trust_remote_code.
        self.auto_map = {**AUTO_MAP, **(getattr(self, "auto_map", None) or {})}


# ----------------------------------------------------------------------------------------------------------------------
# Positions and words
# ----------------------------------------------------------------------------------------------------------------------


def clipped_distances(length: int, clip: int, device: Optional[torch.device] = None) -> torch.Tensor:
    """(length, length) long matrix of clip_tau(j - i): row i is the query, column j the key."""
    positions = torch.arange(length, device=device)
    return (positions[None, :] - positions[:, None]).clamp(-clip, clip)


def continuation_token_ids(vocab: Mapping[str, int], prefix: str = "##") -> List[int]:
    """Ids of the WordPiece continuation pieces (tokens starting with `prefix`) of a token -> id mapping."""
    return sorted(index for token, index in vocab.items() if token.startswith(prefix) and len(token) > len(prefix))


def word_ids_from_continuation(is_continuation: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """(B, n) word index 0..m-1 of every token, given which tokens continue the previous token's word.

    A token starts a word unless it is a continuation; position 0, padded tokens and tokens right after a padded
    token always start one (each padded token is a word of its own).
    """
    starts = ~is_continuation.bool()
    if attention_mask is not None:
        attended = attention_mask.bool()
        after_padding = torch.zeros_like(attended)
        after_padding[:, 1:] = ~attended[:, :-1]
        starts = starts | ~attended | after_padding
    starts = starts.clone()
    starts[:, 0] = True
    return starts.long().cumsum(-1) - 1


def pool_words(hidden: torch.Tensor, word_ids: torch.Tensor, attention_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Mean token vector of every word (Eq. 8) as (B, m, d), and (B, m) True where a word has an attended token."""
    batch, _, width = hidden.shape
    num_words = int(word_ids.max()) + 1 if word_ids.numel() else 0
    sums = hidden.new_zeros(batch, num_words, width).scatter_add_(1, word_ids.unsqueeze(-1).expand_as(hidden), hidden)
    counts = hidden.new_zeros(batch, num_words).scatter_add_(1, word_ids, torch.ones_like(word_ids, dtype=hidden.dtype))
    attended = hidden.new_zeros(batch, num_words).scatter_add_(1, word_ids, attention_mask.to(hidden.dtype))
    return sums / counts.clamp(min=1).unsqueeze(-1), attended > 0


def unpool_words(words: torch.Tensor, word_ids: torch.Tensor) -> torch.Tensor:
    """Repeat every word vector (B, m, d) for each of its tokens -> (B, n, d)."""
    return words.gather(1, word_ids.unsqueeze(-1).expand(-1, -1, words.shape[-1]))


def sliding_windows(tensor: torch.Tensor, dim: int, radius: int, fill=0) -> torch.Tensor:
    """Windows of 2*radius+1 neighbours along `dim`, padded with `fill`: size n at `dim` -> n, plus a last window axis."""
    shape = list(tensor.shape)
    shape[dim] = radius
    padding = tensor.new_full(shape, fill)
    return torch.cat([padding, tensor, padding], dim=dim).unfold(dim, 2 * radius + 1, 1)


# ----------------------------------------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------------------------------------


class FlairsuiteRelativeSelfAttention(nn.Module):
    """Multi-head self-attention with clipped relative key and value terms (Eq. 1-4); returns the merged heads.

    The output is the concatenated head context (B, n, hidden) before any output projection, plus the attention
    probabilities (B, H, n, n).
    """

    def __init__(self, config: FlairsuiteBertConfig, clip: int):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_size = config.hidden_size // config.num_attention_heads
        self.clip = clip
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.relative_key = nn.Embedding(2 * clip + 1, config.hidden_size)
        self.relative_value = nn.Embedding(2 * clip + 1, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        if getattr(config, "entities", None) and config.attention == "full":  # W_e,k and W_e,v of Eq. 3
            self.entity_key = nn.Linear(config.entity_size, config.hidden_size, bias=False)
            self.entity_value = nn.Linear(config.entity_size, config.hidden_size, bias=False)

    def split_heads(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, n, hidden) -> (B, H, n, d_k)."""
        batch, length, _ = hidden.shape
        return hidden.view(batch, length, self.num_heads, self.head_size).transpose(1, 2)

    def merge_heads(self, context: torch.Tensor) -> torch.Tensor:
        """(B, H, n, d_k) -> (B, n, hidden)."""
        batch, _, length, _ = context.shape
        return context.transpose(1, 2).reshape(batch, length, self.num_heads * self.head_size)

    def relative_tables(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """rK and rV as (2*clip+1, H, d_k); row r belongs to the distance r - clip."""
        shape = (2 * self.clip + 1, self.num_heads, self.head_size)
        return self.relative_key.weight.view(shape), self.relative_value.weight.view(shape)

    def probabilities(self, scores: torch.Tensor, key_mask: torch.Tensor, head_mask: Optional[torch.Tensor]) -> torch.Tensor:
        """Softmax over the last axis with masked keys set to the dtype's minimum, then dropout and head mask."""
        scores = scores.masked_fill(~key_mask, torch.finfo(scores.dtype).min)
        probs = self.dropout(scores.softmax(dim=-1))
        return probs if head_mask is None else probs * head_mask

    def attend(self, query, key, value, mask, head_mask=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Relative attention of (B, H, n, d_k) query/key/value; mask (B, n) True for keys that may be attended."""
        batch, heads, length, _ = query.shape
        rel_key, rel_value = self.relative_tables()
        index = (clipped_distances(length, self.clip, query.device) + self.clip).expand(batch, heads, length, length)
        key_term = torch.einsum("bhid,rhd->bhir", query, rel_key).gather(-1, index)
        scores = (query @ key.transpose(-1, -2) + key_term) / math.sqrt(self.head_size)
        probs = self.probabilities(scores, mask[:, None, None, :], head_mask)
        mass = probs.new_zeros(batch, heads, length, rel_value.shape[0]).scatter_add_(-1, index, probs)
        context = probs @ value + torch.einsum("bhir,rhd->bhid", mass, rel_value)
        return self.merge_heads(context), probs

    def forward(
        self, hidden: torch.Tensor, mask: torch.Tensor, head_mask: Optional[torch.Tensor] = None,
        entities: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Project (B, n, hidden) to heads and attend; mask (B, n) bool. `entities`: (vectors (B, n, entity_size), present
        (B, n) bool): keys and values of tokens with an entity mix in the entity's (Char-Entity attention, Eq. 3)."""
        key, value = self.key(hidden), self.value(hidden)
        if entities is not None:
            vectors, present = entities
            mix = present[..., None]
            key = torch.where(mix, 0.5 * (key + self.entity_key(vectors)), key)
            value = torch.where(mix, 0.5 * (value + self.entity_value(vectors)), value)
        query, key, value = self.split_heads(self.query(hidden)), self.split_heads(key), self.split_heads(value)
        return self.attend(query, key, value, mask, head_mask)


class FlairsuiteWindowedSelfAttention(FlairsuiteRelativeSelfAttention):
    """mha_wind: token i attends only to tokens i-w..i+w, with relative terms for the offsets -w..w (clip = w).

    Probabilities come back as (B, H, n, 2w+1): slot s is the key at offset s - w.
    """

    def attend(self, query, key, value, mask, head_mask=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Windowed relative attention in O(n (2w+1)) memory via padded, unfolded keys and values."""
        radius = self.clip
        rel_key, rel_value = self.relative_tables()
        keys = sliding_windows(key, 2, radius)  # (B, H, n, d, W)
        values = sliding_windows(value, 2, radius)
        key_mask = sliding_windows(mask.bool(), 1, radius, fill=False)  # (B, n, W)
        scores = torch.einsum("bhid,bhidw->bhiw", query, keys) + torch.einsum("bhid,whd->bhiw", query, rel_key)
        probs = self.probabilities(scores / math.sqrt(self.head_size), key_mask[:, None], head_mask)
        context = torch.einsum("bhiw,bhidw->bhid", probs, values) + torch.einsum("bhiw,whd->bhid", probs, rel_value)
        return self.merge_heads(context), probs


class FlairsuiteBertFullAttention(nn.Module):
    """Relative token attention block: LayerNorm(x + dropout(dense(mha(x))))."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__()
        self.self = FlairsuiteRelativeSelfAttention(config, config.relative_clip)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden, mask, word_ids=None, head_mask=None, entities=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Return the block output and the (B, H, n, n) attention probabilities; word_ids is ignored."""
        context, probs = self.self(hidden, mask, head_mask, entities)
        return self.LayerNorm(hidden + self.dropout(self.dense(context))), probs


class FlairsuiteBertWholeWordAttention(nn.Module):
    """WWA block: LayerNorm(x + dropout(dense_word(mha_wwa(x))) + dropout(dense_window(mha_wind(x))))."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__()
        self.word_attention = FlairsuiteRelativeSelfAttention(config, config.relative_clip)
        self.window_attention = FlairsuiteWindowedSelfAttention(config, config.window)
        self.dense_word = nn.Linear(config.hidden_size, config.hidden_size)
        self.dense_window = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def mha_wwa(self, hidden, mask, word_ids, head_mask=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Word-wise attention: pool tokens to words, attend over words, repeat back; probs are (B, H, m, m)."""
        words, word_mask = pool_words(hidden, word_ids, mask)
        context, probs = self.word_attention(words, word_mask, head_mask)
        return unpool_words(context, word_ids), probs

    def mha_wind(self, hidden, mask, head_mask=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Windowed token attention; probs are (B, H, n, 2w+1)."""
        return self.window_attention(hidden, mask, head_mask)

    def forward(self, hidden, mask, word_ids, head_mask=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Return the block output and the word-level attention probabilities."""
        word_context, probs = self.mha_wwa(hidden, mask, word_ids, head_mask)
        window_context, _ = self.mha_wind(hidden, mask, head_mask)
        combined = hidden + self.dropout(self.dense_word(word_context)) + self.dropout(self.dense_window(window_context))
        return self.LayerNorm(combined), probs


class FlairsuiteBertLayer(nn.Module):
    """Encoder layer: attention block ("full" or "wwa") followed by BERT's feed-forward with post-LayerNorm."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__()
        block = FlairsuiteBertWholeWordAttention if config.attention == "wwa" else FlairsuiteBertFullAttention
        self.attention = block(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden, mask, word_ids=None, head_mask=None, entities=None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Return the layer output and the attention probabilities of its attention block (`entities`: full attention only)."""
        attended, probs = self.attention(hidden, mask, word_ids, head_mask, entities) if entities is not None else self.attention(
            hidden, mask, word_ids, head_mask)
        return self.output(self.intermediate(attended), attended), probs


class FlairsuiteBertEmbeddings(nn.Module):
    """Word + token-type embeddings, LayerNorm and dropout; no absolute positions."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids=None, token_type_ids=None, inputs_embeds=None) -> torch.Tensor:
        """Embed ids (or take `inputs_embeds`) and add token-type embeddings (type 0 when not given)."""
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros(inputs_embeds.shape[:-1], dtype=torch.long, device=inputs_embeds.device)
        return self.dropout(self.LayerNorm(inputs_embeds + self.token_type_embeddings(token_type_ids)))


# ----------------------------------------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------------------------------------


class FlairsuiteBertPreTrainedModel(PreTrainedModel):
    """Shared config class, prefix and weight initialisation."""

    config_class = FlairsuiteBertConfig
    base_model_prefix = "bert"

    def _init_weights(self, module: nn.Module) -> None:
        """normal(0, initializer_range) for Linear/Embedding (rK/rV included), zero biases, LayerNorm ones/zeros."""
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.weight.data.fill_(1.0)
            module.bias.data.zero_()
        elif isinstance(module, BertLMPredictionHead):
            module.bias.data.zero_()


class FlairsuiteBertModel(FlairsuiteBertPreTrainedModel):
    """Bare encoder: embeddings, relative ("full") or Whole-Word-Attention ("wwa") layers, optional pooler."""

    def __init__(self, config: FlairsuiteBertConfig, add_pooling_layer: bool = True):
        super().__init__(config)
        self.embeddings = FlairsuiteBertEmbeddings(config)
        self.encoder = nn.ModuleList(FlairsuiteBertLayer(config) for _ in range(config.num_hidden_layers))
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.register_buffer("continuation", torch.zeros(config.vocab_size, dtype=torch.bool), persistent=True)
        entities = getattr(config, "entities", None)
        self.entity_embeddings = nn.Embedding(len(entities) + 1, config.entity_size, padding_idx=0) if entities else None
        self._entity_trie: Optional[dict] = None
        self.post_init()

    def entity_trie(self) -> dict:
        """The entries as a trie of token ids (a node's key -1 holds the entry's index + 1), built on first use."""
        if self._entity_trie is None:
            root: dict = {}
            for index, entry in enumerate(self.config.entities or []):
                if len(entry) >= self.config.entity_min_length:
                    node = root
                    for token in entry:
                        node = node.setdefault(int(token), {})
                    node[-1] = index + 1
            self._entity_trie = root
        return self._entity_trie

    def entity_index(self, input_ids: torch.Tensor) -> torch.Tensor:
        """(B, n) the entry matched over every token (index + 1; 0: none), by maximum matching (Algorithm 1) per row.

        A match covers whole words: it starts at a word start and ends before one (or at the row's end), so
        the entry `Berlin` does not match the first piece of `Berlin ##er`. Character lexicons (one token per
        character, no `##` pieces) match anywhere, as the paper's Algorithm 1.
        """
        trie, rows = self.entity_trie(), input_ids.tolist()
        continued = self.continuation[input_ids.clamp(0, self.continuation.numel() - 1)].tolist()
        index = torch.zeros(input_ids.shape, dtype=torch.long)
        for row, ids in enumerate(rows):
            inside, start = continued[row], 0
            while start < len(ids):
                node, found, end = trie, None, start
                while not inside[start] and end < len(ids) and ids[end] in node:
                    node = node[ids[end]]
                    end += 1
                    if -1 in node and (end == len(ids) or not inside[end]):
                        found = (end, node[-1])
                if found is None:
                    start += 1
                    continue
                index[row, start : found[0]] = found[1]
                start = found[0]
        return index.to(input_ids.device)

    def get_input_embeddings(self) -> nn.Embedding:
        """The word embedding table."""
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        """Replace the word embeddings; `continuation` is resized to match (new ids are word starts)."""
        self.embeddings.word_embeddings = value
        size = value.num_embeddings
        resized = torch.zeros(size, dtype=torch.bool, device=self.continuation.device)
        kept = min(size, self.continuation.numel())
        resized[:kept] = self.continuation[:kept]
        self.continuation = resized

    def set_continuation(self, token_ids: List[int]) -> None:
        """Mark exactly `token_ids` as WordPiece continuation pieces ("##...")."""
        index = torch.as_tensor(list(token_ids), dtype=torch.long, device=self.continuation.device)
        if index.numel() and (int(index.min()) < 0 or int(index.max()) >= self.continuation.numel()):
            raise ValueError(f"continuation ids must lie in 0..{self.continuation.numel() - 1}")
        self.continuation.zero_()
        self.continuation[index] = True

    def word_ids(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, n) word index of every token, from the `continuation` buffer (see word_ids_from_continuation)."""
        size = self.continuation.numel()
        is_continuation = self.continuation[input_ids.clamp(0, size - 1)] & (input_ids < size)
        return word_ids_from_continuation(is_continuation, attention_mask)

    def _word_ids_or_none(self, input_ids, mask, shape) -> Optional[torch.Tensor]:
        """Word ids for WWA layers (every token its own word when only embeddings are given); None for "full"."""
        if self.config.attention != "wwa":
            return None
        if input_ids is None:
            return word_ids_from_continuation(torch.zeros(shape, dtype=torch.bool, device=mask.device), mask)
        return self.word_ids(input_ids, mask)

    def forward(
        self,
        input_ids: Optional[torch.Tensor] = None,
        attention_mask: Optional[torch.Tensor] = None,
        token_type_ids: Optional[torch.Tensor] = None,
        position_ids: Optional[torch.Tensor] = None,
        head_mask: Optional[torch.Tensor] = None,
        inputs_embeds: Optional[torch.Tensor] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        return_dict: Optional[bool] = None,
        **kwargs,
    ):
        """Encode a batch. `position_ids` is accepted and ignored (positions are relative).

        `attentions` (when asked) holds per layer the token probabilities (B, H, n, n) for "full" and the word-level
        probabilities (B, H, m, m) for "wwa".
        """
        output_attentions = self.config.output_attentions if output_attentions is None else output_attentions
        output_hidden_states = self.config.output_hidden_states if output_hidden_states is None else output_hidden_states
        return_dict = self.config.use_return_dict if return_dict is None else return_dict
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("pass exactly one of input_ids and inputs_embeds")
        shape = input_ids.shape if input_ids is not None else inputs_embeds.shape[:-1]
        device = input_ids.device if input_ids is not None else inputs_embeds.device
        mask = torch.ones(shape, dtype=torch.bool, device=device) if attention_mask is None else attention_mask.bool()
        word_ids = self._word_ids_or_none(input_ids, mask, shape)
        entities = None
        if self.entity_embeddings is not None and input_ids is not None:
            matched = self.entity_index(input_ids) * mask
            entities = (self.entity_embeddings(matched), matched > 0)
        hidden = self.embeddings(input_ids, token_type_ids, inputs_embeds)
        head_masks = self.get_head_mask(head_mask, self.config.num_hidden_layers)
        all_hidden = (hidden,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer, layer_head_mask in zip(self.encoder, head_masks):
            hidden, probs = layer(hidden, mask, word_ids, layer_head_mask, entities)
            all_hidden = all_hidden + (hidden,) if output_hidden_states else None
            all_attentions = all_attentions + (probs,) if output_attentions else None
        pooled = self.pooler(hidden) if self.pooler is not None else None
        if not return_dict:
            return tuple(value for value in (hidden, pooled, all_hidden, all_attentions) if value is not None)
        return BaseModelOutputWithPooling(last_hidden_state=hidden, pooler_output=pooled, hidden_states=all_hidden, attentions=all_attentions)


def _cross_entropy(logits: torch.Tensor, labels: Optional[torch.Tensor], classes: int) -> Optional[torch.Tensor]:
    """Mean cross-entropy over labels != -100, or None without labels."""
    if labels is None:
        return None
    return nn.functional.cross_entropy(logits.reshape(-1, classes), labels.reshape(-1), ignore_index=-100)


class _TiedLMHeadMixin:
    """Output embeddings = the MLM decoder, tied to the word embeddings by PreTrainedModel.tie_weights()."""

    _tied_weights_keys = ["cls.predictions.decoder.weight", "cls.predictions.decoder.bias"]

    def get_output_embeddings(self) -> nn.Linear:
        """The vocabulary decoder of the MLM head."""
        return self.cls.predictions.decoder

    def set_output_embeddings(self, new_embeddings: nn.Linear) -> None:
        """Replace the decoder (and keep the head's bias pointing at the decoder bias)."""
        self.cls.predictions.decoder = new_embeddings
        self.cls.predictions.bias = new_embeddings.bias


class FlairsuiteBertForMaskedLM(_TiedLMHeadMixin, FlairsuiteBertPreTrainedModel):
    """Encoder without pooler plus BERT's MLM head (`.cls.predictions`), decoder tied to the word embeddings."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__(config)
        self.bert = FlairsuiteBertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.post_init()

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        head_mask=None,
        inputs_embeds=None,
        labels=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
        **kwargs,
    ):
        """Vocabulary logits for every token; loss = cross-entropy over `labels` != -100 when labels are given."""
        return_dict = self.config.use_return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, head_mask, inputs_embeds, output_attentions, output_hidden_states, return_dict=True
        )
        logits = self.cls(outputs.last_hidden_state)
        loss = _cross_entropy(logits, labels, self.config.vocab_size)
        if not return_dict:
            rest = tuple(value for value in (logits, outputs.hidden_states, outputs.attentions) if value is not None)
            return rest if loss is None else (loss,) + rest
        return MaskedLMOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions)


class FlairsuiteBertForPreTraining(_TiedLMHeadMixin, FlairsuiteBertPreTrainedModel):
    """Encoder with pooler plus BERT's MLM and sentence-pair heads (`.cls.predictions`, `.cls.seq_relationship`)."""

    def __init__(self, config: FlairsuiteBertConfig):
        super().__init__(config)
        self.bert = FlairsuiteBertModel(config, add_pooling_layer=True)
        self.cls = BertPreTrainingHeads(config)
        self.post_init()

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        head_mask=None,
        inputs_embeds=None,
        labels=None,
        next_sentence_label=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
        **kwargs,
    ):
        """MLM and sentence-pair (NSP/SOP) logits; loss = sum of the losses whose labels are given (None if neither)."""
        return_dict = self.config.use_return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, head_mask, inputs_embeds, output_attentions, output_hidden_states, return_dict=True
        )
        prediction_logits, relationship_logits = self.cls(outputs.last_hidden_state, outputs.pooler_output)
        losses = [_cross_entropy(prediction_logits, labels, self.config.vocab_size), _cross_entropy(relationship_logits, next_sentence_label, 2)]
        losses = [loss for loss in losses if loss is not None]
        loss = sum(losses[1:], losses[0]) if losses else None
        if not return_dict:
            rest = tuple(value for value in (prediction_logits, relationship_logits, outputs.hidden_states, outputs.attentions) if value is not None)
            return rest if loss is None else (loss,) + rest
        return BertForPreTrainingOutput(
            loss=loss,
            prediction_logits=prediction_logits,
            seq_relationship_logits=relationship_logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )


FlairsuiteBertConfig.register_for_auto_class()
FlairsuiteBertModel.register_for_auto_class("AutoModel")
FlairsuiteBertForMaskedLM.register_for_auto_class("AutoModelForMaskedLM")
FlairsuiteBertForPreTraining.register_for_auto_class("AutoModelForPreTraining")
