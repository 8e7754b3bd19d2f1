"""The tagger registry: the sequence-tagging architectures of Akbik et al. 2018, Table 3, as plain Flair models.

Every tagger is a `flair.models.SequenceTagger` built with constructor arguments only, so a saved
model loads with `SequenceTagger.load(path)` in plain Flair, without flairsuite. Spans are encoded
as BIO (IOB2) tags, not Flair's default BIOES: the tables score the decoder's raw tags with seqeval in
strict IOB2 mode and Entity-Fix is defined on BIO, so the decoder's output is scored as it is, with no
conversion in between. The tag dictionary is the one of `corpus.make_label_dictionary(label_type, add_unk=False)`.

| name | architecture | Flair arguments |
|---|---|---|
| `bilstm-crf` | BiLSTM (1 layer, 256 hidden per direction) + CRF | `use_rnn=True, use_crf=True` (Flair's defaults) |
| `map-crf` | one linear map embedding -> tag scores + CRF | `use_rnn=False, use_crf=True, reproject_embeddings=False` |
| `map` | one linear map + softmax (multinomial logistic regression) | `use_rnn=False, use_crf=False, reproject_embeddings=False` |

The linear taggers skip Flair's reprojection layer (a D x D linear map before the tag map): two linear
maps in a row are still one linear map (the paper's Equation 12), so the layer only adds D^2
parameters (1 M for two 512-unit character LMs) to fit and to run on CPU. Dropout stays at Flair's
defaults for all three.

Training defaults (`default_train`; an experiment's `train` and `tagger_train` override them):

- `bilstm-crf`: the paper's settings: vanilla SGD, learning rate 0.1, mini-batch 32, learning rate
  halved on a plateau, up to 150 epochs; with Flair's patience of 3 (Flair anneals on dev F1, the
  paper on training loss with patience 5). Frozen embeddings are computed once per corpus and read
  from the on-disk cache (flairsuite/tagging/cache.py).
- `map-crf`, `map`: Adam with learning rate 0.01, all else as `bilstm-crf`. **Starting values, to
  be confirmed by measurement on Sturm in the experiments issue.** Plain Flair with the BiLSTM-CRF
  settings for 15 epochs left Map-CRF at F1 0.18 and Map at 0.20 on Sturm (BiLSTM-CRF: 0.77); the
  paper gets Map-CRF within ~3 points of BiLSTM-CRF with SGD, but over up to 150 epochs, and a
  2-core budget allows 15-20. The reasoning:
  - The linear taggers' training problem is convex (softmax or CRF over a linear map of frozen
    features): what matters is how fast the optimizer gets to the optimum, not which minimum it picks.
  - One global SGD step size suits badly scaled features poorly: stacked character-LM states and
    fastText vectors can differ widely in scale. Flair sums the loss over a mini-batch's tokens and
    clips gradients at norm 5, so an SGD step is at most lr x 5 long, pointing mostly along the
    largest-scale features. Adam scales each weight's step by its own gradient history, which
    removes both effects.
  - Step size: Sturm's ~2,600 train sentences give ~80 steps per epoch at mini-batch 32. A weight of
    the tag map needs to move by ~0.1-1 and Adam moves it by at most ~lr per step, so 0.01 gets there
    in the first epoch or two, where Adam's usual 0.001 would spend a third of a 20-epoch budget.
    Annealing (x0.5 after 3 epochs without dev gain) lowers it later.
  - Mini-batch size, annealing and the epoch limit stay as for `bilstm-crf`, so that architecture and
    optimizer are the only differences in the comparison.
"""

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import torch
from flair.data import Dictionary
from flair.embeddings import TokenEmbeddings
from flair.models import SequenceTagger

from flairsuite.corpora.registry import unknown_name_error

TAG_FORMAT = "BIO"
HIDDEN_SIZE = 256
RNN_LAYERS = 1
OPTIMIZERS: Mapping[str, type[torch.optim.Optimizer]] = MappingProxyType({"sgd": torch.optim.SGD, "adam": torch.optim.Adam})

# The paper's BiLSTM-CRF settings; see "Training defaults" in the module docstring.
PAPER_TRAIN: Mapping[str, Any] = MappingProxyType(
    {
        "learning_rate": 0.1,
        "mini_batch_size": 32,
        "max_epochs": 150,
        "anneal_factor": 0.5,
        "patience": 3,
        "optimizer": "sgd",
        "train_with_dev": False,
    }
)
LINEAR_TRAIN: Mapping[str, Any] = MappingProxyType({**PAPER_TRAIN, "optimizer": "adam", "learning_rate": 0.01})


@dataclass(frozen=True)
class TaggerSpec:
    """A registered tagger: what it is, the SequenceTagger arguments that make it, its training defaults."""

    description: str
    use_rnn: bool
    use_crf: bool
    reproject_embeddings: bool
    train: Mapping[str, Any]


TAGGERS: Mapping[str, TaggerSpec] = MappingProxyType(
    {
        "bilstm-crf": TaggerSpec("BiLSTM (1 x 256) + CRF, as Akbik et al. 2018", True, True, True, PAPER_TRAIN),
        "map-crf": TaggerSpec("linear map + CRF (no RNN)", False, True, False, LINEAR_TRAIN),
        "map": TaggerSpec("linear map + softmax (no RNN, no CRF)", False, False, False, LINEAR_TRAIN),
    }
)


def tagger_spec(name: str) -> TaggerSpec:
    """The registered tagger `name`; an unknown name is an error listing the known ones."""
    if name not in TAGGERS:
        raise unknown_name_error("tagger", name, list(TAGGERS))
    return TAGGERS[name]


def default_train(name: str) -> dict[str, Any]:
    """A fresh copy of tagger `name`'s training defaults (keys: those of `PAPER_TRAIN`)."""
    return dict(tagger_spec(name).train)


def build_tagger(name: str, embeddings: TokenEmbeddings, tag_dictionary: Dictionary, tag_type: str) -> SequenceTagger:
    """An untrained tagger `name` over `embeddings`, predicting `tag_type` spans from `tag_dictionary`."""
    spec = tagger_spec(name)
    return SequenceTagger(
        embeddings=embeddings,
        tag_dictionary=tag_dictionary,
        tag_type=tag_type,
        use_rnn=spec.use_rnn,
        hidden_size=HIDDEN_SIZE,
        rnn_layers=RNN_LAYERS,
        use_crf=spec.use_crf,
        reproject_embeddings=spec.reproject_embeddings,
        tag_format=TAG_FORMAT,
    )
