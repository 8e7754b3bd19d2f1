"""The hyper-parameters of fastText vectors, declared once: `FastTextConfig`, whose fields `train-fasttext`'s options
are generated from. Gensim-free, so that `flairsuite train-fasttext --help` reads them without loading gensim."""

from dataclasses import dataclass

from flairsuite.settings_schema import INTEGER, OPTIONS, POSITIVE_INTEGER, CheckedSettings, setting


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
