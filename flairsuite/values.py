"""Small helpers for values read from YAML and JSON files: type tests (a bool is no number there,
although `True == 1` in Python) and how a value is quoted in a one-line error message. The rules settings are checked
by are built on them in `flairsuite.settings_schema`."""

import json
import math
from typing import Any


def is_int(value: Any) -> bool:
    """Whether `value` is an integer, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether `value` is an int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """Whether `value` is a number other than NaN and the infinities (YAML's `.nan`, `.inf`; JSON's NaN, Infinity)."""
    return is_number(value) and math.isfinite(value)


def is_positive_number(value: Any) -> bool:
    """Whether `value` is a finite number above 0."""
    return is_finite_number(value) and value > 0


def json_problem(err: ValueError) -> str:
    """What a JSON parser's error says, up to its first ';' (Python's refusal of an over-long number goes on with advice
    for programmers)."""
    return str(err).split(";")[0]


def show(value: Any) -> str:
    """`value` as JSON (as the user would write it: `"rmsprop"`, `true`, `1.5`), for error messages."""
    return json.dumps(value, ensure_ascii=False, default=str)
