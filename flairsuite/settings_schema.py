"""The one way a settings object checks its values: frozen dataclasses whose fields carry a `Rule`.

A `Rule` is what a value must be, in words (`a positive integer`), and the test; `setting(rule, default)` declares a
dataclass field with its rule (in the field's metadata, so `asdict`, the field order and the defaults, which run records
and experiment fingerprints hash, are those of a plain dataclass); `CheckedSettings.__post_init__` checks every field and
refuses the first bad value with one line, `<name> must be <rule> (found <value>)`. Where a name is written depends on
where the user wrote the value: `KEYS` as in a YAML file (`train.max_epochs must be a positive integer (found 0)`),
`OPTIONS` as a command-line option (`--hidden-size must be a positive integer (found 2.5)`). Integers refuse fractions
and bools everywhere (`values.is_int`); numbers refuse NaN and the infinities where a range is asked for.

Why in-house and not pydantic: the suite's messages are one line each, in its own words, with the example the user
needs, and tests pin them; pydantic's `ValidationError` is several lines in pydantic's words, coerces (`"2"`, `2.0`
-> 2) unless every model is strict, and its models replace the frozen dataclasses whose `asdict` output is
fingerprinted, which would have to be proven byte-identical for every record. The base below is a few dozen lines on
top of `dataclasses`, adds no dependency and keeps every record as it was. Values that are not settings objects use
the same `Rule`s: an experiment file's leaves (seeds, shares; experiments/validation.py), the pre-training budget
options (`pretraining.budget_from`), the values a summary.json reader needs and the keys of the other JSON records
(`experiment.json`, the active-learning records; flairsuite/files/summary_file.py, through `refusal`), the leaves of the
metrics.json schema (flairsuite/results/metrics_file.py, with its `key '...'` wording).
"""

import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable, ClassVar, Mapping, NamedTuple, Optional, Sequence, Union

from flairsuite.errors import FlairsuiteError, unknown_name_error
from flairsuite.values import is_finite_number, is_int, is_number, show

RULE = "rule"  # the key of a field's metadata holding its Rule
HELP = "help"  # ... its help text: what `--help` shows for the option generated from it (flairsuite/cli/settings_options.py)
OPTION = "option"  # ... its option's name where that is not the field's (`layers` for `nlayers`)
METAVAR = "metavar"  # ... what `--help` calls its value, where the type's name says too little (`PATH`)


@dataclass(frozen=True)
class Rule:
    """What a value must be, in words (after "must be"), and the test."""

    description: str
    test: Callable[[Any], bool]
    choices: tuple[str, ...] = ()  # the allowed strings, where the rule is a choice (`one_of`): an option offers them

    def __call__(self, value: Any) -> bool:
        return bool(self.test(value))

    def or_null(self, meaning: str) -> "Rule":
        """This rule, or null (None) meaning `meaning`: `a positive integer, or null for one pass over train`."""
        return Rule(f"{self.description}, or null for {meaning}", lambda v: v is None or self.test(v), self.choices)

    def noted(self, note: str) -> "Rule":
        """This rule with `note` (a reason or an example, with its own lead: ` (1: no annealing)`) after its description."""
        return Rule(f"{self.description}{note}", self.test, self.choices)


def at_least(low: int, noun: str = "integer") -> Rule:
    """An integer (not a bool, not a fraction) of at least `low`: `a positive integer` for 1, `a non-negative integer` for 0."""
    words = {1: f"a positive {noun}", 0: f"a non-negative {noun}"}.get(low, f"at least {low}")
    return Rule(words, lambda v: is_int(v) and v >= low)


POSITIVE_INTEGER = at_least(1)
NON_NEGATIVE_INTEGER = at_least(0)
POSITIVE_NUMBER = Rule("a positive number", lambda v: is_finite_number(v) and v > 0)
NON_NEGATIVE_NUMBER = Rule("a non-negative number", lambda v: is_finite_number(v) and v >= 0)
FLAG = Rule("true or false", lambda v: isinstance(v, bool))
TEXT = Rule("a string", lambda v: isinstance(v, str))
NUMBER = Rule("a number", is_number)
INTEGER = Rule("an integer", is_int)


def interval(low: float, high: float, low_open: bool, high_open: bool, noun: str = "a number") -> Rule:
    """A number (NaN never) between `low` and `high`, each end open or closed: `a number in [0, 1)`."""

    def test(value: Any) -> bool:
        if not is_number(value) or math.isnan(value):
            return False
        return (low < value if low_open else low <= value) and (value < high if high_open else value <= high)

    return Rule(f"{noun} in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}", test)


FRACTION = interval(0, 1, low_open=False, high_open=False, noun="a fraction")  # a score: `a fraction in [0, 1]`


def one_of(choices: Sequence[str], lead: str = "one of:") -> Rule:
    """A string among `choices`: `one of: sgd, adam, adamw`."""
    return Rule(f"{lead} {', '.join(choices)}", lambda v: isinstance(v, str) and v in choices, tuple(choices))


def setting(rule: Rule, default: Any = MISSING, help: str = "", option: str = "", metavar: str = "") -> Any:
    """A dataclass field checked by `rule` (no default: a required one). `help` says what it sets, once: the command-line
    option generated from the field shows it; `option` spells that option where it differs from the field's name,
    `metavar` names its value on `--help`."""
    return field(default=default, metadata={RULE: rule, HELP: help, OPTION: option, METAVAR: metavar})


@dataclass(frozen=True)
class Wording:
    """How a refusal names a setting and quotes the value found."""

    name: Callable[[str], str]
    found: Callable[[Any], str]


KEYS = Wording(lambda name: name, lambda value: f"found {show(value)}")  # as written in a YAML or JSON file
OPTIONS = Wording(lambda name: f"--{name.replace('_', '-')}", lambda value: f"found {show(value)}")  # as a command-line option


def refusal(name: str, rule: Rule, value: Any, wording: Wording = KEYS, where: Optional[str] = None) -> str:
    """The one-line message for `value` breaking `rule`; `where` (e.g. `tagger_train.map`) prefixes the name."""
    return f"{f'{where}.' if where else ''}{wording.name(name)} must be {rule.description} ({wording.found(value)})"


def refuse(name: str, rule: Rule, value: Any, wording: Wording = KEYS, where: Optional[str] = None) -> None:
    """A one-line FlairsuiteError unless `value` follows `rule`."""
    if not rule(value):
        raise FlairsuiteError(refusal(name, rule, value, wording, where))


def checked_keys(data: Any, known: Sequence[str], required: Sequence[str] = (), where: str = "", hint: str = "",
                 examples: Optional[Mapping[str, str]] = None, kind: str = "key") -> dict[str, Any]:
    """`data` as a mapping with only `known` keys and every `required` one, in the one wording of the suite's files:
    `<where> must be a mapping<hint>`, `<where>: unknown key 'x'. Did you mean y?` (or the known keys),
    `<where>: missing key 'k'<examples[k]>`. `where` (e.g. `adapt`) is left out at a file's top level."""
    prefix = f"{where}: " if where else ""
    if not isinstance(data, Mapping):
        raise FlairsuiteError(f"{where + ' ' if where else ''}must be a mapping{hint}")
    for key in data:
        if key not in known:
            raise FlairsuiteError(f"{prefix}{unknown_name_error(kind, str(key), list(known))}")
    for key in required:
        if key not in data:
            raise FlairsuiteError(f"{prefix}missing key '{key}'{(examples or {}).get(key, '')}")
    return dict(data)


class EachValue(NamedTuple):
    """A record's object with any keys whose every value follows `schema` (e.g. scores per entity type)."""

    schema: "Schema"


class MaybeKey(NamedTuple):
    """A record's key that may be missing (files written before it was recorded); where present its value follows `schema`."""

    schema: "Schema"


Schema = Union[Rule, EachValue, MaybeKey, Mapping[str, Any]]  # a JSON record's shape: a rule per leaf, objects as mappings


def check_record(value: Any, schema: Schema, key: str = "") -> None:
    """A one-line FlairsuiteError where the JSON value `value` breaks `schema`, in the wording of every settings error:
    `test.per_type.pers.f1 must be a fraction in [0, 1] (found 84.0)`, `missing key 'dev.f1'`, `not a JSON object`."""
    if isinstance(schema, Rule):
        refuse(key, schema, value)
        return
    if not isinstance(value, dict):
        raise FlairsuiteError(refusal(key, Rule("an object", lambda v: False), value) if key else "not a JSON object")
    if isinstance(schema, EachValue):
        for name, item in value.items():
            check_record(item, schema.schema, f"{key}.{name}")
        return
    for name, sub in schema.items():
        dotted = f"{key}.{name}" if key else name
        if isinstance(sub, MaybeKey):
            if name in value:
                check_record(value[name], sub.schema, dotted)
            continue
        if name not in value:
            raise FlairsuiteError(f"missing key '{dotted}'")
        check_record(value[name], sub, dotted)


def nested(dotted: Mapping[str, Schema]) -> dict[str, Any]:
    """A record schema from dotted keys: `{"settings.objective": rule}` -> `{"settings": {"objective": rule}}`.
    An object all of whose keys may be missing may be missing itself."""
    tree: dict[str, Any] = {}
    for key, schema in dotted.items():
        *parents, leaf = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = schema
    return _optional_objects(tree)


def _optional_objects(tree: dict[str, Any]) -> dict[str, Any]:
    shaped = {key: _optional_objects(sub) if isinstance(sub, dict) else sub for key, sub in tree.items()}
    return {key: MaybeKey(sub) if isinstance(sub, dict) and all(isinstance(v, MaybeKey) for v in sub.values()) else sub
            for key, sub in shaped.items()}


class CheckedSettings:
    """Base of a frozen dataclass whose fields are declared with `setting`: every value is checked when it is made,
    then `check_together` (a subclass's rules between settings) runs."""

    wording: ClassVar[Wording] = KEYS

    def __post_init__(self) -> None:
        for declared in fields(self):  # type: ignore[arg-type]
            if RULE in declared.metadata:
                refuse(self.shown_name(declared.name), declared.metadata[RULE], getattr(self, declared.name), self.wording)
        self.check_together()

    @classmethod
    def shown_name(cls, name: str) -> str:
        """The name a refusal gives setting `name`: its option's (`layers` for `nlayers`) where the wording is of options."""
        if cls.wording is KEYS:
            return name
        return next(declared.metadata.get(OPTION) or name for declared in fields(cls) if declared.name == name)  # type: ignore[arg-type]

    @classmethod
    def from_values(cls, data: Any, where: str = "", hint: str = "") -> "CheckedSettings":
        """Settings from a mapping (a preset, a YAML block): unknown and missing keys refused as `checked_keys` words them,
        then every value checked."""
        required = [declared.name for declared in fields(cls) if declared.default is MISSING and declared.default_factory is MISSING]  # type: ignore[arg-type]
        return cls(**checked_keys(data, cls.keys(), required, where, hint))

    def check_together(self) -> None:
        """Rules that involve more than one setting (none by default); a one-line error where one is broken."""

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The names of the settings, in declaration order."""
        return tuple(declared.name for declared in fields(cls))  # type: ignore[arg-type]

    @classmethod
    def rule(cls, name: str) -> Rule:
        """The rule of setting `name`."""
        return next(declared.metadata[RULE] for declared in fields(cls) if declared.name == name)  # type: ignore[arg-type]

    @classmethod
    def check_value(cls, name: str, value: Any, where: Optional[str] = None) -> None:
        """A one-line error unless `value` suits setting `name`; `where` (e.g. `tagger_train.map`) prefixes it."""
        refuse(cls.shown_name(name), cls.rule(name), value, cls.wording, where)
