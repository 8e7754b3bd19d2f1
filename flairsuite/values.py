"""Small helpers for values read from YAML and JSON files: type tests (a bool is no number there,
although `True == 1` in Python) and how a value is quoted in a one-line error message."""

import json
import math
from typing import Any


def is_int(value: Any) -> bool:
    """Whether `value` is an integer, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether `value` is an int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_positive_number(value: Any) -> bool:
    """Whether `value` is a finite number above 0 (YAML's `.inf` and `.nan` are not)."""
    return is_number(value) and math.isfinite(value) and value > 0


def show(value: Any) -> str:
    """`value` as JSON (as the user would write it: `"rmsprop"`, `true`, `1.5`), for error messages."""
    return json.dumps(value, ensure_ascii=False, default=str)
