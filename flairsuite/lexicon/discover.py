"""New-word discovery (Jia et al. 2020, §3.1 and Appendix A): n-grams scored by mutual information and left/right entropy.

For an n-gram w seen `count(w)` times among the N word units of the text, p(w) = count(w) / N and

- MI(w) = log2 p(x⊕y) / (p(x) p(y)) (Eq. 14) for w = x⊕y. The paper defines it for two parts; for
  n > 2 units we take the weakest join, the minimum over the n - 1 ways to cut w in two (a
  string is a word when no cut falls apart). A single unit (words of German, English, Danish,
  where an entity is often one token) has no inner join: MI 0, so entropy alone ranks it.
- EL(w), ER(w): the entropy (bits) of the unit left and right of w over its occurrences (Eq. 15);
  each punctuation mark is a neighbour of its own (the paper's text is all characters), a document start
  or end one neighbour (as the line break between the documents of a raw text).
- score(w) = MI + EL + ER, as the paper adds the three.

As the paper, common words are removed and the top 50 % of the rest by score kept: of all candidates
for characters (the paper's Chinese), of each length for words (`keep_by: length`), since a single word's
score lacks the MI term its n-grams add, so one ranking of all lengths keeps few single words. Measured on
`raw-de` (205,848 entries either way): one ranking kept 18,620 of 78,246 single words, per
length 39,123; gold entity mentions covered (train) Sturm 21.0 % -> 33.0 %, H. Arendt 21.1 % -> 30.2 %,
LER 8.7 % -> 12.9 %, and the matches' hit precision rose (Sturm 3.1 % -> 4.9 %). Counting each
punctuation mark as its own neighbour (before: all one boundary) had raised the per-length coverage from
26.3 / 27.3 / 12.0 % and Sturm's hit precision from 3.0 %. The paper's
common words come from an open-domain dictionary (Jieba's); here from the same corpus: an n-gram
found in more than `common_share` of the documents is a common word, not a document-specific one.
Candidates occur at least `min_count` times (the paper gives no floor; below 5 counts the
entropies are noise).
"""


import numpy as np
import pandas as pd
from tqdm import tqdm

from flairsuite.lexicon.ngrams import NgramLevel, UnitText, document_frequency, levels, neighbour_entropy, ngram_units
from flairsuite.lexicon.settings import DiscoverySettings

COLUMNS = ("entry", "frequency", "documents", "mi", "left_entropy", "right_entropy", "score")


def mutual_information(text: UnitText, found: list[NgramLevel], n: int, ids: np.ndarray) -> np.ndarray:
    """MI (bits) of the n-grams `ids` of length n: the minimum over cuts of log2 p(w) / (p(x) p(y)); 0 for n = 1."""
    if n == 1:
        return np.zeros(len(ids))
    total = text.size
    positions = found[n - 1].first[ids]
    count = found[n - 1].counts[ids].astype(np.float64)
    cuts = []
    for k in range(1, n):
        head = found[k - 1].counts[found[k - 1].ids[positions]]
        tail = found[n - k - 1].counts[found[n - k - 1].ids[positions + k]]
        cuts.append(np.log2(count * total / (head.astype(np.float64) * tail)))
    return np.min(cuts, axis=0)


def discover(text: UnitText, settings: DiscoverySettings, joiner: str, progress: bool = True) -> pd.DataFrame:
    """The lexicon of `text`: candidates of `settings.shortest`..`longest` units, common words out, the top `keep` share by score
    (of all candidates, or of each length: `keep_by`).

    Rows sorted by score (highest first); `entry` is the units joined by `joiner` ("" for characters, " " for words).
    """
    found = levels(text, settings.longest)
    documents = max(text.document_count, 1)
    frames = []
    for n in tqdm(range(settings.shortest, settings.longest + 1), desc="score n-grams", unit="length", disable=not progress):
        level = found[n - 1]
        ids = np.flatnonzero(level.counts >= settings.min_count)
        if not len(ids):
            continue
        spread = document_frequency(text, level)[ids]
        ids, spread = ids[spread <= settings.common_share * documents], spread[spread <= settings.common_share * documents]
        mi = mutual_information(text, found, n, ids)
        left, right = neighbour_entropy(text, level, -1)[ids], neighbour_entropy(text, level, +1)[ids]
        frames.append(pd.DataFrame({
            "units": n,
            "entry": [joiner.join(units) for units in ngram_units(text, level, ids)],
            "frequency": level.counts[ids], "documents": spread, "mi": mi, "left_entropy": left, "right_entropy": right,
            "score": mi + left + right,
        }))
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    order = {"by": ["score", "frequency", "entry"], "ascending": [False, False, True], "kind": "stable"}
    if settings.keep_by == "length":
        kept = [frame.sort_values(**order).head(int(round(len(frame) * settings.keep))) for frame in frames]
        return pd.concat(kept, ignore_index=True).sort_values(**order).reset_index(drop=True)[list(COLUMNS)]
    candidates = pd.concat(frames, ignore_index=True).sort_values(**order)
    return candidates.head(int(round(len(candidates) * settings.keep))).reset_index(drop=True)[list(COLUMNS)]
