"""The `active_learning:` block of an experiment file: a simulation that grows each run's train split round by round.

    active_learning:
      seed_size: 50          # sentences annotated before the first selection, drawn at random (the same for every strategy of a seed)
      batch_size: 50         # sentences each round adds
      rounds: 8              # selection rounds after the seed set: the budget is seed_size + rounds x batch_size sentences
      strategies: [random, uncertainty, entropy]
      final_check: [bilstm-crf]   # optional: taggers trained once on each strategy's final selection
      full_reference: true        # default true: the round tagger also trained on all of train, once per seed

The grid's `taggers` are the round taggers (retrained from scratch every round on the cached embeddings, so a
frozen stack: Map-CRF keeps a round short); every corpus x stack x tagger x seed of the grid is one simulation per
strategy. Strategies: `random` (a uniform sample of the pool), `uncertainty` and `entropy` (the measures of
`flairsuite.models.uncertainty`, the most uncertain first, near-duplicates kept apart: `flairsuite.models.selection`).
"""

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Optional

from flair.models import SequenceTagger

from flairsuite.errors import FlairsuiteError
from flairsuite.models.registry import TAGGERS
from flairsuite.models.uncertainty import MEASURES
from flairsuite.settings_schema import FLAG, KEYS, NON_NEGATIVE_INTEGER, POSITIVE_INTEGER, CheckedSettings, Wording, checked_keys, setting
from flairsuite.values import show

KEY = "active_learning"
EXAMPLE = "active_learning: {seed_size: 50, batch_size: 50, rounds: 8, strategies: [random, uncertainty]}"
STRATEGIES = ("random", *MEASURES)
FIELDS = ("seed_size", "batch_size", "rounds", "strategies", "final_check", "full_reference")


@dataclass(frozen=True)
class ActiveLearning(CheckedSettings):
    """A validated `active_learning:` block: the counts and the flag by the suite's one settings base, the name lists by
    `_names` (they are checked against the grid, which a field rule cannot see)."""

    seed_size: int = setting(POSITIVE_INTEGER.noted(f", e.g. `{EXAMPLE}`"))
    batch_size: int = setting(POSITIVE_INTEGER.noted(f", e.g. `{EXAMPLE}`"))
    rounds: int = setting(NON_NEGATIVE_INTEGER.noted(f", e.g. `{EXAMPLE}`"))
    strategies: tuple[str, ...] = ()
    final_check: tuple[str, ...] = ()
    full_reference: bool = setting(FLAG, True)
    wording: ClassVar[Wording] = Wording(lambda name: f"{KEY}.{name}", KEYS.found)

    @property
    def budget(self) -> int:
        """Sentences annotated after the last round."""
        return self.seed_size + self.rounds * self.batch_size

    def record(self) -> dict[str, Any]:
        """The block as plain data (fingerprinted with the simulation)."""
        return {**asdict(self), "strategies": list(self.strategies), "final_check": list(self.final_check)}


def _names(block: dict[str, Any], key: str, known: tuple[str, ...], required: bool) -> tuple[str, ...]:
    value = block.get(key, [] if not required else None)
    if not isinstance(value, list) or (required and not value) or not all(isinstance(v, str) for v in value):
        raise FlairsuiteError(f"{KEY}: {key} must be a list of names from {', '.join(known)} (found {show(value)})")
    for name in value:
        if name not in known:
            raise FlairsuiteError(f"{KEY}: {key}: unknown name {show(name)} (known: {', '.join(known)})")
    repeated = [name for i, name in enumerate(value) if name in value[:i]]
    if repeated:
        raise FlairsuiteError(f"{KEY}: {key}: {repeated[0]} is listed twice: remove one")
    return tuple(value)


def _sequence_taggers() -> tuple[str, ...]:
    """The registered taggers the uncertainty measures apply to (Flair SequenceTaggers, not CSE)."""
    return tuple(name for name, spec in TAGGERS.items() if spec.saved_as is SequenceTagger)


def parse_active_learning(data: dict[str, Any], taggers: list[str], fine_tune: tuple[bool, ...]) -> Optional[ActiveLearning]:
    """The experiment's `active_learning:` block checked against its grid, or None without one; problems are one-line errors."""
    if KEY not in data:
        return None
    block = checked_keys(data[KEY], FIELDS, where=KEY, hint=f", e.g. `{EXAMPLE}`")
    usable = _sequence_taggers()
    for tagger in taggers:
        if tagger not in usable:
            raise FlairsuiteError(f"{KEY}: tagger {tagger} has no per-token tag distribution to select by: use {', '.join(usable)}")
    if True in fine_tune:
        raise FlairsuiteError(f"{KEY}: rounds retrain on cached (frozen) embeddings: remove `fine_tune: true`")
    return ActiveLearning(
        seed_size=block.get("seed_size"),
        batch_size=block.get("batch_size"),
        rounds=block.get("rounds"),
        strategies=_names(block, "strategies", STRATEGIES, required=True),
        final_check=_names(block, "final_check", usable, required=False),
        full_reference=block.get("full_reference", True),
    )
