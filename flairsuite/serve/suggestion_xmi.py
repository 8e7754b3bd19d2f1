"""The answer to INCEpTION's `/predict`: the posted XMI with one element per suggestion added, the rest of it as it was sent.

Re-serialising the whole CAS (dkpro-cassis's `Cas.to_xmi`, one Python step per token, sentence and
suggestion) took about a fifth of the server's CPU time beside the tagger; here the XMI that cassis
has already checked (`flairsuite.serve.recommender`) is parsed again by lxml alone, and only the
suggestions are written: an element of the layer's type (its namespace declared on the root when the
XMI lacks it) with a new `xmi:id`, the sofa of the initial view, begin and end in UTF-16 code units
(UIMA's offsets; the spans come in characters), the label, `inception_internal_predicted="true"` and
the confidence as cassis writes a double; the ids are added to the view's members. Loaded back with
cassis, the answer is the CAS that `flairsuite.serve.cas.add_suggestions` followed by `to_xmi` gives.
"""

from bisect import bisect_left
from collections.abc import Callable, Sequence

from lxml import etree

from flairsuite.markup.spans import Span

XMI = "http://www.omg.org/XMI"
CAS = "http:///uima/cas.ecore"
XMI_ID = f"{{{XMI}}}id"
INITIAL_VIEW = "_InitialView"
PREDICTED = "inception_internal_predicted"  # RecommendationService.FEATURE_NAME_IS_PREDICTION
SCORE_SUFFIX = "_score"  # RecommendationService.FEATURE_NAME_SCORE_SUFFIX
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=False)


def type_namespace(type_name: str) -> tuple[str, str, str]:
    """A UIMA type's XML namespace, the prefix it is usually given, and its local name (UIMA's rule, as cassis applies it)."""
    parts = type_name.split(".") if "." in type_name else ["uima", "noNamespace", type_name]
    return "http:///" + "/".join(parts[:-1]) + ".ecore", parts[-2], parts[-1]


def utf16_offsets(text: str) -> Callable[[int], int]:
    """A function from a character offset in `text` to its offset in UTF-16 code units (characters above U+FFFF count two)."""
    astral = [i for i, char in enumerate(text) if ord(char) > 0xFFFF]
    if not astral:
        return lambda offset: offset
    return lambda offset: offset + bisect_left(astral, offset)


def java_double(value: float) -> str:
    """A double as cassis (and Java) writes it: a capital E, no '+' in the exponent."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return str(value).upper().replace("E+", "E")


def with_root_namespace(root: etree._Element, url: str, prefix: str) -> tuple[etree._Element, str]:
    """The root, with a prefix for `url` declared on it (a new root holding the same children when one had to be added)."""
    for known, known_url in root.nsmap.items():
        if known_url == url and known:
            return root, known
    chosen, number = prefix, 0
    while chosen in root.nsmap:
        chosen, number = f"{prefix}{number}", number + 1
    extended = etree.Element(root.tag, attrib=dict(root.attrib), nsmap={**root.nsmap, chosen: url})
    extended.text = root.text
    extended.extend(list(root))
    return extended, chosen


def xmi_with_suggestions(xmi: str, text: str, layer: str, feature: str, spans: Sequence[Span]) -> str:
    """`xmi` with each span added as a suggestion on `layer` (label in `feature`) in the initial view; `text` is that view's text."""
    if not spans:
        return xmi
    root = etree.fromstring(xmi.encode("utf-8"), PARSER)
    sofa = next((e for e in root.iter(f"{{{CAS}}}Sofa") if e.get("sofaID") == INITIAL_VIEW), None)
    if sofa is None:
        raise ValueError("the XMI has no sofa of the initial view")
    sofa_id = sofa.get(XMI_ID)
    url, prefix, name = type_namespace(layer)
    root, prefix = with_root_namespace(root, url, prefix)
    used = [int(value) for value in root.xpath("//@xmi:id", namespaces={"xmi": XMI}) if value.lstrip("-").isdigit()]
    next_id = max(used, default=0) + 1
    view = next((e for e in root.iter(f"{{{CAS}}}View") if e.get("sofa") == sofa_id), None)
    if view is None:
        view = etree.SubElement(root, f"{{{CAS}}}View", sofa=sofa_id, members="")
    position = list(root).index(view)
    utf16 = utf16_offsets(text)
    added = []
    for span in spans:
        element = etree.Element(f"{{{url}}}{name}")
        attributes = (
            (XMI_ID, str(next_id)),
            ("sofa", sofa_id),
            ("begin", str(utf16(span.start))),
            ("end", str(utf16(span.end))),
            (feature, span.type),
            (PREDICTED, "true"),
            (feature + SCORE_SUFFIX, java_double(float(span.confidence))),
        )
        for key, value in attributes:
            element.set(key, value)
        root.insert(position, element)
        position += 1
        added.append(str(next_id))
        next_id += 1
    members = view.get("members", "").split()
    view.set("members", " ".join(members + added))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode("utf-8")
