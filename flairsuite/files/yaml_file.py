"""The one YAML reader of the suite: experiment files, the dataset registry, char-LM recipes, BERT presets, ablation
specs and type maps are all read here, with the same rules.

PyYAML's safe loader, with two changes: a mapping that names a key twice is refused (plain YAML keeps the last,
silently), and numbers are read as YAML 1.2 reads them (`5e-5` and `1e3` are floats; YAML 1.1 wants `5.0e-5`).
A problem is a one-line `InputError` naming the file and, where YAML knows it, the line.
"""

import re
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Callable, Union

import yaml

from flairsuite.errors import InputError, read_utf8


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names a key twice, and reading `1e-5` as a float (YAML 1.2)."""


def _construct_unique_mapping(loader: UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Hashable] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, Hashable):
            continue  # construct_mapping reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}': each name may appear once", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
# SafeLoader's float pattern with the dot optional; the resolver keeps a per-class copy of the table
UniqueKeyLoader.yaml_implicit_resolvers = {key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()}
UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def yaml_problem(err: yaml.YAMLError) -> tuple[Union[int, None], str]:
    """The line (1-based, None where unknown) and the one-line reason of a PyYAML error."""
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        return (mark.line + 1 if mark else None), f"not valid YAML: {err.problem or err.context}"
    return None, f"not valid YAML: {err}"


def _loaded(load: Callable[..., Any], text: str, source: Union[str, Path]) -> Any:
    """`load` (PyYAML's `load` or `compose`) of `text` with this module's loader; a problem is a one-line InputError."""
    try:
        return load(text, Loader=UniqueKeyLoader)
    except yaml.YAMLError as err:
        line, problem = yaml_problem(err)
        raise InputError(source, line, problem) from None


def parse_yaml(text: str, source: Union[str, Path]) -> Any:
    """The data of the YAML `text` read from `source` (a path, for messages); a problem is a one-line InputError."""
    return _loaded(yaml.load, text, source)


def compose_yaml(text: str, source: Union[str, Path]) -> Any:
    """The node tree of the YAML `text` (for a reader that reports values by line); a problem is a one-line InputError."""
    return _loaded(yaml.compose, text, source)


def read_yaml(path: Union[str, Path], what: str = "file") -> Any:
    """The data of the YAML file `path` (`what` names it where it is missing: `experiment file`)."""
    return parse_yaml(read_utf8(path, what), path)
