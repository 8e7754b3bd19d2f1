"""What determines a prepared raw-text corpus, declared once: `PrepareConfig`, whose fields the pre-training commands'
options are generated from (`--corpus`, `--heldout-fraction`, `--unk-fraction`, `--seed`, `--new-chars`, `--exclude`).

Torch- and numpy-free, so that a command's `--help` reads the declarations without loading the preparation.
"""

from dataclasses import dataclass

from flairsuite.settings_schema import INTEGER, OPTIONS, POSITIVE_INTEGER, TEXT, CheckedSettings, Rule, interval, one_of, setting

MAX_UNK_FRACTION = 0.01  # --unk-fraction at most: 10,000x the paper's 1e-06; beyond it common characters would become <unk>
FILE_LIST = Rule("a list of file paths", lambda v: isinstance(v, tuple) and all(isinstance(path, str) for path in v))
CHARACTERS = Rule("a list of distinct single characters", lambda v: isinstance(v, tuple) and all(isinstance(c, str) and len(c) == 1 for c in v)
                  and len(set(v)) == len(v))
NAMES = Rule("a list of corpus names or folders", lambda v: isinstance(v, tuple) and all(isinstance(name, str) and name for name in v))
NEW_CHARS = ("unk", "extend")  # what a character outside `base_chars` becomes
CONTINUATION_KEYS = ("base_chars", "new_chars", "exclude")  # in a cache key only where set: earlier keys stay as they were


@dataclass(frozen=True)
class PrepareConfig(CheckedSettings):
    """What determines a prepared corpus (and so its cache key). Shares that would leave no training text, or map common
    characters to <unk>, are one-line errors (NaN included)."""

    wording = OPTIONS

    language: str = setting(TEXT)
    raw_set: str = setting(TEXT, "")
    corpus: tuple[str, ...] = setting(
        FILE_LIST, (), help="Text files or folders (.txt, .txt.gz), one document per line; default: the language's raw-text set.",
        metavar="PATH",
    )
    heldout_fraction: float = setting(
        interval(0, 0.5, low_open=True, high_open=True, noun="a share").noted(": valid and test take it each"), 0.01,
        help="Share of documents for valid and for test (the prepared corpus is shared by the pre-training commands).",
    )
    max_heldout_chars: int = setting(POSITIVE_INTEGER, 2_000_000)
    unk_fraction: float = setting(
        interval(0, MAX_UNK_FRACTION, low_open=False, high_open=False, noun="a share").noted(
            ": the paper's is 1e-06, more maps common characters to <unk>"
        ),
        1e-6,
        help="The rarest characters, up to this share of all, become <unk>.",
    )
    seed: int = setting(INTEGER, 1, help="Random seed of the held-out split and of training (a continued model keeps its own).")
    base_chars: tuple[str, ...] = setting(CHARACTERS, ())  # the dictionary of an LM being continued (ids 1, 2, ...); empty: from the text
    new_chars: str = setting(
        one_of(NEW_CHARS), "unk",
        help="With --init: a character of the new text the model lacks is read as <unk>, or extends the dictionary with fresh rows.",
    )
    exclude: tuple[str, ...] = setting(
        NAMES, (),
        help="A labeled dataset or own corpus folder whose dev and test sentences are cut out of the text too (repeatable); "
        "a corpus in another format than column as its experiment entry: '{path: data/letters/, format: webanno}'.",
        metavar="CORPUS_OR_PATH",
    )


@dataclass(frozen=True, kw_only=True)
class TextRun(CheckedSettings):
    """The prepared-text settings every training command's run takes on to `PrepareConfig` (`corpus`, `exclude`,
    `heldout_fraction`, `seed`): their rules and defaults are `PrepareConfig`'s, declared there once."""

    corpus: tuple[str, ...] = setting(PrepareConfig.rule("corpus"), PrepareConfig.corpus)
    exclude: tuple[str, ...] = setting(PrepareConfig.rule("exclude"), PrepareConfig.exclude)
    heldout_fraction: float = setting(PrepareConfig.rule("heldout_fraction"), PrepareConfig.heldout_fraction)
    seed: int = setting(PrepareConfig.rule("seed"), PrepareConfig.seed)

