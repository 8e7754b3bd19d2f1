"""The stacked embedding tensor of a batch of sentences, computed straight from a tagger's embeddings.

Flair embeds token by token: every token stores one vector per embedding, and the tagger concatenates
them, in the sorted order of the embeddings' names, into a padded tensor. Here every embedding of the
stack gives one (tokens, dim) tensor for the whole batch, and the stack is their concatenation in that
same order:

- `FlairEmbeddings` over an LSTM language model: the LM's hidden states over the batch's strings
  (Flair's markers, reversal and lower-casing), taken at Flair's per-token offsets, computed with
  `inference.lstm` (int8 when quantised);
- `WordEmbeddings`: Flair's own vocabulary lookup;
- any other embedding: Flair's own `embed`, read back and cleared from the tokens.
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from flair.data import Sentence
from flair.embeddings import FlairEmbeddings, StackedEmbeddings, TokenEmbeddings, WordEmbeddings

from flairsuite.inference.lstm import Affine, Recurrence, doubled_cell_gate

Featurizer = Callable[[list[Sentence]], torch.Tensor]  # sentences -> (their tokens, dim), in order


def leaves(embeddings: TokenEmbeddings) -> list[TokenEmbeddings]:
    """The embeddings of a (possibly nested) stack, or the embedding itself."""
    if isinstance(embeddings, StackedEmbeddings):
        return [leaf for embedding in embeddings.embeddings for leaf in leaves(embedding)]
    return [embeddings]


def lstm_lm(embedding: TokenEmbeddings) -> bool:
    """A FlairEmbeddings whose LM is a plain unidirectional LSTM with biases (every Flair character LM)."""
    if not isinstance(embedding, FlairEmbeddings):
        return False
    rnn = embedding.lm.rnn
    return isinstance(rnn, torch.nn.LSTM) and rnn.bias and not rnn.bidirectional and rnn.proj_size == 0


class CharLMFeatures:
    """`FlairEmbeddings` vectors: the LM's hidden state after each token (Flair's offsets)."""

    def __init__(self, embedding: FlairEmbeddings, quantize: bool) -> None:
        self.embedding = embedding
        lm = embedding.lm
        self.dictionary = lm.dictionary
        self.start = lm.document_delimiter if "document_delimiter" in lm.__dict__ else "\n"
        rnn = lm.rnn
        weights = [(doubled_cell_gate(getattr(rnn, f"weight_ih_l{k}")), doubled_cell_gate(getattr(rnn, f"bias_ih_l{k}") + getattr(rnn, f"bias_hh_l{k}"))) for k in range(rnn.num_layers)]
        # the first layer's input projection of every character, looked up per step
        self.table = lm.encoder.weight.detach() @ weights[0][0].T + weights[0][1]
        self.inputs = [Affine(weight, bias, quantize) for weight, bias in weights[1:]]
        self.recurrences = [Recurrence(getattr(rnn, f"weight_hh_l{k}"), quantize) for k in range(rnn.num_layers)]
        self.proj = None if lm.proj is None else Affine(lm.proj.weight, lm.proj.bias, quantize)

    def text(self, sentence: Sentence) -> str:
        """The string Flair feeds the LM for `sentence` (before markers and reversal)."""
        text = sentence.to_tokenized_string() if self.embedding.tokenized_lm else sentence.to_plain_string()
        return text.lower() if self.embedding.is_lower else text

    def positions(self, sentence: Sentence, text: str) -> list[int]:
        """Per token, the index of its vector in the LM's states over the marked string (Flair's loop)."""
        forward, backward = len(self.start), len(text) + len(self.start)
        shift = 0 if self.embedding.with_whitespace else 1
        found = []
        for token in sentence.tokens:
            forward += len(token.text)
            found.append((forward if self.embedding.is_forward_lm else backward) - shift)
            if self.embedding.tokenized_lm or token.whitespace_after > 0:
                forward += 1
                backward -= 1
            backward -= len(token.text)
        return found

    def states(self, ids: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        """The LM's output (time, batch, dim) for character ids (time, batch) sorted longest first."""
        first, *later = self.recurrences
        out = first.run(lambda t, n: F.embedding(ids[t, :n], self.table), lengths, False, self.zeros(ids, first))
        for affine, recurrence in zip(self.inputs, later):
            projected = affine(out)
            out = recurrence.run(lambda t, n, projected=projected: projected[t, :n], lengths, False, self.zeros(ids, recurrence))
        return out if self.proj is None else self.proj(out)

    def zeros(self, ids: torch.Tensor, recurrence: Recurrence) -> torch.Tensor:
        """A zeroed (time, batch, hidden) output buffer for `recurrence`."""
        return self.table.new_zeros(*ids.shape, recurrence.hidden_size)

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        texts = [self.text(sentence) for sentence in sentences]
        marked = [self.start + (text if self.embedding.is_forward_lm else text[::-1]) + " " for text in texts]
        order = sorted(range(len(marked)), key=lambda i: -len(marked[i]))
        column = {i: position for position, i in enumerate(order)}
        ids = torch.zeros(len(marked[order[0]]), len(marked), dtype=torch.long)
        for i in order:
            ids[: len(marked[i]), column[i]] = torch.tensor(self.dictionary.get_idx_for_items(list(marked[i])))
        states = self.states(ids.to(self.table.device), [len(marked[i]) for i in order])
        width = len(marked)
        index = [t * width + column[i] for i, (sentence, text) in enumerate(zip(sentences, texts)) for t in self.positions(sentence, text)]
        return states.reshape(-1, states.size(2))[torch.tensor(index, device=states.device)]


class WordFeatures:
    """`WordEmbeddings` vectors through Flair's own lookup (word, lower-cased, digits normalised, else <unk>)."""

    def __init__(self, embedding: WordEmbeddings) -> None:
        self.embedding = embedding

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        index = [self.embedding.get_cached_token_index(token.text) for sentence in sentences for token in sentence]
        weight = self.embedding.embedding.weight
        vectors = self.embedding.embedding(torch.tensor(index, dtype=torch.long, device=weight.device))
        norm = getattr(self.embedding, "layer_norm", None)
        return norm(vectors) if norm is not None else vectors


class FlairFeatures:
    """Any other embedding: Flair's own per-token embedding, read back and cleared."""

    def __init__(self, embedding: TokenEmbeddings) -> None:
        self.embedding = embedding

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        self.embedding.embed(sentences)
        names = self.embedding.get_names()
        vectors = torch.stack([token.get_embedding(names) for sentence in sentences for token in sentence])
        for sentence in sentences:
            sentence.clear_embeddings(names)
        return vectors


def featurizer(embedding: TokenEmbeddings, quantize: bool) -> Featurizer:
    """The fastest featurizer that reproduces `embedding`."""
    if lstm_lm(embedding):
        return CharLMFeatures(embedding, quantize)
    if isinstance(embedding, WordEmbeddings) and embedding.field is None:
        return WordFeatures(embedding)
    return FlairFeatures(embedding)


def stack_featurizers(embeddings: TokenEmbeddings, quantize: bool) -> list[Featurizer]:
    """One featurizer per embedding of the stack, in the order the tagger concatenates them (by name)."""
    return [featurizer(embedding, quantize) for embedding in sorted(leaves(embeddings), key=lambda e: e.name)]
