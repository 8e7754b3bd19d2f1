"""A fresh small BERT for given settings, and its Hugging Face model folder written file by file, atomically.

Absolute positions with full attention make a standard `BertForMaskedLM` (or `BertForPreTraining`
for sentence-pair objectives): plain `AutoModel.from_pretrained` loads it. Relative positions or
Whole-Word Attention make the suite's own classes (`modeling_flairsuite_bert`), whose module is
saved into the folder for `trust_remote_code=True`.
"""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from transformers import BertConfig, BertForMaskedLM, BertForPreTraining, PreTrainedModel, PreTrainedTokenizerBase

from flairsuite.bert.modeling_flairsuite_bert import FlairsuiteBertConfig, FlairsuiteBertForMaskedLM, FlairsuiteBertForPreTraining
from flairsuite.bert.settings import BertSettings
from flairsuite.bert.vocabulary import PAD
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import current_umask
from flairsuite.lexicon.store import Lexicon

ENTITY_SIZE = 64  # H_e, the width of the entity embeddings of Char-Entity attention


@dataclass(frozen=True)
class EntityEntries:
    """A lexicon's entries as token ids of a vocabulary, for Char-Entity attention; `digest` keys checkpoints."""

    name: str
    ids: list[list[int]]
    min_length: int  # 2 for characters (Algorithm 1 matches two or more), 1 for word entries
    dropped: int  # entries with a unit the vocabulary lacks
    digest: str


def entity_entries(name: str, lexicon: Lexicon, tokenizer: PreTrainedTokenizerBase, digest: str) -> EntityEntries:
    """The entries of `lexicon` as token ids of `tokenizer`: characters one id each, words as the tokenizer splits them;
    an entry with an unknown unit is dropped."""
    unknown, ids, dropped = tokenizer.unk_token_id, [], 0
    for entry in lexicon.entries:
        if lexicon.units == "characters":
            pieces = [tokenizer.convert_tokens_to_ids(char) for char in entry]
        else:
            pieces = tokenizer(" ".join(entry), add_special_tokens=False)["input_ids"]
        if not pieces or unknown in pieces or None in pieces:
            dropped += 1
            continue
        ids.append(pieces)
    return EntityEntries(name, ids, 2 if lexicon.units == "characters" else 1, dropped, digest)


def model_config(settings: BertSettings, vocab_size: int) -> dict:
    """The transformers configuration shared by both model families."""
    return {
        "vocab_size": vocab_size,
        "hidden_size": settings.hidden_size,
        "num_hidden_layers": settings.layers,
        "num_attention_heads": settings.heads,
        "intermediate_size": settings.intermediate_size,
        "hidden_dropout_prob": settings.dropout,
        "attention_probs_dropout_prob": settings.dropout,
        "max_position_embeddings": settings.seq_len,
        "pad_token_id": PAD,
    }


def build_model(settings: BertSettings, vocab_size: int, continuation: list[int], entities: Optional[EntityEntries] = None) -> PreTrainedModel:
    """A randomly initialised pre-training model (MLM head, plus the sentence-pair head for NSP/SOP); with `entities`, Char-Entity attention."""
    pairs = settings.objective != "mlm"
    if settings.positions == "absolute":
        if entities is not None:
            raise FlairsuiteError("--lexicon (Char-Entity attention) needs --positions relative: the standard BERT has no entity input")
        return (BertForPreTraining if pairs else BertForMaskedLM)(BertConfig(**model_config(settings, vocab_size)))
    if entities is not None and settings.attention != "full":
        raise FlairsuiteError("--lexicon (Char-Entity attention) needs --attention full (the paper's BERT), not wwa")
    extra = {} if entities is None else {"entities": entities.ids, "entity_size": ENTITY_SIZE, "entity_min_length": entities.min_length}
    config = FlairsuiteBertConfig(
        **model_config(settings, vocab_size), attention=settings.attention, relative_clip=settings.relative_clip, window=settings.window, **extra
    )
    model = (FlairsuiteBertForPreTraining if pairs else FlairsuiteBertForMaskedLM)(config)
    model.bert.set_continuation(continuation)
    return model


def save_model(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: Path) -> None:
    """Write the model folder (weights as safetensors, tokenizer, and for the suite's own classes their module).

    Each file is written to a temporary folder first and then renamed into place, `config.json` last,
    so a kill leaves every file whole (a folder without `config.json` is no model yet: `train-bert --force`
    empties the folder before a new run); a `checkpoint.pt` in `folder` is left alone.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder, prefix=".save-") as temp:
            model.save_pretrained(temp, safe_serialization=True)
            tokenizer.save_pretrained(temp)
            names = sorted(os.listdir(temp), key=lambda name: name == "config.json")
            for name in names:
                (Path(temp) / name).chmod(0o666 & ~current_umask())  # safetensors writes 0600
                os.replace(Path(temp) / name, folder / name)
    except OSError as err:
        raise FlairsuiteError(f"cannot write the model to {folder}: {err.strerror or err}") from None
