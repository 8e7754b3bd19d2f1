"""The labeled file formats and their readers: the one registry `read_tagged` dispatches on.

    column      CoNLL-style token/tag columns (readers.read_column)
    conllu      CoNLL-U, tag from a column or MISC key (readers.read_conllu)
    spans_json  CLUENER-style JSON lines, one token per character (readers.read_spans_json)
    webanno     WebAnno TSV 3.x, INCEpTION's export (webanno.read_webanno)
    jsonl       doccano JSONL or Label Studio JSON, tokenised as `predict` does (jsonl_spans.read_jsonl)

Each reader takes (path, format spec, encoding, repairs counter) and yields `TaggedSentence`s with raw tags.
"""

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from flairsuite.corpora.format_names import LABELED_FORMATS
from flairsuite.corpora.jsonl_spans import read_jsonl
from flairsuite.corpora.readers import TaggedSentence, read_column, read_conllu, read_spans_json
from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.tags import io_as_bio
from flairsuite.corpora.webanno_reader import read_webanno
from flairsuite.errors import InputError

Reader = Callable[[Path, FormatSpec, str, Counter], Iterator[TaggedSentence]]
READERS: dict[str, Reader] = {
    "column": read_column,
    "conllu": read_conllu,
    "spans_json": read_spans_json,
    "webanno": read_webanno,
    "jsonl": read_jsonl,
}
assert tuple(READERS) == LABELED_FORMATS, "flairsuite.corpora.format_names lists the readers' names"
SPAN_FORMATS = ("spans_json", "webanno", "jsonl")  # formats that hold spans, not tags: `label`, `scheme` do not apply


def _as_bio(sentences: Iterator[TaggedSentence], path: Path) -> Iterator[TaggedSentence]:
    """IO-tagged sentences with BIO tags (an entity starts at each change of type); a B-, E- or S- tag is an error at its line."""
    for sentence in sentences:
        try:
            sentence.tags = io_as_bio(sentence.tags)
        except ValueError as err:
            bad = next(i for i, tag in enumerate(sentence.tags) if tag[:2] in ("B-", "E-", "S-"))
            raise InputError(path, sentence.lines[bad], str(err)) from None
        yield sentence


def read_tagged(path: Path, fmt: FormatSpec, encoding: str, repairs: Counter) -> Iterator[TaggedSentence]:
    """Sentences with raw tags of a labeled file in any labeled format of READERS (IO tags, `scheme: io`, read as BIO)."""
    reader = READERS.get(fmt.kind)
    if reader is None:
        raise InputError(path, None, f"format '{fmt.kind}' is not a labeled format")
    sentences = reader(path, fmt, encoding, repairs)
    return _as_bio(sentences, path) if fmt.scheme == "io" else sentences
