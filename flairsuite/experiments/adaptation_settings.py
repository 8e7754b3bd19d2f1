"""The `adapt:` block of an experiment file: a character-LM pair and/or fastText vectors continued on the user's own
unannotated text before the runs.

    adapt:
      init: de                        # the pair to continue (charlm/de-forward, charlm/de-backward), or a path prefix relative to the file
      fasttext: de                    # optional: fastText vectors to continue too (wordvectors/de-fasttext), or a folder relative to the file
      text: [texts/letters.txt]       # raw text files or folders, relative to the experiment file (a string for one)
      name: de-letters                # the adapted pair: charlm/de-letters-forward, -backward; vectors: wordvectors/de-letters-fasttext
      max_chars: 5000000              # optional: characters per direction (default: train-charlm --init's, 5 passes)
      epochs: 5                       # optional: fastText's passes over the text (default: train-fasttext --init's, 5)
      heldout_fraction: 0.01          # optional: the text's share held out for validation and test
      exclude: [letters]              # optional: corpora of the experiment whose dev/test sentences are cut out (default: all)
      noise: smlm:0.1                 # optional: train-charlm --noise, synthetic OCR noise from the text's alphabet (default: none)

Either `init` or `fasttext` may be left out (only the other is adapted). A name is looked up below the home folder,
then the other model folders (the installed clone's released models: `flairsuite.experiments.adaptation`). The stacks name the adapted pair and vectors as
any other (`charlm:de-letters-forward`, `fasttext:de-letters`); `flairsuite tag` trains each before the runs when it is
missing or its fingerprint changed (`flairsuite.experiments.adaptation`).
"""

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Optional

from flairsuite.charlm.settings import NOISE
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.rawtext.prepare import text_files
from flairsuite.settings_schema import KEYS, POSITIVE_INTEGER, CheckedSettings, Rule, Wording, checked_keys, interval, setting
from flairsuite.values import show

KEY = "adapt"
EXAMPLE = "adapt: {init: de, text: texts/letters.txt, name: de-letters}"
FIELDS = ("init", "fasttext", "text", "name", "max_chars", "epochs", "heldout_fraction", "exclude", "noise")
HELDOUT_SHARE = interval(0, 0.5, low_open=True, high_open=True)
PAIR = Rule("the name or path prefix of a trained pair, e.g. de", lambda v: isinstance(v, str) and bool(v.strip()))
VECTORS = Rule("the name or folder of fastText vectors trained with their model, e.g. de", lambda v: isinstance(v, str) and bool(v.strip()))


@dataclass(frozen=True)
class Adaptation(CheckedSettings):
    """A validated `adapt:` block: `init` and the numbers by the suite's settings base; texts as absolute paths and
    `exclude` as train-charlm --exclude arguments (registered names, own corpus folders) by `parse_adaptation`, which
    sees the file's folder and corpora."""

    init: Optional[str] = setting(PAIR.or_null("fastText only"), None)
    fasttext: Optional[str] = setting(VECTORS.or_null("the pair only"), None)
    texts: tuple[Path, ...] = ()
    name: str = ""
    max_chars: Optional[int] = setting(POSITIVE_INTEGER.or_null("five passes over the text"), None)
    epochs: Optional[int] = setting(POSITIVE_INTEGER.or_null("five passes over the text"), None)
    heldout_fraction: Optional[float] = setting(HELDOUT_SHARE.or_null("train-charlm's default"), None)
    exclude: tuple[str, ...] = ()
    noise: Optional[str] = setting(NOISE.or_null("no noise"), None)  # train-charlm's --noise (charlm.settings.Hyper.noise)
    wording: ClassVar[Wording] = Wording(lambda name: f"{KEY}: {name}", KEYS.found)

    def specs(self) -> tuple[str, ...]:
        """The embedding specs of the adapted pair and vectors."""
        pair = (f"charlm:{self.name}-forward", f"charlm:{self.name}-backward") if self.init else ()
        return pair + ((f"fasttext:{self.name}",) if self.fasttext else ())

    def settings(self) -> dict[str, Any]:
        """What the block sets for the pair besides the initial pair and the text (fingerprinted with their digests)."""
        settings = {"name": self.name, "max_chars": self.max_chars, "heldout_fraction": self.heldout_fraction, "exclude": list(self.exclude)}
        return {**settings, "noise": self.noise} if self.noise is not None else settings  # without noise: fingerprints as before

    def vectors_settings(self) -> dict[str, Any]:
        """What the block sets for the vectors besides the initial vectors and the text (fingerprinted with their digests)."""
        return {"name": self.name, "epochs": self.epochs, "heldout_fraction": self.heldout_fraction, "exclude": list(self.exclude)}


def _fail(message: str) -> FlairsuiteError:
    return FlairsuiteError(f"{KEY}: {message}, e.g. `{EXAMPLE}`")


def _exclude(value: Any, corpora: list[CorpusChoice]) -> tuple[str, ...]:
    """The corpora whose dev/test sentences are cut out, as --exclude arguments: registered ones by name, an own corpus by
    its folder, or (another format than column, or other reading keys) its entry as a YAML mapping."""
    by_name = {corpus.name: corpus for corpus in corpora}
    chosen = list(by_name) if value is None else value
    if not isinstance(chosen, list) or not all(isinstance(name, str) for name in chosen):
        raise _fail(f"exclude must be a list of the experiment's corpora (found {show(value)})")
    for name in chosen:
        if name not in by_name:
            raise FlairsuiteError(f"{KEY}: exclude: {show(name)} is not a corpus of the experiment ({', '.join(by_name)})")
    return tuple(dict.fromkeys(_exclude_argument(by_name[name]) for name in chosen))


def _exclude_argument(corpus: CorpusChoice) -> str:
    if corpus.own is None:
        return corpus.name
    entry = corpus.own_entry or {"path": corpus.own.folder}
    if set(entry) == {"path"}:
        return corpus.own.folder  # a column corpus with the defaults: the folder, as before
    return json.dumps(entry, sort_keys=True, ensure_ascii=False)  # JSON is YAML: train-charlm --exclude reads the mapping


def parse_adaptation(data: dict[str, Any], base: Path, corpora: list[CorpusChoice], safe_name: Any) -> Optional[Adaptation]:
    """The experiment's `adapt:` block (None without one), its text files below `base`; any bad value: a one-line error.
    `safe_name`: the experiment's check of folder names (validation.py)."""
    if KEY not in data:
        return None
    example = f", e.g. `{EXAMPLE}`"
    block = checked_keys(data[KEY], FIELDS, ("text", "name"), where=KEY, hint=example, examples={"text": example, "name": example})
    if block.get("init") is None and block.get("fasttext") is None:
        raise _fail("missing key 'init' (the char-LM pair to continue) or 'fasttext' (the vectors to continue)")
    heldout = block.get("heldout_fraction")
    adaptation = Adaptation(
        init=block.get("init"), fasttext=block.get("fasttext"), max_chars=block.get("max_chars"), epochs=block.get("epochs"),
        heldout_fraction=heldout, noise=block.get("noise"),
    )
    name = safe_name(f"{KEY}: name", block["name"])
    for key, initial, adapted in (("init", "pair's", "pair a name of its"), ("fasttext", "vectors'", "vectors a name of their")):
        if name == block.get(key):
            raise FlairsuiteError(f"{KEY}: name: {show(name)} is the initial {initial}: give the adapted {adapted} own")
    return replace(
        adaptation, texts=text_files(block["text"], base, f"{KEY}: text", example), name=block["name"],
        exclude=_exclude(block.get("exclude"), corpora),
        heldout_fraction=None if heldout is None else float(heldout),
    )
