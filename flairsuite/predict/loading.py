"""The saved tagger loaded for `predict`: checked against what it is asked to write, and loaded once for many inputs.

Entity-Fix and the formats of entity spans (tei, html and the annotation-tool formats) need a model of entity spans: one
that tags one label per token (PoS) is a one-line error naming the option to drop (`check_spans`; `serve` makes the same
check). The model is loaded by each call of `predict_to`, or once for many inputs (`loaded_tagger`, passed to
`predict_to` as `loaded`: its checks and its tagging function, the fast path's int8 copy included, are made once; the
output of each input is byte for byte what a call of its own writes). `flairsuite predict` on a folder, a glob or
several files (`flairsuite.cli.predict_files`) tags them that way.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import flair.nn
from flair.data import Sentence

from flairsuite.errors import FlairsuiteError
from flairsuite.inference.raw_tags import tagger
from flairsuite.inference.saved_tagger import load_tagger, predicts_spans
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS
from flairsuite.models.crf import Tagged
from flairsuite.predict.formats import SPAN_FORMATS


def check_spans(model: flair.nn.Classifier, model_path: Path, entity_fix: bool, markup: bool, fmt: Optional[str] = None) -> None:
    """Entity-Fix and the formats of entity spans (`markup`: tei, html and the ANNOTATION_FORMATS, `fmt` the one asked for)
    need a model of entity spans: one of a tag per token (PoS) is a one-line error."""
    if predicts_spans(model) or not (entity_fix or markup):
        return
    if entity_fix:
        what = "--entity-fix repairs BIO entity tags"
    else:
        what = f"--format {fmt} writes entity spans" if fmt in ANNOTATION_FORMATS else "--format tei and html mark entity spans"
    fix = "leave --entity-fix out" if entity_fix else "use --format column or json"
    raise FlairsuiteError(f"{model_path}: {what}, and this model tags one '{model.label_type}' label per token (not spans): {fix}")


def checked_tagger(model_path: Path, entity_fix: bool, markup: bool = False, fmt: Optional[str] = None) -> flair.nn.Classifier:
    """The saved tagger; `markup` (the tags become entity spans in format `fmt`) and `entity_fix` need one that tags spans (`check_spans`)."""
    model = load_tagger(model_path)
    check_spans(model, model_path, entity_fix, markup, fmt)
    return model


@dataclass(frozen=True)
class LoadedTagger:
    """A saved tagger loaded once for many inputs: the model, checked for the format, and its tagging function (`tagger`), built once."""

    model: flair.nn.Classifier
    run: Callable[[list[Sentence]], Tagged]


def loaded_tagger(model_path: Path, fmt: str, fast: bool, batch_size: Optional[int], entity_fix: bool = False) -> LoadedTagger:
    """The model at `model_path` loaded and checked for `fmt` and `entity_fix` (`checked_tagger`), with its tagging function."""
    model = checked_tagger(model_path, entity_fix, markup=fmt in SPAN_FORMATS, fmt=fmt)
    return LoadedTagger(model, tagger(model, fast, batch_size))
