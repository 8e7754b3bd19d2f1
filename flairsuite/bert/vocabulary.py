"""The WordPiece vocabulary of a small BERT, trained on its prepared raw text with the `tokenizers` library.

Cased and with accents kept (German capitals and umlauts matter for NER): the normalizer only
cleans control characters and spaces out CJK characters. The special tokens take the first ids
in a fixed order, so every vocabulary of the suite agrees on them: [PAD] 0, [UNK] 1, [CLS] 2,
[SEP] 3, [MASK] 4. Word pieces that continue a word start with `##`.
"""

from collections.abc import Iterator
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertTokenizerFast

from flairsuite.bert.settings import SPECIAL_TOKENS

PAD, UNK, CLS, SEP, MASK = range(len(SPECIAL_TOKENS))
CONTINUATION = "##"


def _lines(path: Path, batch: int = 1000) -> Iterator[list[str]]:
    with path.open(encoding="utf-8") as handle:
        lines: list[str] = []
        for line in handle:
            lines.append(line)
            if len(lines) == batch:
                yield lines
                lines = []
        if lines:
            yield lines


def train_wordpiece(text: Path, vocab_size: int, min_frequency: int = 2) -> Tokenizer:
    """A cased WordPiece tokenizer with `vocab_size` entries trained on the lines of `text`."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=CONTINUATION))
    tokenizer.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        continuing_subword_prefix=CONTINUATION,
        show_progress=False,
    )
    tokenizer.train_from_iterator(_lines(text), trainer=trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", CLS), ("[SEP]", SEP)],
    )
    return tokenizer


def hf_tokenizer(tokenizer: Tokenizer, max_length: int) -> BertTokenizerFast:
    """The transformers tokenizer saved with a model (cased, accents kept, `model_max_length` = the sequence length)."""
    return BertTokenizerFast(
        tokenizer_object=tokenizer,
        do_lower_case=False,
        strip_accents=False,
        tokenize_chinese_chars=True,
        model_max_length=max_length,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )


def continuation_ids(tokenizer: Tokenizer) -> list[int]:
    """Ids of the pieces that continue a word (`##...`): the model's word starts are the other tokens."""
    return sorted(index for piece, index in tokenizer.get_vocab().items() if piece.startswith(CONTINUATION))
