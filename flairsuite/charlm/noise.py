"""Synthetic noise on the training windows of a character LM (`train-charlm --noise`): SMLM, after Schweter and Baiter
(2019, "Towards Robust Named Entity Recognition for Historic German").

The scheme. Each character of the training text is kept with probability 1 - P (`--noise smlm:P`, P in (0, 0.5],
default 0.1: the paper's 90 % kept, its best of 80, 90 and 95 %). A replaced character becomes the mask symbol in a fifth
of the cases (`MASK_SHARE`) and a character of the noise alphabet in the others, drawn uniformly from its distinct
characters, as the paper draws "a symbol from the target vocabulary" (a set: a rare historical letter such as ſ is
injected as often as e, which the text already teaches). So at P = 0.1: 90 % kept, 2 % masked, 8 % random (a random
character may be the one it replaces).

What is corrupted. The paper builds a synthetic corpus, contemporary text with the noise in it ("Input sentence" ->
"Output sentence" in its appendix), and trains an ordinary LM on it: the text itself is corrupted, so the inputs and
the next-character targets are one noisy text. `smlm` does that: target t of a window is input t + 1, both corrupted
(the mask symbol and injected characters are predicted too). `smlm-denoise` corrupts the inputs only: the targets stay
the clean next characters, so the LM learns to read noisy text and predict the real one, and the mask symbol is never a
target. Validation and test perplexity read clean text in both.

The alphabet: the characters the training split holds (`<unk>` and the document delimiter left out), or with
`--noise-alphabet` those of the files named (the user's OCR'd text, when the LM trains on other text). A character the
LM's dictionary lacks gets a row of its own after the mask's (read only as noise; with `--init` its weights start as
`<unk>`'s, as `extended_state` gives every new row).

The mask symbol is U+FDD0, a Unicode noncharacter (never assigned, not meant for text), with a dictionary row of its
own right after the corpus's characters (reused where a continued LM's dictionary has it); a training text that holds
it is refused, so the symbol stands for nothing but the mask.

Determinism. What happens to a character is a pure function of the seed, the direction, the epoch and the character's
index in the (direction's) training array: a SplitMix64 hash, no random generator state. The noise is therefore the
same whatever the window schedule, the number of ranks or the machine, and a killed run resumed from its checkpoint
(which holds the epoch and offset) sees exactly the noise an uninterrupted run sees.
"""

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from flairsuite.charlm.settings import Hyper, Noise
from flairsuite.corpora.raw import iter_documents
from flairsuite.errors import FlairsuiteError
from flairsuite.rawtext.prepare import DELIMITER, PreparedCorpus, corpus_sources

log = logging.getLogger("flairsuite")

MASK = "\ufdd0"  # the mask symbol's dictionary entry
MASK_SHARE = 0.2  # of the replaced characters, the masked ones (the rest: a character of the alphabet)
RESOLUTION = 1 << 24  # the hash's decisions are drawn in steps of 2^-24
_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_PICK_SALT = 0xD1B54A32D192ED03  # a second hash of each position, for the character drawn


def _mix_int(x: int) -> int:
    """SplitMix64's finaliser on a Python integer."""
    x &= _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def noise_key(seed: int, forward: bool) -> int:
    """The hash key of a run's noise: its seed and direction."""
    return _mix_int(_mix_int(seed) ^ (1 if forward else 2))


@dataclass(frozen=True)
class WindowNoise:
    """The noise of one direction's run: the scheme, the mask's id, the alphabet's ids (ascending) and the hash key.
    `rows`: the dictionary entries it adds after the corpus's characters; `alphabet_chars` and `source` for the record."""

    scheme: Noise
    mask_id: int
    alphabet: np.ndarray
    key: int
    rows: tuple[str, ...] = ()
    alphabet_chars: tuple[str, ...] = ()
    source: tuple[str, ...] = ()

    def plan(self, epoch: int, positions: np.ndarray) -> np.ndarray:
        """What the character at each array index `positions` becomes in `epoch`: -1 (kept), the mask id or an alphabet id."""
        base = np.uint64(_mix_int(self.key ^ (((epoch + 1) * _GOLDEN) & _M64)))
        state = positions.astype(np.uint64) * np.uint64(_GOLDEN) + base
        hashed = _mix(state)
        replaced = (hashed >> np.uint64(40)) < np.uint64(round(self.scheme.share * RESOLUTION))
        masked = ((hashed >> np.uint64(16)) & np.uint64(RESOLUTION - 1)) < np.uint64(round(MASK_SHARE * RESOLUTION))
        picked = ((_mix(hashed ^ np.uint64(_PICK_SALT)) >> np.uint64(32)) * np.uint64(len(self.alphabet))) >> np.uint64(32)
        replacement = np.where(masked, self.mask_id, self.alphabet[picked.astype(np.int64)])
        return np.where(replaced, replacement, -1).astype(np.int64)

    def corrupt(self, ids: np.ndarray, epoch: int, positions: np.ndarray) -> np.ndarray:
        """`ids` (the characters at `positions`) with the noise of `epoch`."""
        plan = self.plan(epoch, positions)
        return np.where(plan < 0, ids, plan)

    def window(self, inputs: np.ndarray, targets: np.ndarray, epoch: int, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A training window's inputs (at `positions`) and targets (the characters after them) with the noise: the inputs
        always; the targets where the scheme corrupts the text itself (`smlm`), as the same text one character on."""
        noisy = self.corrupt(inputs, epoch, positions)
        return noisy, (self.corrupt(targets, epoch, positions + 1) if self.scheme.corrupts_targets else targets)

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match besides the hyper-parameters: the alphabet and the mask's row."""
        return {"alphabet": "".join(self.alphabet_chars), "mask_id": self.mask_id, "rows": list(self.rows)}

    def record(self) -> dict[str, Any]:
        """What summary.json says of the noise the LM was trained with."""
        return {
            "scheme": self.scheme.kind,
            "share": self.scheme.share,
            "targets": "the corrupted text (Schweter and Baiter 2019)" if self.scheme.corrupts_targets else "the clean text",
            "mask": {"character": f"U+{ord(MASK):04X}", "id": self.mask_id, "share_of_replaced": MASK_SHARE},
            "alphabet": {"from": list(self.source) or "the training text", "characters": "".join(self.alphabet_chars),
                         "size": len(self.alphabet_chars), "drawn": "uniformly"},
            "added_rows": len(self.rows),
        }


def text_alphabet(paths: Sequence[str]) -> list[str]:
    """The distinct characters of the raw-text files or folders `paths` (as --corpus reads them), most frequent first;
    the mask symbol left out."""
    counts: Counter = Counter()
    try:
        for source in corpus_sources("", paths, Path(".")):  # files given: no registry set, no datasets folder
            for _, text in iter_documents(source.path, source.spec, source.encoding):
                counts.update(text)
    except FlairsuiteError as err:
        raise FlairsuiteError(f"--noise-alphabet: {err}") from None
    counts.pop(MASK, None)
    if not counts:
        raise FlairsuiteError(f"--noise-alphabet {' '.join(paths)}: no characters to inject")
    return [char for char, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def training_alphabet(chars: Sequence[str], counts: np.ndarray) -> list[str]:
    """The characters (`chars[id - 1]`) that the training split holds by `counts` per id; `<unk>`, the document delimiter
    and the mask symbol left out."""
    return [chars[i - 1] for i in np.flatnonzero(counts[: len(chars) + 1]) if i > 0 and chars[i - 1] not in (DELIMITER, MASK)]


def build_noise(hyper: Hyper, corpus: PreparedCorpus, seed: int, forward: bool) -> Optional[WindowNoise]:
    """The noise `hyper.noise` asks for on `corpus`'s training split (None for `none`); a training text holding the mask
    symbol or an empty alphabet: a one-line error."""
    scheme = hyper.noise_scheme
    if scheme is None:
        return None
    chars = list(corpus.chars)
    counts = np.bincount(corpus.array("train"), minlength=len(chars) + 1)
    if MASK in chars and counts[chars.index(MASK) + 1]:
        raise FlairsuiteError(f"the training text holds U+{ord(MASK):04X}, the mask symbol of --noise; remove it from the text")
    alphabet = text_alphabet(hyper.noise_alphabet) if hyper.noise_alphabet else training_alphabet(chars, counts)
    if not alphabet:
        raise FlairsuiteError("--noise: the training text holds no character to inject")
    known = set(chars)
    rows = ([] if MASK in known else [MASK]) + [char for char in alphabet if char not in known]
    ids = {char: index + 1 for index, char in enumerate([*chars, *rows])}
    noise = WindowNoise(scheme, ids[MASK], np.array(sorted(ids[char] for char in alphabet), dtype=np.int64), noise_key(seed, forward),
                        tuple(rows), tuple(sorted(alphabet, key=ids.__getitem__)), tuple(hyper.noise_alphabet))
    log.info("noise %s: %d characters injected (%d new rows), mask id %d", hyper.noise, len(alphabet), len(rows) - (MASK in rows),
             noise.mask_id)
    return noise
