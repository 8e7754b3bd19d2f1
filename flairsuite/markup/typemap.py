"""Which TEI element marks an entity of each type: the default map and its override from a small YAML file.

A map value is an element name (`persName`), an element with a fixed type (`name[@type=city]`, written
`<name type="city">`) or one whose type is the entity's (`name[@type]`: a `work` entity becomes
`<name type="work">`). Types match case-insensitively; the key `*` sets the element of every other type.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from xml.sax.saxutils import escape

import yaml

from flairsuite.errors import InputError, read_utf8
from flairsuite.files.yaml_file import compose_yaml

ELEMENT = re.compile(r"([A-Za-z_][\w.-]*)(?:\[@type(?:=(?:\"([^\"]*)\"|'([^']*)'|([^\]\"']+)))?\])?")
FALLBACK_KEY = "*"
ATTRIBUTE_ESCAPES = {'"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}


@dataclass(frozen=True)
class Element:
    """A TEI element for entities: its name and its `type` attribute (none, a fixed value, or the entity's type)."""

    name: str
    type: Optional[str] = None
    entity_type: bool = False

    def open(self, entity_type: str, confidence: Optional[float] = None, prefix: str = "") -> str:
        """The start tag for an entity of `entity_type`; `cert` holds the confidence (2 places), `prefix` a namespace prefix with its colon."""
        attributes = ""
        kind = entity_type if self.entity_type else self.type
        if kind is not None:
            attributes += f' type="{escape(kind, ATTRIBUTE_ESCAPES)}"'
        if confidence is not None:
            attributes += f' cert="{confidence:.2f}"'
        return f"<{prefix}{self.name}{attributes}>"

    def close(self, prefix: str = "") -> str:
        """The end tag."""
        return f"</{prefix}{self.name}>"


def parse_element(value: str) -> Element:
    """`persName`, `name[@type=city]` or `name[@type]` as an Element; anything else raises ValueError."""
    match = ELEMENT.fullmatch(value.strip())
    if not match:
        raise ValueError(f"'{value}' is not an element name, element[@type=VALUE] or element[@type] (e.g. persName, name[@type=city])")
    name, *fixed = match.groups()
    value_given = next((v for v in fixed if v is not None), None)
    return Element(name, value_given, entity_type="[@type]" in value.replace(" ", ""))


@dataclass(frozen=True)
class TypeMap:
    """Entity type (lower-cased) -> Element, and the Element of any type not listed."""

    elements: dict[str, Element]
    fallback: Element

    def element(self, entity_type: str) -> Element:
        """The element for an entity of `entity_type`."""
        return self.elements.get(entity_type.lower(), self.fallback)

    def updated(self, elements: dict[str, Element], fallback: Optional[Element]) -> "TypeMap":
        """This map with `elements` (lower-cased keys) added or replaced, and a new fallback if given."""
        return TypeMap({**self.elements, **elements}, fallback or self.fallback)


PERSON, PLACE, ORGANISATION, DATE = Element("persName"), Element("placeName"), Element("orgName"), Element("date")
DEFAULT_TYPE_MAP = TypeMap(
    {
        **dict.fromkeys(("per", "pers", "person"), PERSON),
        **dict.fromkeys(("loc", "place", "location"), PLACE),
        **dict.fromkeys(("org", "organization", "organisation"), ORGANISATION),
        "date": DATE,
    },
    Element("name", entity_type=True),
)


def load_type_map(path: Path, base: TypeMap = DEFAULT_TYPE_MAP) -> TypeMap:
    """`base` overridden by the YAML mapping in `path` (type: element); a bad file is a one-line error with its line."""
    text = read_utf8(path, "markup map file")
    root = compose_yaml(text, path)  # nodes, for the line of each entry
    if not isinstance(root, yaml.MappingNode) or not root.value:
        line = root.start_mark.line + 1 if root is not None else None
        raise InputError(path, line, "a markup map is a YAML mapping of entity type to TEI element, e.g. `work: title` or `LOC: name[@type=place]`")
    elements: dict[str, Element] = {}
    fallback = None
    for key, value in root.value:
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode) or not key.value.strip():
            raise InputError(path, line, "an entity type must be a non-empty name")
        if not isinstance(value, yaml.ScalarNode):
            raise InputError(path, value.start_mark.line + 1, f"the element of '{key.value}' must be one name such as persName or name[@type=city]")
        entity_type = key.value.strip().lower()
        if entity_type in elements or (entity_type == FALLBACK_KEY and fallback is not None):
            raise InputError(path, line, f"type '{key.value}' appears twice (types match case-insensitively)")
        try:
            element = parse_element(value.value)
        except ValueError as err:
            raise InputError(path, value.start_mark.line + 1, str(err)) from None
        if entity_type == FALLBACK_KEY:
            fallback = element
        else:
            elements[entity_type] = element
    return base.updated(elements, fallback)
