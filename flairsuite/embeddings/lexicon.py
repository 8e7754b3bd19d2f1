"""The `lexicon` kind: where a token stands in a lexicon match, as a trainable embedding (`LexiconEmbeddings`).

Spec `lexicon:NAME`, optionally followed by options, each after an `@`:

| option | meaning | default |
|---|---|---|
| `@daluke` | match by the DaLUKE rule (word starts, 5-48 characters, case ignored) | Algorithm 1, maximum matching |
| `@scores` | also an embedding of the matched entry's score quartile (four buckets over the lexicon's scores) | position only |

The artifact is `lexicons/NAME.tsv` (`flairsuite discover-words`). Every token gets a trainable
vector of its position in the entry matched over it: B, I, E (first, inner, last token), S (a
one-token match) or O (none), 16 dimensions; with `@scores` 8 more for the entry's score bucket
(O: a bucket of its own). Matching is fixed (the automaton is built from the entries once, when
first used) and cached: each distinct sentence is matched once per process, its position (and bucket)
ids kept in memory, a byte a token, for the later epochs (`MATCH_CACHE` sentences at most). The vectors train with the
tagger, so, like `char`, the kind has no on-disk vector cache. The
entries, the rule and the bucket bounds are saved with the tagger (`to_params`): a saved model
needs no lexicon file, only `import flairsuite.embeddings` (or `flairsuite predict`) so that Flair
knows the class.
"""

import math
from pathlib import Path
from typing import Any, Optional

import flair
import torch
from flair.data import Sentence
from flair.embeddings import TokenEmbeddings
from flair.embeddings.base import register_embeddings

from flairsuite.embeddings.spec_name import flag_problem, split_name
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import lexicons_dir
from flairsuite.lexicon.match import POSITION_TAGS, LexiconMatcher, check_rule, position_tags, token_matches
from flairsuite.lexicon.store import Lexicon, read_lexicon, split_entry

OPTIONS = ("daluke", "scores")
POSITION_DIM = 16
BUCKET_DIM = 8
BUCKETS = 4  # score quartiles
POSITION_IDS = {tag: index for index, tag in enumerate(POSITION_TAGS)}  # B/I/E/S/O -> row of `positions`
MATCH_CACHE = 200_000  # sentences whose match ids an embedding keeps (full LER train is 53,984; about 0.3 KB each)


def check_name(name: str) -> Optional[str]:
    """What to write instead of a name without a lexicon or with a bad or repeated option; None for a good name."""
    return flag_problem(name, "lexicon", OPTIONS)


def artifact(name: str, home: Path) -> Path:
    return lexicons_dir(home) / f"{split_name(name)[0]}.tsv"


def build_command(name: str) -> str:
    return f"flairsuite discover-words --lang LANG --out {Path('lexicons') / (split_name(name)[0] + '.tsv')}"


def digested(path: Optional[Path]) -> list[Path]:
    return [path] if path is not None else []


def frozen(fine_tune: bool) -> bool:
    """Never fixed: the position vectors train with the tagger."""
    return False


def quartile_bounds(scores: list[float]) -> list[float]:
    """The three inner quartile bounds of the finite scores (empty without any)."""
    finite = sorted(score for score in scores if not math.isnan(score))
    if not finite:
        return []
    return [finite[min(len(finite) - 1, int(len(finite) * q))] for q in (0.25, 0.5, 0.75)]


@register_embeddings
class LexiconEmbeddings(TokenEmbeddings):
    """A trainable vector per token for its position in a lexicon match (B/I/E/S/O), and optionally the entry's score bucket."""

    def __init__(
        self,
        entries: list[str],
        units: str,
        rule: str = "maximum",
        scores: Optional[list[float]] = None,
        use_scores: bool = False,
        name: str = "lexicon",
    ) -> None:
        super().__init__()
        self.name = name
        self.static_embeddings = False
        self.entries, self.units, self.rule = list(entries), units, rule
        self.scores = list(scores) if scores is not None else [math.nan] * len(self.entries)
        self.use_scores = use_scores
        self.bounds = quartile_bounds(self.scores) if use_scores else []
        self.positions = torch.nn.Embedding(len(POSITION_TAGS), POSITION_DIM)
        self.buckets = torch.nn.Embedding(BUCKETS + 1, BUCKET_DIM) if use_scores else None  # bucket 0: no match
        self._matcher: Optional[LexiconMatcher] = None
        self._matched: dict[tuple[str, ...], tuple[bytes, bytes]] = {}  # tokens -> (position ids, bucket ids; b"" without scores)
        self.to(flair.device)
        self.eval()

    @property
    def embedding_length(self) -> int:
        return POSITION_DIM + (BUCKET_DIM if self.use_scores else 0)

    def matcher(self) -> LexiconMatcher:
        """The automaton over the entries, built when first needed (also after loading a saved tagger)."""
        if self._matcher is None:
            entries = tuple(split_entry(entry, self.units) for entry in self.entries)
            self._matcher = LexiconMatcher(Lexicon(self.units, entries, tuple(self.scores)), self.rule)
        return self._matcher

    def bucket(self, entry: int) -> int:
        """1-4: the quartile of the entry's score (a missing score: 1)."""
        score = self.scores[entry]
        return 1 + (0 if math.isnan(score) else sum(score > bound for bound in self.bounds))

    def match_ids(self, tokens: tuple[str, ...]) -> tuple[bytes, bytes]:
        """The position ids (POSITION_TAGS) of `tokens` and, with scores, their bucket ids (0: no match; b"" without
        scores), a byte each; matched once, then cached (`MATCH_CACHE` sentences at most)."""
        cached = self._matched.get(tokens)
        if cached is not None:
            return cached
        matches = token_matches(self.matcher(), list(tokens))
        ids = bytes(POSITION_IDS[tag] for tag in position_tags(matches, len(tokens)))
        buckets = b""
        if self.buckets is not None:
            found = [0] * len(tokens)
            for start, end, entry in matches:
                found[start:end] = [self.bucket(entry)] * (end - start)
            buckets = bytes(found)
        if len(self._matched) < MATCH_CACHE:
            self._matched[tokens] = (ids, buckets)
        return ids, buckets

    def _add_embeddings_internal(self, sentences: list[Sentence]) -> None:
        device = self.positions.weight.device
        for sentence in sentences:
            ids, buckets = self.match_ids(tuple(token.text for token in sentence))
            vectors = self.positions(torch.tensor(list(ids), dtype=torch.long, device=device))
            if self.buckets is not None:
                vectors = torch.cat([vectors, self.buckets(torch.tensor(list(buckets), dtype=torch.long, device=device))], dim=1)
            for token, vector in zip(sentence, vectors):
                token.set_embedding(self.name, vector)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__.copy()
        state = dict(state)
        state["_matcher"], state["_matched"] = None, {}  # rebuilt from the entries
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_matched", {})  # pickled before matches were cached
        super().__setstate__(state)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> "LexiconEmbeddings":
        return cls(**params)

    def to_params(self) -> dict[str, Any]:
        return {"entries": self.entries, "units": self.units, "rule": self.rule, "scores": self.scores, "use_scores": self.use_scores,
                "name": self.name}


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """A fresh (untrained) embedding over the lexicon file `path`, with the spec's options."""
    if path is None:
        raise FlairsuiteError(f"lexicon:{name} needs its lexicon file")
    lexicon = read_lexicon(path)
    _, options = split_name(name)
    rule = "daluke" if "daluke" in options else "maximum"
    check_rule(lexicon, rule)  # when the stack is built, not at its first sentence (the matcher is built lazily)
    return LexiconEmbeddings(
        [lexicon.text(entry) for entry in lexicon.entries], lexicon.units, rule,
        list(lexicon.scores), "scores" in options, name=f"lexicon-{split_name(name)[0]}",
    )


def recognizes(embedding: TokenEmbeddings) -> bool:
    """A LexiconEmbeddings (computed by Flair's own `embed` at inference)."""
    return isinstance(embedding, LexiconEmbeddings)
