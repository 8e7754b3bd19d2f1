"""INCEpTION's CASes (dkpro-cassis): their sentences and tokens to tag, the tagger's suggestions written in, the annotations to train on.

A CAS with DKPro Core `Sentence` and `Token` annotations is tagged on exactly those tokens
(`flairsuite.serve.engine.Tokens`); one without them as its text, split as `predict` splits it.
Offsets are cassis's, characters of the document text (cassis maps UIMA's UTF-16 offsets both ways).

A suggestion is a new annotation of the requested layer with the label in the requested feature,
`inception_internal_predicted = true` and the confidence in `<feature>_score`, as the INCEpTION
developer guide ("External recommender", "Encoding annotation suggestions") specifies; the
annotations already in the CAS are left as they are. For training, a sentence's tokens get BIO tags
from the layer's annotations that carry a label and are not suggestions (an annotation covers the
tokens it overlaps; of two overlapping ones the first, the longer at the same start, wins).
"""

from collections.abc import Iterable
from typing import Any

from cassis import Cas, TypeSystem

from flairsuite.markup.spans import Span
from flairsuite.serve.engine import Document, Tokens
from flairsuite.serve.fit import Labeled
from flairsuite.serve.suggestion_xmi import PREDICTED, SCORE_SUFFIX, xmi_with_suggestions

SENTENCE = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence"
TOKEN = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token"


def add_suggestion_features(typesystem: TypeSystem, layer: str, feature: str) -> None:
    """Give the layer the features a suggestion sets, where the type system (one INCEpTION did not extend) lacks them."""
    kind = typesystem.get_type(layer)
    names = {f.name for f in kind.all_features}
    for name, range_type in ((PREDICTED, "uima.cas.Boolean"), (feature + SCORE_SUFFIX, "uima.cas.Double")):
        if name not in names:
            typesystem.create_feature(kind, name, range_type)


def text_of(cas: Cas) -> str:
    """The document text ("" for a CAS without one)."""
    return cas.sofa_string or ""


def sentence_tokens(cas: Cas) -> list[list[tuple[int, int]]]:
    """Per Sentence annotation, the (begin, end) of the Token annotations inside it; [] when the CAS has either none."""
    typesystem = cas.typesystem
    if not (typesystem.contains_type(SENTENCE) and typesystem.contains_type(TOKEN)):
        return []
    sentences = [(s.begin, s.end) for s in cas.select(SENTENCE)]
    tokens = sorted((t.begin, t.end) for t in cas.select(TOKEN) if t.end > t.begin)
    if not sentences or not tokens:
        return []
    grouped, position = [], 0
    for begin, end in sorted(sentences):
        while position < len(tokens) and tokens[position][0] < begin:
            position += 1  # a token before this sentence (or outside every sentence): not tagged
        inside = []
        while position < len(tokens) and tokens[position][1] <= end:
            inside.append(tokens[position])
            position += 1
        grouped.append(inside)
    return grouped


def document(cas: Cas) -> Document:
    """What the tagger tags: the CAS's sentences and tokens, or, without them, its text."""
    grouped = sentence_tokens(cas)
    return Tokens(text_of(cas), grouped) if grouped else text_of(cas)


def suggested(cas: Cas, spans: Iterable[Span], single_token: bool = False) -> list[Span]:
    """The spans that become suggestions: all, or with `single_token` those that are one token of the CAS."""
    tokens = {(t.begin, t.end) for t in cas.select(TOKEN)} if single_token and cas.typesystem.contains_type(TOKEN) else None
    return [span for span in spans if tokens is None or (span.start, span.end) in tokens]


def add_suggestions(cas: Cas, layer: str, feature: str, spans: Iterable[Span], single_token: bool = False) -> int:
    """Add each span as a suggestion on `layer` (`single_token`: only spans that are one token of the CAS); how many were added."""
    kind = cas.typesystem.get_type(layer)
    kept = suggested(cas, spans, single_token)
    for span in kept:
        values: dict[str, Any] = {feature: span.type, PREDICTED: True, feature + SCORE_SUFFIX: float(span.confidence)}
        cas.add(kind(begin=span.start, end=span.end, **values))
    return len(kept)


def with_suggestions(xmi: str, cas: Cas, layer: str, feature: str, spans: Iterable[Span], single_token: bool = False) -> str:
    """`xmi` (the XMI `cas` was read from, unchanged since) with the spans added as suggestions, as `add_suggestions` adds them
    (`flairsuite.serve.suggestion_xmi`: only the new elements are written)."""
    return xmi_with_suggestions(xmi, text_of(cas), layer, feature, suggested(cas, spans, single_token))


def annotations(cas: Cas, layer: str, feature: str) -> list[tuple[int, int, str]]:
    """The layer's annotations that train: (begin, end, label) of those with a label that are not suggestions, sorted."""
    found = []
    for annotation in cas.select(layer):
        label = annotation.get(feature)
        if isinstance(label, str) and label.strip() and not getattr(annotation, PREDICTED, None) and annotation.end > annotation.begin:
            found.append((annotation.begin, annotation.end, label.strip()))
    return sorted(found, key=lambda a: (a[0], -a[1]))


def bio_tags(tokens: list[tuple[int, int]], entities: list[tuple[int, int, str]]) -> list[str]:
    """BIO tags of a sentence's tokens from entity (begin, end, label)s: each covers the tokens it overlaps, unless one already did."""
    tags = ["O"] * len(tokens)
    for begin, end, label in entities:
        covered = [i for i, (start, stop) in enumerate(tokens) if start < end and stop > begin]
        if covered and all(tags[i] == "O" for i in covered):
            tags[covered[0]] = f"B-{label}"
            for i in covered[1:]:
                tags[i] = f"I-{label}"
    return tags


def labeled_sentences(cas: Cas, layer: str, feature: str) -> list[Labeled]:
    """The CAS's sentences with BIO tags from the layer's annotations; [] for a CAS without any such annotation (or without tokens)."""
    entities = annotations(cas, layer, feature)
    if not entities:
        return []
    text = text_of(cas)
    found = []
    for tokens in sentence_tokens(cas):
        kept = [(start, end) for start, end in tokens if text[start:end].strip()]
        if kept:
            inside = [e for e in entities if e[0] < kept[-1][1] and e[1] > kept[0][0]]
            gaps = [following[0] - token[1] for token, following in zip(kept, kept[1:])] + [0]
            found.append(Labeled([text[start:end] for start, end in kept], bio_tags(kept, inside), gaps))
    return found
