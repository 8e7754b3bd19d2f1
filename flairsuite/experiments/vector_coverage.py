"""How much of the user's own corpora the grid's fastText vectors cover, said when `flairsuite tag` plans its runs.

Word vectors trained on contemporary text lack many tokens of historical and OCR'd text: `fasttext:de` maps 29.7 % of
AjMC's train tokens (dev 29.2 %, test 26.9 %) to Flair's `<unk>` vector, the same zeros for every one of them. For each
own corpus of the chosen runs and each fastText vectors of their stacks, one line gives that share per split and what
`fasttext:NAME@subwords` leaves without a vector (tokens without any character n-gram: none in practice), so the user
sees before the first epoch whether the vectors fit the text and what the option changes. Registered corpora are left
out (their coverage is train-fasttext's own report); vectors kept without their model (compact ones) say that
`@subwords` cannot fill them.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from flairsuite.embeddings import artifact_path, parse
from flairsuite.embeddings.spec_name import split_name
from flairsuite.experiments.grid import Run
from flairsuite.wordvectors.oov import folder_oov_rates, split_counts

SUBWORDS = "subwords"


def fasttext_uses(specs: Iterable[str]) -> dict[str, bool]:
    """The fastText vectors the specs name, each with whether some spec reads it `@subwords`, in first-seen order."""
    uses: dict[str, bool] = {}
    for spec in specs:
        kind, name = parse(spec)
        if kind == "fasttext":
            base, options = split_name(name)
            uses[base] = uses.get(base, False) or SUBWORDS in options
    return uses


def _shares(rates: dict[str, dict[str, Any]], key: str) -> str:
    """`29.7 % of the train tokens (dev 29.2 %, test 26.9 %)`, the first split leading."""
    parts = [f"{split} {rates[split][key] * 100:.1f} %" for split in rates]
    first, rest = parts[0].split(" ", 1), parts[1:]
    return f"{first[1]} of the {first[0]} tokens" + (f" ({', '.join(rest)})" if rest else "")


def coverage_line(corpus: str, name: str, subwords: bool, rates: dict[str, dict[str, Any]]) -> str:
    """The report line of one own corpus and one fastText vectors (`rates`: `folder_oov_rates`)."""
    spec = f"fasttext:{name}"
    if not any(split["oov_before"] for split in rates.values()):
        return f"{corpus}: {spec} has a vector for every token"
    lacking = _shares(rates, "oov_before_rate")
    if any(split["oov_after"] is None for split in rates.values()):
        return f"{corpus}: {spec} has no vector for {lacking}; these vectors keep no model/, so @subwords cannot build them"
    left = ("none is left without one" if not any(split["oov_after"] for split in rates.values())
            else f"{_shares(rates, 'oov_after_rate')} still have none")
    if subwords:
        return f"{corpus}: {spec}@subwords builds subword vectors for the {lacking} outside the vocabulary; {left}"
    return f"{corpus}: {spec} has no vector for {lacking}; {spec}@subwords would build them from subwords ({left})"


def coverage_lines(runs: Iterable[Run], home: Path, corpora_root: Optional[Path]) -> list[str]:
    """One line per own corpus of `runs` and fastText vectors of their stacks (vectors not trained yet are left out: the
    grid's own check names the command that makes them)."""
    runs = list(runs)
    lines = []
    for corpus in {run.corpus.key: run.corpus for run in runs if run.corpus.own is not None}.values():
        uses = fasttext_uses(spec for run in runs if run.corpus.key == corpus.key for spec in run.embedding_specs)
        folders = {name: artifact_path(f"fasttext:{name}", home) for name in uses}
        folders = {name: path.parent for name, path in folders.items() if path is not None and path.is_file()}
        if not folders:
            continue
        counts = split_counts(corpus.spec(), corpora_root or Path("."))
        lines += [coverage_line(corpus.key, name, uses[name], folder_oov_rates(folder, counts)) for name, folder in folders.items()]
    return lines
