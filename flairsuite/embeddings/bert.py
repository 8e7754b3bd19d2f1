"""The `bert` kind: a small BERT trained by `train-bert`, as Flair's `TransformerWordEmbeddings`.

Spec `bert:NAME`, optionally followed by options, each after an `@`, in any order:

| option | meaning | default |
|---|---|---|
| `@first`, `@mean` | a word's vector: its first sub-token's, or the mean of its sub-tokens' | `first` |
| `@lastN` | the mean of the last N layers (`@last4`: layers -1 to -4) | `last1`: the last layer |
| `@layerK` | layer K alone (`@layer-2`: the last but one; 0: the embedding layer's output) | |

Layers are counted as Flair counts them: the embedding layer's output, then each transformer layer's
(a 4-layer model has -5 to 4; `@last5` averages all of them).

e.g. `bert:de-cpu` (Flair's defaults: `layers="-1"`, `subtoken_pooling="first"`), `bert:de-cpu@mean@last4`.
Unlike Flair's default, a sentence longer than the model's sequences is embedded in windows overlapping by half
(`allow_long_sentences`): cut off, every word after the cut got a zero vector (LER: 10 % of the test tokens).
Artifact: the Hugging Face model folder `bert/NAME/` below the home folder, named by its
`config.json`; a cache key digests every file of the folder except the pre-training's own
(`checkpoint.pt`, `summary.json`, `learning-curve.png`): config, weights, tokenizer, and for the suite's model type
the installed model code in place of the folder's copy of it.

The model is read from that folder only (no download; `local_files_only`). Absolute positions with
full attention are a plain `BertModel`; relative positions or Whole-Word Attention are the suite's
model type "flairsuite_bert", registered with transformers by `import flairsuite.bert` (`resolve`
imports it, and so must any process that loads a tagger on such a model; imported here only when
needed, as it adds seconds to the start of every command). Fixed while a tagger
trains unless the tagger fine-tunes (`fine_tune: true` in an experiment); no fast inference path
(Flair's own `embed`).
"""

import re
from pathlib import Path
from typing import Any, Optional

from flair.embeddings import TokenEmbeddings, TransformerWordEmbeddings

from flairsuite.embeddings.spec_name import split_name
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import bert_dir
from flairsuite.files.summary_file import SUMMARY_FILE
from flairsuite.rawtext.language import raw_languages

CONFIG_FILE = "config.json"
TRAINING_FILES = ("checkpoint.pt", SUMMARY_FILE, "learning-curve.png")  # train-bert's own files, not the model's
POOLINGS = ("first", "mean")
LAST_LAYERS = re.compile(r"last([1-9][0-9]*)")
ONE_LAYER = re.compile(r"layer(-?[0-9]+)")
OPTIONS_HELP = "options are @first or @mean (sub-token pooling) and @lastN or @layerK (layers), e.g. bert:de-cpu@mean@last4"


def options_of(name: str) -> tuple[str, str]:
    """Flair's `subtoken_pooling` and `layers` for the options of `name`; a bad option is a FlairsuiteError."""
    pooling, layers = [], []
    for option in split_name(name)[1]:
        if option in POOLINGS:
            pooling.append(option)
        elif LAST_LAYERS.fullmatch(option):
            layers.append(",".join(str(-k) for k in range(1, int(option[4:]) + 1)))
        elif ONE_LAYER.fullmatch(option):
            layers.append(str(int(option[5:])))
        else:
            raise FlairsuiteError(f"unknown option '@{option}': {OPTIONS_HELP}")
    if len(pooling) > 1 or len(layers) > 1:
        raise FlairsuiteError(f"give at most one pooling and one layer option: {OPTIONS_HELP}")
    return (pooling or ["first"])[0], (layers or ["-1"])[0]


def check_name(name: str) -> Optional[str]:
    """What to write instead of a bad name or option; None for a good one."""
    if not split_name(name)[0]:
        return "write bert:NAME, with options after it, e.g. bert:de-cpu@mean"
    try:
        options_of(name)
    except FlairsuiteError as err:
        return str(err)
    return None


def artifact(name: str, home: Path) -> Path:
    """The config file of model folder NAME (the options stripped) below `home`."""
    return bert_dir(home) / split_name(name)[0] / CONFIG_FILE


def build_command(name: str) -> str:
    """The `train-bert` call that writes folder NAME (`LANG-PRESET` is what `--lang LANG --preset PRESET` names)."""
    from flairsuite.bert.settings import presets

    folder = split_name(name)[0]
    lang, _, preset = folder.rpartition("-")
    if lang in raw_languages() and preset in presets():
        return f"flairsuite train-bert --lang {lang}" + ("" if preset == "cpu" else f" --preset {preset}")
    return f"flairsuite train-bert --lang LANG --name {folder}"


RUNNING_MODEL_CODE = Path(__file__).resolve().parents[1] / "bert" / "modeling_flairsuite_bert.py"  # what runs the suite's model type


def digested(path: Optional[Path]) -> list[Path]:
    """The files a cache key digests: every file of the model folder but train-bert's own, sorted by name. The folder's
    copy of the model code (`modeling_flairsuite_bert.py`, saved for `trust_remote_code`) is digested as the installed
    module instead: that module is what computes the vectors (`import flairsuite.bert` registers it), so a change to it,
    such as the Char-Entity matching, keys new caches; while the two are equal the key is the same."""
    folder = path.parent
    files = sorted(file for file in folder.iterdir() if file.is_file() and file.name not in TRAINING_FILES and not file.name.startswith("."))
    return [RUNNING_MODEL_CODE if file.name == RUNNING_MODEL_CODE.name else file for file in files]


PRETRAINING_SETTINGS = ("objective", "wwm", "positions", "attention", "seq_len", "layers", "hidden_size")


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """What a run records of the pre-training (`summary.json` of train-bert): its settings, tokens, hours, MLM accuracy, and the
    training steps' precision where train-bert recorded it (newer models)."""
    settings = summary.get("settings", {})
    return {**{key: settings.get(key) for key in PRETRAINING_SETTINGS}, "tokens": summary.get("tokens_seen"), "hours": summary.get("hours"),
            "device": summary.get("device"), "threads": summary.get("threads"), "valid_accuracy": summary.get("valid_accuracy"),
            "parameters": summary.get("parameters"), **({"precision": summary["precision"]} if summary.get("precision") else {})}


def frozen(fine_tune: bool) -> bool:
    """Fixed while a tagger trains, unless the tagger fine-tunes its BERTs."""
    return not fine_tune


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """Flair's embedding of the model folder, fixed (`set_fine_tune` makes it train)."""
    import flairsuite.bert  # noqa: F401  (registers the model type "flairsuite_bert" with transformers)

    pooling, layers = options_of(name)
    embedding = TransformerWordEmbeddings(
        str(path.parent),
        fine_tune=False,
        layers=layers,
        layer_mean=True,
        subtoken_pooling=pooling,
        allow_long_sentences=True,  # longer than the model's sequences: overlapping windows (stride half a window), not cut off
        use_context=False,
        use_context_separator=False,  # no added token: the model's vocabulary stays as trained
        name=f"bert-{name}",
        transformers_tokenizer_kwargs={"local_files_only": True},
        transformers_config_kwargs={"local_files_only": True},
        transformers_model_kwargs={"local_files_only": True},
    )
    states = embedding.model.config.num_hidden_layers + 1  # the embedding layer's output, then each layer's
    if not all(-states <= index < states for index in embedding.layer_indexes):
        raise FlairsuiteError(
            f"bert:{name}: {path.parent} has {states - 1} layers and the embedding layer: choose layers -{states} to {states - 1} (@last{states}: all)"
        )
    return embedding


def set_fine_tune(embedding: TokenEmbeddings, fine_tune: bool) -> None:
    """Make a resolved embedding train with the tagger (Flair then runs it with gradients in training mode) or not."""
    embedding.fine_tune = fine_tune
    embedding.static_embeddings = not fine_tune


def recognizes(embedding: TokenEmbeddings) -> bool:
    """A TransformerWordEmbeddings (computed by Flair's own `embed` at inference)."""
    return isinstance(embedding, TransformerWordEmbeddings)
