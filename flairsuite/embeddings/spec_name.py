"""The grammar an embedding spec's name shares across kinds: `NAME@OPTION@OPTION...` after the kind's prefix.

`split_name` parts the name from its options for every kind (`de-forward@context500`, `de-cpu@mean@last4`,
`de@subwords`, `de@daluke`); `flag_problem` checks the names of the kinds whose options are flags from a fixed set
(fasttext, lexicon): a name before the options, each option known, none given twice.
"""

from typing import Optional


def split_name(name: str) -> tuple[str, list[str]]:
    """`"de@subwords"` -> `("de", ["subwords"])`; a name without `@` has no options."""
    base, *options = name.split("@")
    return base, options


def flag_problem(name: str, kind: str, flags: tuple[str, ...]) -> Optional[str]:
    """What to write instead of `kind:name` when it has no name, an unknown flag or one flag twice; None for a good name."""
    base, options = split_name(name)
    example = f"{kind}:de@{flags[0]}"
    if not base:
        return f"write {kind}:NAME, with options after it, e.g. {example}"
    unknown = [option for option in options if option not in flags]
    if unknown:
        return f"unknown option @{unknown[0]} (options: {', '.join('@' + flag for flag in flags)})"
    if len(options) > len(set(options)):
        return f"give each option once, e.g. {example}"
    return None
