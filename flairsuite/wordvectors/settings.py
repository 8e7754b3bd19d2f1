"""The hyper-parameters of fastText vectors, declared once: `FastTextConfig`, whose fields `train-fasttext`'s options
are generated from. Gensim-free, so that `flairsuite train-fasttext --help` reads them without loading gensim.

`FastTextRun` is one `train-fasttext` run as the library takes it (`train_fasttext.train_fasttext_command`): what the
command's options give (`FastTextRun.from_options`), or what an experiment's `adapt:` block asks
(flairsuite/experiments/adaptation.py)."""

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Optional

from flairsuite.errors import unknown_name_error
from flairsuite.rawtext.settings import TextRun
from flairsuite.settings_schema import FLAG, INTEGER, OPTIONS, POSITIVE_INTEGER, RULE, TEXT, CheckedSettings, Rule, checked_keys, setting


@dataclass(frozen=True)
class FastTextConfig(CheckedSettings):
    """Hyper-parameters (skip-gram, character n-grams of 3 to 6 characters as in fastText); a bad one is a one-line error."""

    wording = OPTIONS

    dim: int = setting(POSITIVE_INTEGER, 300, help="Vector size (300: fastText's published size; it beat 100 on Sturm dev by 1.9 F1, "
                       "results/README.md). With --init: the model's.")
    epochs: int = setting(POSITIVE_INTEGER, 5, help="Passes over the training text (with --init: the new text).")
    min_count: int = setting(POSITIVE_INTEGER, 5, help="Words rarer than this get no vector of their own (with --init: the model's, "
                             "applied to the new text's words).")
    threads: int = setting(POSITIVE_INTEGER, 1)  # gensim's workers: the command's --threads (default all cores)
    buckets: int = setting(POSITIVE_INTEGER, 2_000_000, help="Hash buckets for character n-grams (memory: buckets x dim floats). "
                           "With --init: the model's.")
    window: int = setting(POSITIVE_INTEGER, 5)
    seed: int = setting(INTEGER, 1)  # gensim's; train-fasttext passes the prepared text's --seed (rawtext.settings.PrepareConfig)


CONFIG_OPTIONS = ("dim", "epochs", "min_count", "buckets")  # the FastTextConfig settings train-fasttext has options for
CONFIG_GIVEN = Rule(f"a mapping of {', '.join(CONFIG_OPTIONS)} to the values given", lambda v: isinstance(v, Mapping))


@dataclass(frozen=True, kw_only=True)
class FastTextRun(TextRun):
    """One `train-fasttext` run: every value it takes, each checked as the run is made (a bad one: a one-line error naming
    its option). Fields with help generate the command's options; `corpus`, `exclude`, `heldout_fraction` and `seed`
    (`TextRun`) are `PrepareConfig`'s settings (rule, default and option declared there), `config` the `FastTextConfig`
    options given (`CONFIG_OPTIONS`; the others: its defaults, or the `--init` model's). `out_dir` to `corpora_dir` have
    no default: the command's own options declare them (`--out`, cli/group.py's shared options), and a run built in code
    says them."""

    wording = OPTIONS

    out_dir: Optional[str] = setting(TEXT.or_null("wordvectors/ under $FLAIRSUITE_HOME"))
    force: bool = setting(FLAG)
    threads: Optional[int] = setting(POSITIVE_INTEGER.or_null("all cores"))
    corpora_dir: Optional[str] = setting(TEXT.or_null("$FLAIRSUITE_CORPORA, else ./corpora under $FLAIRSUITE_HOME"))
    lang: Optional[str] = setting(
        TEXT.or_null("the --init vectors'"), None,
        help="Language (de, en, da, zh): its raw-text set, and the labeled corpora whose tokens are added. With --init: the vectors', unless given.",
    )
    init: Optional[str] = setting(
        TEXT.or_null("new vectors"), None, metavar="NAME",
        help="Continue trained vectors on the --corpus text (e.g. de: wordvectors/de-fasttext, or a vectors folder): gensim's "
        "vocabulary update of their full model (model/), which keeps its dim, buckets and window (docs/word-vectors.md). Needs --name.",
    )
    name: Optional[str] = setting(
        TEXT.or_null("LANG"), None, help="Vectors folder prefix [default: LANG]: vectors go to wordvectors/NAME-fasttext (spec fasttext:NAME).",
    )
    keep_model: bool = setting(
        FLAG, True, option="model",
        help="Keep the full gensim model in the vectors folder's model/ (word and n-gram vectors, output layer: about 2.6 GB at "
        "dim 300 and 2 M buckets, mostly buckets x dim x 4 bytes); --init needs it to continue the vectors on new text. [default: model]",
    )
    config: Mapping[str, Any] = field(default_factory=dict, metadata={RULE: CONFIG_GIVEN})

    def check_together(self) -> None:
        for name, value in self.config.items():
            if name not in CONFIG_OPTIONS:
                raise unknown_name_error("fastText option", str(name), list(CONFIG_OPTIONS))
            FastTextConfig.check_value(name, value)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "FastTextRun":
        """The run the command's parsed options ask for: the `CONFIG_OPTIONS` given (not None) as `config`. An unknown or
        missing option, or a bad value: a one-line error."""
        config = {name: options[name] for name in CONFIG_OPTIONS if options.get(name) is not None}
        rest = {key: value for key, value in options.items() if key not in CONFIG_OPTIONS}
        known = [name for name in cls.keys() if name != "config"]
        required = [declared.name for declared in fields(cls) if declared.default is MISSING and declared.default_factory is MISSING]
        return cls(**checked_keys(rest, known, required, where="train-fasttext", kind="option"), config=config)
