"""Command-line options generated from settings fields: a setting is declared once, in its settings class.

`options_from(Hyper, "hidden_size", ...)` adds one option per named field of a `CheckedSettings` class: its name is
the field's with dashes (or the field's `option` spelling: `--layers` for `nlayers`), its destination the field's
name, its help the field's `help`, its type the field's (an integer, a number, a choice of the rule's strings, a
`--x/--no-x` flag, a repeatable option for a list). A value given is checked against the field's rule as click parses
it, a bad one a usage error in the rule's words (`Invalid value for '--layers': must be a positive integer (found 0)`,
exit 2); the settings class checks the whole again when the command builds it (`check_together`). Not given, the
option's value is the field's default, or None with `unset=True` (the command then applies its own default: a preset,
the model being continued, the unit kind) — as it is for fields without a default (the preset supplies them).

Why generated options rather than dotted overrides (`--train.max_epochs 30`): the settings these commands take are
flat (one class, or two side by side), their users know them as options from the docs and the papers' recipes, and
`--help` lists each with its type and default; generating keeps those names and removes the second declaration.
The experiment file, where settings nest, is a YAML document with its own `key: value` overrides.
"""

from dataclasses import MISSING, Field, fields
from typing import Any, Callable, Mapping, Optional, TypeVar, Union, get_args, get_origin

import click

from flairsuite.settings_schema import HELP, METAVAR, OPTION, RULE, CheckedSettings, Rule
from flairsuite.values import show

F = TypeVar("F", bound=Callable[..., Any])


Presets = Callable[[], Mapping[str, Mapping[str, Any]]]  # preset name -> its values (read when --help asks)


class SettingOption(click.Option):
    """An option generated from a settings field; `declared_by` names the class and the field (tests walk them). With
    `presets`, `--help` ends its text with each preset's value, read from the preset files then (`[preset: cpu 512,
    paper 2048]`): the values live in the presets only."""

    def __init__(self, *args: Any, declared_by: tuple[type, str], presets: Optional[Presets] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declared_by, self.presets = declared_by, presets

    def get_help_record(self, ctx: click.Context) -> Optional[tuple[str, str]]:
        record = super().get_help_record(ctx)
        if record is None or self.presets is None:
            return record
        field_name = self.declared_by[1]
        values = ", ".join(f"{name} {_shown(values[field_name])}" for name, values in self.presets().items() if field_name in values)
        return record[0], f"{record[1]} [preset: {values}]" if values else record[1]


def _field(cls: type[CheckedSettings], name: str) -> Field:
    found = [declared for declared in fields(cls) if declared.name == name]  # type: ignore[arg-type]
    if not found:
        raise ValueError(f"{cls.__name__} has no setting '{name}'")
    return found[0]


def _base_type(annotation: Any) -> Any:
    """int for Optional[int], and so on."""
    if get_origin(annotation) is Union:
        return next(arg for arg in get_args(annotation) if arg is not type(None))
    return annotation


def _shown(value: Any) -> str:
    """A default or preset value as `--help` writes it: `512`, `true`, `mlm`."""
    return value if isinstance(value, str) else show(value)


def _help(declared: Field, shown_default: Any) -> str:
    text = declared.metadata.get(HELP, "")
    if "[default" in text or shown_default is MISSING or shown_default in ((), None):
        return text
    return f"{text} [default: {_shown(shown_default)}]".strip()


def _checked(rule: Rule) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A callback refusing a given value that breaks `rule` as a usage error: `Invalid value for '--keep': must be a share
    in (0, 1] (found NaN)` (exit 2, as click's own types refuse)."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and value != () and not rule(value):
            raise click.BadParameter(f"must be {rule.description} (found {show(value)})", ctx, param)
        return value

    return check


def setting_option(cls: type[CheckedSettings], name: str, unset: bool = False, presets: Optional[Presets] = None) -> Callable[[F], F]:
    """The option of setting `name` of `cls` (see the module docstring)."""
    declared = _field(cls, name)
    flag = "--" + (declared.metadata.get(OPTION) or name).replace("_", "-")
    kind, rule = _base_type(declared.type), declared.metadata[RULE]
    default = declared.default
    settings: dict[str, Any] = {"declared_by": (cls, name), "cls": SettingOption, "presets": presets, "callback": _checked(rule)}
    settings["help"] = declared.metadata.get(HELP, "") if presets else _help(declared, default)
    settings["default"] = None if unset or default is MISSING else default
    if kind is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", name, **settings)
    if declared.metadata.get(METAVAR):
        settings["metavar"] = declared.metadata[METAVAR]
    if get_origin(kind) is tuple:
        settings.update(multiple=True, default=())
    elif rule.choices:
        settings["type"] = click.Choice(rule.choices)
    elif kind in (int, float):
        settings["type"] = click.INT if kind is int else click.FLOAT
    return click.option(flag, name, **settings)


def options_from(cls: type[CheckedSettings], *names: str, unset: bool = False, presets: Optional[Presets] = None) -> Callable[[F], F]:
    """The options of settings `names` of `cls`, in that order on `--help`; `unset`: None where not given; `presets`: the
    preset values `--help` shows."""

    def decorate(command: F) -> F:
        for name in reversed(names):
            command = setting_option(cls, name, unset, presets)(command)
        return command

    return decorate


def declared_option(option: click.Parameter) -> Optional[tuple[type, str]]:
    """The settings class and field an option was generated from, or None for an option declared by hand."""
    return getattr(option, "declared_by", None)
