"""The `self_training:` block of an experiment file: each run of the grid becomes a self-training study.

    self_training:
      hold_back: 0.5                   # share of each corpus's train split whose labels are hidden: the unlabelled pool, or
      text: [texts/letters/]           # the user's unannotated text (files or folders, relative to the experiment file)
      max_sentences: 2000              # with text: at most this many of its sentences form the pool (drawn; default all)
      thresholds: [0.8, 0.9, 0.95]     # confidence a pseudo-labelled sentence must reach to be kept
      rounds: 2                        # retraining rounds after the supervised round 0

Exactly one of `text` and `hold_back`. `max_sentences` caps a text's pool (each round embeds, tags and may train on all
of it): that many of its sentences drawn with seed 1, the same for every run, kept in text order. The confidence of a
sentence is the length-normalised probability of the tag sequence the tagger decodes, p(y*|x)^(1/n)
(`flairsuite.experiments.pseudo_labels`): under a CRF the Viterbi path's probability (one minus active learning's
`uncertainty`), under a softmax head the product of the chosen tags' probabilities. Every registered tagger that is a
Flair SequenceTagger has one; Class-Start-End (`cse`) is refused. Rounds retrain on the cached embeddings, so the stacks
must be frozen (no `char`, `lexicon:` or `fine_tune: true`). The study itself: `flairsuite.experiments.self_training`.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Optional

from flair.models import SequenceTagger

from flairsuite.embeddings import frozen
from flairsuite.errors import FlairsuiteError
from flairsuite.models.registry import TAGGERS
from flairsuite.rawtext.prepare import text_files
from flairsuite.settings_schema import KEYS, POSITIVE_INTEGER, CheckedSettings, Rule, Wording, checked_keys, interval, setting
from flairsuite.values import show

KEY = "self_training"
EXAMPLE = "self_training: {hold_back: 0.5, thresholds: [0.9, 0.99], rounds: 2}"
FIELDS = ("text", "max_sentences", "hold_back", "thresholds", "rounds")
HOLD_BACK = interval(0, 1, low_open=True, high_open=True, noun="a share of train").noted(f", e.g. `{EXAMPLE}`")
CONFIDENCE = interval(0, 1, low_open=False, high_open=False)
THRESHOLDS = Rule(f"a non-empty list of confidences, each {CONFIDENCE.description}, e.g. [0.9, 0.99]",
                  lambda v: isinstance(v, (list, tuple)) and bool(v) and all(CONFIDENCE(t) for t in v))


@dataclass(frozen=True)
class SelfTraining(CheckedSettings):
    """A validated `self_training:` block; `texts` are absolute paths (listed by `parse_self_training`, which sees the file's folder)."""

    thresholds: tuple[float, ...] = setting(THRESHOLDS)
    rounds: int = setting(POSITIVE_INTEGER.noted(f", e.g. `{EXAMPLE}`"))
    hold_back: Optional[float] = setting(HOLD_BACK.or_null("the pool from `text`"), None)
    max_sentences: Optional[int] = setting(POSITIVE_INTEGER.or_null("all of the text's sentences"), None)
    texts: tuple[Path, ...] = ()
    wording: ClassVar[Wording] = Wording(lambda name: f"{KEY}.{name}", KEYS.found)

    def check_together(self) -> None:
        repeated = [t for i, t in enumerate(self.thresholds) if t in self.thresholds[:i]]
        if repeated:
            raise FlairsuiteError(f"{KEY}.thresholds: {show(repeated[0])} is listed twice: remove one")
        if (self.hold_back is None) == (not self.texts):
            raise FlairsuiteError(f"{KEY}: give exactly one of text (your unannotated text) and hold_back (a share of train whose "
                                  f"labels are hidden), e.g. `{EXAMPLE}`")
        if self.max_sentences is not None and not self.texts:
            raise FlairsuiteError(f"{KEY}.max_sentences caps the pool drawn from text: give text, or leave max_sentences out")

    @property
    def mode(self) -> str:
        """`hold_back` or `text`: where the unlabelled pool comes from."""
        return "hold_back" if self.hold_back is not None else "text"

    def record(self, text_digests: list[str]) -> dict[str, Any]:
        """The block as plain data for fingerprints: the texts by their checksums (`text_digests`, in order), never their paths."""
        cap = {} if self.max_sentences is None else {"max_sentences": self.max_sentences}  # absent: the records before the key
        return {"hold_back": self.hold_back, "texts": text_digests, **cap, "thresholds": [float(t) for t in self.thresholds], "rounds": self.rounds}


def scorable_taggers() -> tuple[str, ...]:
    """The registered taggers whose decoded tag sequence has a probability: Flair SequenceTaggers (CRF or softmax head)."""
    return tuple(name for name, spec in TAGGERS.items() if spec.saved_as is SequenceTagger)


def _check_grid(taggers: list[str], stacks: dict[str, tuple[str, ...]], fine_tune: tuple[bool, ...], data: dict[str, Any]) -> None:
    """What the rounds need of the grid: taggers that score their pseudo-labels, frozen stacks, no other simulation."""
    usable = scorable_taggers()
    for tagger in taggers:
        if tagger not in usable:
            raise FlairsuiteError(f"{KEY}: tagger {tagger} gives no probability of its tag sequence to keep pseudo-labels by: "
                                  f"use {', '.join(usable)}")
    if True in fine_tune:
        raise FlairsuiteError(f"{KEY}: rounds retrain on cached (frozen) embeddings: remove `fine_tune: true`")
    for name, specs in stacks.items():
        live = [spec for spec in specs if not frozen(spec)]
        if live:
            raise FlairsuiteError(f"{KEY}: stack {name}: {live[0]} trains with the tagger, so rounds cannot retrain on cached embeddings: "
                                  "use frozen embeddings (charlm:, fasttext:, bert:)")
    for other in ("active_learning", "transfer"):
        if other in data:
            raise FlairsuiteError(f"{KEY}: rounds train on the corpus alone: put {other} and self_training in separate files")


def parse_self_training(data: dict[str, Any], base: Path, taggers: list[str], stacks: dict[str, tuple[str, ...]],
                        fine_tune: tuple[bool, ...]) -> Optional[SelfTraining]:
    """The experiment's `self_training:` block checked against its grid (None without one), texts below `base`; problems are one-line errors."""
    if KEY not in data:
        return None
    block = checked_keys(data[KEY], FIELDS, ("thresholds", "rounds"), where=KEY, hint=f", e.g. `{EXAMPLE}`",
                         examples={key: f", e.g. `{EXAMPLE}`" for key in FIELDS})
    _check_grid(taggers, stacks, fine_tune, data)
    thresholds = block["thresholds"]
    texts = text_files(block["text"], base, f"{KEY}.text") if "text" in block else ()
    hold_back = block.get("hold_back")
    return SelfTraining(thresholds=tuple(thresholds) if isinstance(thresholds, list) else thresholds, rounds=block["rounds"],
                        hold_back=None if hold_back is None else hold_back, max_sentences=block.get("max_sentences"), texts=texts)
