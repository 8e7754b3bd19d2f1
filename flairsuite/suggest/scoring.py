"""The model's uncertainty of every sentence, and a sentence as the candidates hold it once scored.

`Scorer` computes the embeddings and emissions by `FastTagger`'s pieces (built once) and the measures of
`flairsuite.models.uncertainty` in float64 (the forward-backward marginals need autograd, so the emissions come out of
inference mode as a normal tensor). A scored sentence (`Scored`) keeps what its candidate needs to rank and write it:
its place in its file, the file's characters (`units.Original`), its tokens, its text as Flair shows it and its scores;
the Flair sentence itself is let go.
"""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

import torch
from flair.data import Sentence

from flairsuite.inference.tagger import BATCH_SIZE, FastTagger, Layout, torch_threads
from flairsuite.models.crf import emissions
from flairsuite.models.uncertainty import Scores, scores_from_emissions
from flairsuite.suggest.units import Original, Unit


class Scorer:
    """The uncertainty `Scores` of sentences: embeddings and emissions by `FastTagger`'s pieces (built once), the measures in float64."""

    def __init__(self, model: torch.nn.Module, batch_size: int = BATCH_SIZE) -> None:
        self.model = model
        self.tagger = FastTagger(model, batch_size=batch_size)

    def emitted(self, chosen: list[Sentence], pool: ThreadPoolExecutor) -> torch.Tensor:
        """The emission scores of a batch (a normal tensor: the forward-backward marginals need autograd)."""
        lengths = [len(s) for s in chosen]
        with torch.inference_mode():
            embedded = torch.cat([featurizer(chosen).to(self.tagger.device) for featurizer in self.tagger.featurizers], dim=1)
            layout = Layout(lengths, embedded.device)
            if self.tagger.head is not None:
                found = self.tagger.head.emissions(embedded, layout, pool)
            else:
                found = emissions(self.model, layout.batch_major(embedded), torch.tensor(lengths))
        return found.clone()

    def __call__(self, sentences: list[Sentence]) -> list[Scores]:
        found: list[Optional[Scores]] = [None] * len(sentences)
        budget = torch.get_num_threads()
        with torch_threads(max(budget // 2, 1)), ThreadPoolExecutor(min(2, budget)) as pool:
            for batch in self.tagger.batches(sentences):
                chosen = [sentences[i] for i in batch]
                lengths = torch.tensor([len(s) for s in chosen])
                for index, scores in zip(batch, scores_from_emissions(self.model, self.emitted(chosen, pool), lengths)):
                    found[index] = scores
        return found  # type: ignore[return-value]


def sentence_scores(model: torch.nn.Module, sentences: list[Sentence], batch_size: int = BATCH_SIZE) -> list[Scores]:
    """The uncertainty `Scores` of every sentence (`Scorer`)."""
    return Scorer(model, batch_size)(sentences)


@dataclass(frozen=True)
class Scored:
    """A scored sentence as a candidate holds it: its file and place among the file's sentences, the file's characters
    (`Original`), its tokens as tagged, its text as Flair shows it (the ranking's preview) and the model's scores."""

    path: str
    index: int
    original: Original
    words: tuple[str, ...]
    flat: str
    scores: Scores

    def gaps(self) -> list[str]:
        """The file's characters between each two of its tokens."""
        text, tokens = self.original.text, self.original.tokens
        return [text[end:start] for (_, end), (start, _) in zip(tokens, tokens[1:])]


def scored(unit: Unit, scores: Sequence[Scores]) -> list[Scored]:
    """The unit's sentences with their scores."""
    return [Scored(str(unit.path), unit.first + i, original, tuple(token.text for token in sentence), sentence.to_original_text(), found)
            for i, (sentence, original, found) in enumerate(zip(unit.sentences, unit.originals, scores))]
