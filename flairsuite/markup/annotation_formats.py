"""The formats annotation tools import, by name (`predict --format`, `evaluate --predictions --format`)."""

from collections.abc import Sequence

from flairsuite.markup.annotated import Annotated
from flairsuite.markup.conll import conll_text
from flairsuite.markup.doccano import doccano_jsonl
from flairsuite.markup.labelstudio import labelstudio_json
from flairsuite.markup.webanno_writer import webanno_tsv

ANNOTATION_FORMATS = ("webanno", "jsonl", "labelstudio", "conll")


def annotation_text(documents: Sequence[Annotated], fmt: str, model_version: str) -> str:
    """The documents in `fmt`, one of ANNOTATION_FORMATS: webanno takes one document (a file is one in INCEpTION), the others any
    number (jsonl: a line each, labelstudio: a task each, conll: their sentences); `model_version` names Label Studio's predictions."""
    if fmt == "webanno":
        if len(documents) != 1:
            raise ValueError(f"a WebAnno TSV file holds one document, not {len(documents)}")
        return webanno_tsv(documents[0])
    if fmt == "jsonl":
        return doccano_jsonl(documents)
    if fmt == "labelstudio":
        return labelstudio_json(documents, model_version)
    if fmt == "conll":
        return conll_text(documents)
    raise ValueError(f"unknown annotation format {fmt!r}: one of {', '.join(ANNOTATION_FORMATS)}")
