"""Each setting is declared once: in its settings class (type, rule, default, help). Command options that set a field
are generated from it (flairsuite/cli/settings_options.py), presets hold values only and are checked by the class.

The test walks every command of the installed CLI and every `CheckedSettings` class of the package and fails where an
option declared by hand carries the name of a settings field (a second declaration), unless the name is listed below
with why it is another setting that happens to share the name.
"""

import importlib
import pkgutil
from dataclasses import fields

import click
import pytest

import flairsuite
from flairsuite.cli.group import cli
from flairsuite.cli.settings_options import declared_option
from flairsuite.settings_schema import HELP, CheckedSettings

# option name -> (why it is not a field's second declaration, the commands where it may appear)
SAME_NAME_OTHER_SETTING = {
    "threads": ("the process's thread count: one declaration, cli/group.threads_option_for; FastTextConfig.threads, CharlmRun.threads "
                "and FastTextRun.threads receive it (no default or help of their own)",
                {"train-charlm", "train-fasttext", "train-bert", "evaluate", "charlm-perplexity", "tag", "quickstart", "predict", "serve",
                 "suggest", "train-tagger"}),
    "force": ("one declaration, cli/group.force_option; CharlmRun.force and FastTextRun.force receive it (no default or help of their own)",
              {"train-charlm", "train-fasttext", "compact-fasttext", "train-bert", "tag", "discover-words", "train-tagger"}),
    "corpora_dir": ("one declaration, cli/group.corpora_dir_option; CharlmRun.corpora_dir and FastTextRun.corpora_dir receive it (no "
                    "default or help of their own)", {"corpora list", "corpora stats", "corpora check", "corpora fetch", "train-charlm",
                                                      "train-fasttext", "compact-fasttext", "train-bert", "evaluate", "charlm-perplexity",
                                                      "tag", "quickstart", "discover-words", "train-tagger"}),
    "out_dir": ("--out, the folder a command writes into (a click.Path, declared by each command with its own help); CharlmRun.out_dir "
                "and FastTextRun.out_dir receive train-charlm's and train-fasttext's (no default or help of their own)",
                {"train-charlm", "train-fasttext", "compact-fasttext", "train-bert"}),
    "resume": ("the flag continuing a killed run, declared by each training command with its own help; CharlmRun.resume receives "
               "train-charlm's (no default or help of its own)", {"train-charlm", "train-bert"}),
    "lang": ("the language a command trains or reads; CharlmRun.lang and FastTextRun.lang generate train-charlm's and train-fasttext's "
             "--lang, the other commands' languages are settings of their own", {"train-bert", "discover-words", "train-tagger"}),
    "preset": ("train-bert's preset (flairsuite/bert/settings.py); CharlmRun.preset is the character LM recipe's", {"train-bert"}),
    "max_hours": ("train-bert's time budget; CharlmRun.max_hours is a character LM's, per direction", {"train-bert"}),
    "name": ("the output folder's or dataset's name; Adaptation.name is a key of an experiment's adapt: block; CharlmRun.name and "
             "FastTextRun.name generate train-charlm's and train-fasttext's --name",
             {"corpora stats", "corpora check", "corpora fetch", "compact-fasttext", "train-bert", "evaluate", "charlm-perplexity"}),
    "max_chars": ("serve's request limit; CharlmRun.max_chars (train-charlm's budget per direction) and Adaptation.max_chars (the "
                  "adapt: block's) are the character LM's", {"serve"}),
    "precision": ("train-bert's arithmetic (auto|float32|bfloat16), not a setting of the run; TrainSettings.precision is a tagger's, "
                  "set in an experiment file; CharlmRun.precision generates train-charlm's", {"train-bert"}),
    "batch_size": ("sentences per inference batch; the training settings' batch sizes are other settings",
                   {"evaluate", "predict", "suggest"}),
    "texts": ("suggest's input files, and train-tagger's plain texts, which it writes into the adapt: block's text; Adaptation.texts "
              "is that key read back (a plain field, no rule or option of its own)", {"suggest", "train-tagger"}),
    "max_epochs": ("train-tagger's cap, written into the experiment file's train: block, where TrainSettings.max_epochs checks it "
                   "(an option generated from TrainSettings would load torch with the CLI: models/settings.py imports it)", {"train-tagger"}),
}


def settings_classes() -> list[type]:
    for module in pkgutil.walk_packages(flairsuite.__path__, "flairsuite."):
        importlib.import_module(module.name)
    found, stack = [], list(CheckedSettings.__subclasses__())
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return sorted(found, key=lambda cls: cls.__name__)


def commands(group: click.Group = cli, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        found.extend(commands(command, full + " ") if isinstance(command, click.Group) else [(full, command)])
    return found


CLASSES = settings_classes()
FIELDS = {declared.name: cls for cls in CLASSES for declared in fields(cls)}


def test_the_walk_finds_the_commands_and_the_settings_classes() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"Hyper", "PrepareConfig", "FastTextConfig", "BertSettings", "DiscoverySettings", "TrainSettings"} <= names
    assert {"train-charlm", "train-fasttext", "train-bert", "discover-words", "tag", "predict", "corpora stats"} <= dict(commands()).keys()


@pytest.mark.parametrize("command_name, command", commands(), ids=[name for name, _ in commands()])
def test_no_option_declares_a_settings_field_a_second_time(command_name: str, command: click.Command) -> None:
    sources = [declared_option(param) for param in command.params if declared_option(param)]
    assert len(sources) == len(set(sources)), f"{command_name}: a field generates two options"
    for param in command.params:
        if not isinstance(param, click.Option) or declared_option(param) or param.name not in FIELDS:
            continue
        why, where = SAME_NAME_OTHER_SETTING.get(param.name, ("", set()))
        assert command_name in where, (
            f"{command_name} declares --{param.name.replace('_', '-')} by hand, and {FIELDS[param.name].__name__}.{param.name} "
            "declares it too: generate the option from the field (options_from) or list the name here with why it differs"
        )


def test_every_field_with_help_text_is_an_option_somewhere() -> None:
    generated = {declared_option(param) for _, command in commands() for param in command.params if declared_option(param)}
    helped = {(cls, declared.name) for cls in CLASSES for declared in fields(cls) if declared.metadata.get(HELP)}
    assert helped and helped <= generated, f"help text no option shows: {sorted((c.__name__, n) for c, n in helped - generated)}"


def test_an_option_generated_from_a_field_is_its_declaration() -> None:
    from flairsuite.charlm.settings import Hyper

    option = {param.name: param for param in dict(commands())["train-charlm"].params}["nlayers"]
    assert option.opts == ["--layers"] and declared_option(option) == (Hyper, "nlayers")
    assert option.help == next(declared.metadata[HELP] for declared in fields(Hyper) if declared.name == "nlayers")
    assert isinstance(option.type, click.types.IntParamType) and option.default is None  # the preset's, where not given


def test_presets_hold_values_that_the_settings_class_checks(tmp_path, monkeypatch) -> None:
    from flairsuite.bert.settings import BertSettings, presets
    from flairsuite.charlm import recipes
    from flairsuite.charlm.settings import Hyper
    from flairsuite.errors import FlairsuiteError

    for name, values in presets().items():
        assert BertSettings(**values).layers > 0, name
    for language in recipes.languages():
        for preset in recipes.default_presets():
            values = recipes.recipe(language, preset)
            Hyper(**{key: value for key, value in values.items() if key not in recipes.BUDGET_KEYS})
    misspelt = {"presets": {"cpu": {**recipes.default_presets()["cpu"], "hiden_size": 3}}}
    monkeypatch.setattr(recipes, "_load", lambda name: misspelt)
    with pytest.raises(FlairsuiteError, match=r"^charlm preset cpu of de: unknown setting 'hiden_size'\. Did you mean"):
        recipes.recipe("de", "cpu")
