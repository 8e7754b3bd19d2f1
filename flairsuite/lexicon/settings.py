"""What `discover-words` counts as a candidate and which it keeps, declared once: `DiscoverySettings`, whose fields the
command's options are generated from, and the two unit kinds' defaults (`SETTINGS`). Numpy-free, for a quick `--help`."""

from dataclasses import asdict, dataclass

from flairsuite.errors import FlairsuiteError
from flairsuite.settings_schema import OPTIONS, POSITIVE_INTEGER, CheckedSettings, interval, one_of, setting

SHARE = interval(0, 1, low_open=True, high_open=False, noun="a share")
KEEP_BY = ("all", "length")


@dataclass(frozen=True)
class DiscoverySettings(CheckedSettings):
    """What a candidate is and which are kept (flairsuite/lexicon/discover.py); a bad value is a one-line error naming its option."""

    wording = OPTIONS

    shortest: int = setting(POSITIVE_INTEGER, help="Units per entry at least.")
    longest: int = setting(POSITIVE_INTEGER, help="Units per entry at most.")
    min_count: int = setting(POSITIVE_INTEGER, 5, help="Occurrences at least.")
    common_share: float = setting(SHARE, 0.01, help="An n-gram in more documents than this share is a common word, removed.")
    keep: float = setting(SHARE, 0.5, help="Share kept, best score first (the paper's: 0.5).")
    keep_by: str = setting(
        one_of(KEEP_BY), "all",
        help="Keep the top share of all candidates (the paper's) or of each length (words: a single word has no MI term, so "
        "one ranking keeps few).",
    )

    def check_together(self) -> None:
        if self.shortest > self.longest:
            raise FlairsuiteError(f"--shortest {self.shortest} is above --longest {self.longest}")


SETTINGS = {"characters": DiscoverySettings(shortest=2, longest=6), "words": DiscoverySettings(shortest=1, longest=3, keep_by="length")}


def unit_defaults() -> dict[str, dict[str, object]]:
    """`SETTINGS` as plain values per unit kind (what `discover-words --help` shows)."""
    return {units: asdict(settings) for units, settings in SETTINGS.items()}
