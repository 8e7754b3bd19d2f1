"""INCEpTION's external-recommender requests: a `POST /predict` or `POST /train` body -> its CASes and what to predict, or a `RequestError`.

The protocol is the INCEpTION developer guide's, section "External recommender": a JSON object with
`metadata` (`layer`, `feature`, `projectId`, `anchoringMode`, `crossSentence`), and `document`
(`xmi`, `documentId`, `userId`) for predict or `documents` (a list of those) for train, and the
`typeSystem` XML of the CASes. The answer to predict is `{"document": "<the CAS as XMI>"}`.

Checked here, each a 4xx with one message: the body is UTF-8 JSON of that shape; the type system and
every XMI parse (dkpro-cassis, strictly: a type the type system lacks is an error, so that nothing in
the CAS is dropped on the way back); no DOCTYPE (no entities in either XML); the layer is an annotation
type of the type system with a string feature of that name; the anchoring mode is one whose spans this
tagger can give (not `sentences`); a document's text is at most `max_chars` characters; every annotation of
the layer, every Token and every Sentence lies within the document's text (0 <= begin <= end <= its length, in
characters as cassis reports them), or the request is a 400 naming the document and the annotation (a `/train`
with such a document trains nothing). Parsed type systems are cached (INCEpTION sends the same one with every
request) with the suggestion features added.
"""

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Optional

from cassis import Cas, TypeSystem, load_cas_from_xmi, load_typesystem

from flairsuite.serve.cas import SENTENCE, TOKEN, add_suggestion_features, document, text_of
from flairsuite.serve.engine import Document
from flairsuite.serve.payload import RequestError, decode
from flairsuite.values import json_problem

ANCHORING_MODES = ("characters", "singleToken", "tokens")  # the spans of a token tagger; "sentences" is not one
CACHED_TYPE_SYSTEMS = 8
ANNOTATION = "uima.tcas.Annotation"
STRING = "uima.cas.String"


@dataclass(frozen=True)
class Target:
    """What to predict or train: the layer (a type name), its feature holding the label, and INCEpTION's anchoring mode."""

    layer: str
    feature: str
    anchoring: str = "tokens"


@dataclass(frozen=True)
class TrainingSet:
    """A `/train` request: what to train, and the CASes of its documents (in the order sent)."""

    target: Target
    cases: list[Cas]


def json_object(body: bytes, example: str) -> dict[str, Any]:
    """The body as a JSON object; anything else is a 400 naming the problem."""
    if not body:
        raise RequestError(400, f"the body is empty; send {example}")
    try:
        value = json.loads(decode(body).removeprefix("\ufeff"))
    except json.JSONDecodeError as err:
        raise RequestError(400, f"malformed JSON: {err.msg} at line {err.lineno} column {err.colno}; send {example}") from None
    except RecursionError:
        raise RequestError(400, "malformed JSON: nested too deeply") from None
    except ValueError as err:
        raise RequestError(400, f"malformed JSON: {json_problem(err)}") from None
    if not isinstance(value, dict):
        raise RequestError(400, f"the JSON body must be an object; send {example}")
    return value


def field(value: dict[str, Any], name: str, kind: type, where: str) -> Any:
    """`value[name]`, which must be of `kind` (a 400 otherwise)."""
    found = value.get(name)
    if not isinstance(found, kind):
        what = {str: "a string", dict: "an object", list: "a list"}.get(kind, kind.__name__)
        raise RequestError(400, f"{where}{name} must be {what}" + ("" if name in value else f", and the request has no {where}{name}"))
    return found


def no_doctype(xml: str, what: str) -> None:
    """XML with a DOCTYPE (entities, external references) is refused before any parser sees it."""
    if "<!DOCTYPE" in xml or "<!ENTITY" in xml:
        raise RequestError(400, f"{what} holds a DOCTYPE or ENTITY declaration, which this server does not accept")


def one_line(err: Exception) -> str:
    """An exception's message as one short line."""
    lines = str(err).strip().splitlines()
    text = lines[0] if lines else type(err).__name__
    return text if len(text) <= 200 else text[:197] + "..."


class TypeSystems:
    """Parsed type systems, by their XML and the layer and feature extended with the suggestion features; the last few kept."""

    def __init__(self, size: int = CACHED_TYPE_SYSTEMS) -> None:
        self.size = size
        self.cache: OrderedDict[tuple[str, str, str], TypeSystem] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, xml: str, target: Target) -> TypeSystem:
        key = (xml, target.layer, target.feature)
        with self.lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        typesystem = checked_type_system(xml, target)
        with self.lock:
            self.cache[key] = typesystem
            while len(self.cache) > self.size:
                self.cache.popitem(last=False)
        return typesystem


def checked_type_system(xml: str, target: Target) -> TypeSystem:
    """The type system parsed, the target layer checked and extended with the suggestion features."""
    no_doctype(xml, "typeSystem")
    try:
        typesystem = load_typesystem(xml)
    except Exception as err:  # noqa: BLE001 (any parser error is the client's XML)
        raise RequestError(400, f"typeSystem does not parse: {one_line(err)}") from None
    if not typesystem.contains_type(target.layer):
        raise RequestError(400, f"unknown layer {target.layer}: the typeSystem has no such type")
    kind = typesystem.get_type(target.layer)
    if not typesystem.subsumes(ANNOTATION, kind.name):
        raise RequestError(400, f"layer {target.layer} is not a span layer (a subtype of {ANNOTATION})")
    feature = next((f for f in kind.all_features if f.name == target.feature), None)
    if feature is None or feature.rangeType.name != STRING:
        missing = "has no feature" if feature is None else "has no string feature"
        raise RequestError(400, f"layer {target.layer} {missing} {target.feature}")
    add_suggestion_features(typesystem, target.layer, target.feature)
    return typesystem


def target_of(request: dict[str, Any]) -> Target:
    """The request's metadata: layer, feature, anchoring mode (default tokens)."""
    metadata = field(request, "metadata", dict, "")
    layer, feature = field(metadata, "layer", str, "metadata."), field(metadata, "feature", str, "metadata.")
    anchoring = metadata.get("anchoringMode", "tokens")
    if anchoring not in ANCHORING_MODES:
        raise RequestError(400, f"metadata.anchoringMode {anchoring!r}: this tagger suggests token spans; use one of {', '.join(ANCHORING_MODES)}")
    return Target(layer, feature, anchoring)


def outside_text(cas: Cas, layer: str) -> Optional[str]:
    """The first annotation of `layer`, Token or Sentence that does not lie within the text, described; None when all do."""
    length = len(text_of(cas))
    for name in dict.fromkeys((layer, TOKEN, SENTENCE)):
        if not cas.typesystem.contains_type(name):
            continue
        for annotation in cas.select(name):
            begin, end = annotation.begin, annotation.end
            if begin is None or end is None or not 0 <= begin <= end <= length:
                problem = ("has no offsets" if begin is None or end is None else "begins before the text" if begin < 0
                           else "begins after its end" if begin > end else "lies past the end of the text" if begin > length
                           else "ends past the text")  # fmt: skip
                return f"the {name} annotation at begin {begin}, end {end} {problem} (the text has {length:,} characters)"
    return None


def named(document: dict[str, Any], where: str) -> str:
    """The document as the request names it: its place in the request and its documentId, when it has one."""
    identifier = document.get("documentId")
    if isinstance(identifier, str):
        identifier = json.dumps(identifier[:80], ensure_ascii=False)  # quoted, its line breaks escaped: the error stays one line
    return where.rstrip(".") + (f" (documentId {identifier})" if isinstance(identifier, (str, int)) else "")


def read_cas(document: dict[str, Any], typesystem: TypeSystem, max_chars: int, where: str, target: Target, after: str = "") -> Cas:
    """The document's CAS from its `xmi`, at most `max_chars` characters of text, its annotations within the text
    (`after`: what the refusal of one that is not adds)."""
    xmi = field(document, "xmi", str, where)
    no_doctype(xmi, f"{where}xmi")
    try:
        cas = load_cas_from_xmi(xmi, typesystem=typesystem)
    except Exception as err:  # noqa: BLE001 (any parser error is the client's XMI)
        raise RequestError(400, f"{where}xmi does not parse: {one_line(err)}") from None
    length = len(text_of(cas))
    if length > max_chars:
        raise RequestError(413, f"{where}xmi: the document is too long: {length:,} characters, at most {max_chars:,} are accepted")
    problem = outside_text(cas, target.layer)
    if problem is not None:
        raise RequestError(400, f"{named(document, where)}: {problem}{after}")
    return cas


PREDICT_EXAMPLE = '{"metadata": {"layer": ..., "feature": ...}, "document": {"xmi": ...}, "typeSystem": ...}'
TRAIN_EXAMPLE = '{"metadata": {"layer": ..., "feature": ...}, "documents": [{"xmi": ...}, ...], "typeSystem": ...}'


@dataclass(frozen=True)
class PredictRequest:
    """A `/predict` request: what to predict, the document's CAS, its XMI as sent and what of it the tagger tags (`cas.document`)."""

    target: Target
    cas: Cas
    xmi: str
    document: Document


def predict_request(body: bytes, typesystems: TypeSystems, max_chars: int) -> PredictRequest:
    """A `/predict` body -> a `PredictRequest` (the XMI checked by parsing it with cassis against the type system)."""
    request = json_object(body, PREDICT_EXAMPLE)
    target = target_of(request)
    sent = field(request, "document", dict, "")
    typesystem = typesystems.get(field(request, "typeSystem", str, ""), target)
    cas = read_cas(sent, typesystem, max_chars, "document.", target)
    return PredictRequest(target, cas, sent["xmi"], document(cas))


def train_request(body: bytes, typesystems: TypeSystems, max_chars: int) -> TrainingSet:
    """A `/train` body -> what to train and the CASes of its documents."""
    request = json_object(body, TRAIN_EXAMPLE)
    target = target_of(request)
    documents = field(request, "documents", list, "")
    if not documents:
        raise RequestError(400, "documents is empty: send the documents to train on")
    typesystem = typesystems.get(field(request, "typeSystem", str, ""), target)
    cases = []
    for i, sent in enumerate(documents):
        if not isinstance(sent, dict):
            raise RequestError(400, f"documents[{i}] must be an object with an xmi")
        cases.append(read_cas(sent, typesystem, max_chars, f"documents[{i}].", target, "; nothing is trained"))
    return TrainingSet(target, cases)
