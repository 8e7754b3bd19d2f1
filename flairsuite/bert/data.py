"""Prepared raw text as WordPiece ids for BERT pre-training: tokenized once into memory-mapped arrays.

The text is the shared prepared corpus of `train-charlm` (`flairsuite.rawtext`: NER and PoS dev/test
sentences cut out, documents split into train/valid/test). Its folder below
`paths.bert_data_dir()` holds the vocabulary (`tokenizer.json`, trained on the train split) and
per split:

- `<split>.ids`: the uint16 token ids of every document, sentence after sentence, each document
  followed by [SEP] (the sentences come from a punctuation rule, `SENTENCE_END`);
- `<split>.sentences.npy`: the offset of every sentence start in the ids;
- `<split>.samples-<k>.npy`: sample boundaries for a content length k, made on first use. A sample
  is a run of consecutive whole words filled up to k tokens (it goes on across sentences and
  documents, so no position is wasted on padding); only a word longer than k pieces is cut.

`PackedSamples` serves the samples; for sentence-pair objectives it also gives each sample's split
point (the sentence start nearest its middle, else the word start nearest it).
"""

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer
from tqdm import tqdm

from flairsuite.bert.settings import VOCABULARY_SIZE
from flairsuite.bert.vocabulary import SEP, continuation_ids, train_wordpiece
from flairsuite.files.atomic import atomic_file
from flairsuite.files.locks import folder_built_once
from flairsuite.rawtext.prepare import PREPARED_SPLITS, PreparedCorpus
from flairsuite.settings_schema import OPTIONS, refuse

DATA_VERSION = 1
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[\"„»«(\[A-ZÄÖÜ0-9])")
DOCUMENTS_PER_BATCH = 2000


def sentences_of(document: str) -> list[str]:
    """The sentences of a document: split after . ! ? ; : where the next word starts upper case, a digit or a quote."""
    return [s for s in SENTENCE_END.split(document.strip()) if s]


def _write_ids(text: Path, tokenizer: Tokenizer, ids_path: Path, sentences_path: Path) -> tuple[int, int]:
    """Tokenize the documents (lines) of `text`; (number of ids, number of sentences)."""
    starts: list[int] = []
    total = 0

    def flush(documents: list[list[str]], sink) -> None:
        nonlocal total
        encodings = iter(tokenizer.encode_batch([s for doc in documents for s in doc], add_special_tokens=False))
        pieces: list[int] = []
        for document in documents:
            for _ in document:
                starts.append(total + len(pieces))
                pieces.extend(next(encodings).ids)
            pieces.append(SEP)
        np.asarray(pieces, dtype=np.uint16).tofile(sink)
        total += len(pieces)

    with text.open(encoding="utf-8") as source, ids_path.open("wb") as sink:
        batch: list[list[str]] = []
        with tqdm(total=text.stat().st_size, unit="B", unit_scale=True, desc=f"tokenize {text.stem}", leave=False) as bar:
            for line in source:
                bar.update(len(line.encode("utf-8")))
                document = sentences_of(line)
                if document:
                    batch.append(document)
                if len(batch) == DOCUMENTS_PER_BATCH:
                    flush(batch, sink)
                    batch = []
            if batch:
                flush(batch, sink)
    np.save(sentences_path, np.asarray(starts, dtype=np.int64))
    return total, len(starts)


@dataclass
class TokenizedCorpus:
    """A folder of tokenized splits (module docstring) with its vocabulary."""

    path: Path
    meta: dict

    def tokenizer(self) -> Tokenizer:
        return Tokenizer.from_file(str(self.path / "tokenizer.json"))

    def ids(self, split: str) -> np.ndarray:
        """The token ids of `split`, memory-mapped (read-only)."""
        return np.memmap(self.path / f"{split}.ids", dtype=np.uint16, mode="r")

    def word_start(self) -> np.ndarray:
        """Per vocabulary id: whether the piece starts a word (everything but `##` pieces)."""
        table = np.ones(self.meta["vocab_size"], dtype=bool)
        table[continuation_ids(self.tokenizer())] = False
        return table

    def samples(self, split: str, content: int) -> "PackedSamples":
        """The samples of `split` holding at most `content` tokens each (boundaries cached in the folder)."""
        path = self.path / f"{split}.samples-{content}.npy"
        word_start = self.word_start()
        ids = self.ids(split)
        if not path.is_file():
            with atomic_file(path) as temp, temp.open("wb") as handle:
                np.save(handle, pack(ids, word_start, content))
        return PackedSamples(ids, np.load(path), np.load(self.path / f"{split}.sentences.npy"), word_start)


def pack(ids: np.ndarray, word_start: np.ndarray, content: int) -> np.ndarray:
    """Sample boundaries: runs of whole words of at most `content` tokens each, end to end over `ids`."""
    starts_word = word_start[np.asarray(ids)]
    bounds = [0]
    end_of_data = len(ids)
    position = 0
    while position < end_of_data:
        end = min(position + content, end_of_data)
        cut = end
        while cut > position and cut < end_of_data and not starts_word[cut]:
            cut -= 1
        position = cut if cut > position else end  # a word longer than `content` pieces is cut
        bounds.append(position)
    return np.asarray(bounds, dtype=np.int64)


class PackedSamples:
    """Samples of one split: `tokens(i)` are the ids of sample i; `split_point(i)` where a sentence pair divides it."""

    def __init__(self, ids: np.ndarray, bounds: np.ndarray, sentence_starts: np.ndarray, word_start: np.ndarray) -> None:
        self.ids, self.bounds, self.sentence_starts, self.word_start = ids, bounds, sentence_starts, word_start

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def tokens(self, index: int) -> np.ndarray:
        return np.asarray(self.ids[self.bounds[index] : self.bounds[index + 1]], dtype=np.int64)

    def split_point(self, index: int) -> int:
        """Offset in sample `index` of the sentence start nearest its middle (else the nearest word start, else the middle)."""
        start, end = int(self.bounds[index]), int(self.bounds[index + 1])
        middle = (start + end) / 2
        lo, hi = np.searchsorted(self.sentence_starts, [start + 1, end])
        inside = self.sentence_starts[lo:hi]
        if len(inside) == 0:
            inside = start + 1 + np.flatnonzero(self.word_start[np.asarray(self.ids[start + 1 : end])])
        if len(inside) == 0:
            return (end - start) // 2
        return int(inside[np.argmin(np.abs(inside - middle))]) - start


def data_key(prepared_name: str, vocab_size: int) -> str:
    """The folder name of the tokenized corpus: the prepared corpus's folder name, the vocabulary size and this module's version."""
    digest = hashlib.sha256(json.dumps([prepared_name, vocab_size, DATA_VERSION]).encode()).hexdigest()[:8]
    return f"{prepared_name}-wp{vocab_size}-{digest}"


def tokenize_corpus(prepared: PreparedCorpus, vocab_size: int, cache: Path) -> TokenizedCorpus:
    """The tokenized corpus of `prepared` below `cache`, built on first use (atomically, as a whole folder)."""
    refuse("vocab_size", VOCABULARY_SIZE, vocab_size, OPTIONS)  # as BertSettings does, for callers that pass a size of their own
    folder = cache / data_key(prepared.path.name, vocab_size)

    def build(temp: Path) -> dict:
        tokenizer = train_wordpiece(prepared.text_path("train"), vocab_size)
        tokenizer.save(str(temp / "tokenizer.json"))
        splits = {}
        for split in PREPARED_SPLITS:
            tokens, sentences = _write_ids(prepared.text_path(split), tokenizer, temp / f"{split}.ids", temp / f"{split}.sentences.npy")
            splits[split] = {"tokens": tokens, "sentences": sentences}
        return {"prepared": str(prepared.path), "vocab_size": tokenizer.get_vocab_size(), "version": DATA_VERSION, "splits": splits}

    return TokenizedCorpus(folder, folder_built_once(folder, build, lambda: tqdm.write(f"waiting for another process tokenizing {folder}")))
