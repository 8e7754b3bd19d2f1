"""The tagger registry: Akbik et al. 2018, Table 3 (BiLSTM-CRF, Map-CRF, Map) and Zöllner et al. 2021, §4.

Every tagger except `cse` is a `flair.models.SequenceTagger` built from constructor arguments only,
so a saved model loads with `SequenceTagger.load(path)` in plain Flair, without flairsuite (LCRF-NER
folds its transitions into Flair's CRF parameter on saving). `cse` is flairsuite's own Flair model:
load it with `ClassStartEndTagger.load(path)` or, once `flairsuite.models.cse` is imported,
`flair.nn.Classifier.load(path)`. Spans are encoded as BIO (IOB2) tags, not Flair's default BIOES:
the tables score the decoder's raw tags with seqeval in strict IOB2 mode and Entity-Fix is defined
on BIO, so the decoder's output is scored as it is. The tag dictionary holds the dataset's entity
types (`span_labels`), as `corpus.make_label_dictionary("ner", add_unk=False)` makes it.

| name | architecture | training defaults |
|---|---|---|
| `bilstm-crf` | BiLSTM (1 layer, 256 per direction) + CRF, Flair's dropouts | `PAPER_TRAIN` |
| `map-crf` | one linear map embedding -> tag scores + CRF | `LINEAR_TRAIN` |
| `map` | one linear map + softmax (multinomial logistic regression) | `LINEAR_TRAIN` |
| `lcrf-ner` | linear map + LCRF-NER (flairsuite/models/lcrf.py) | `LINEAR_TRAIN` |
| `bilstm-lcrf-ner` | as `bilstm-crf` with LCRF-NER | `PAPER_TRAIN` |
| `bilstm512-crf` | as `bilstm-crf`, hidden 512 per direction (the hidden-size ablation) | `PAPER_TRAIN` |
| `bilstm-crf-noproj` | as `bilstm-crf` without Flair's reprojection layer (the reprojection ablation) | `PAPER_TRAIN` |
| `cse` | Class-Start-End heads on the embeddings (flairsuite/models/cse.py) | `LINEAR_TRAIN` |

The linear taggers skip Flair's reprojection layer (two linear maps in a row are one linear map, the paper's
Eq. 12) and train without locked dropout; the BiLSTM taggers keep both, as Flair builds them. Training defaults
(`default_train`; an experiment's `train` and `tagger_train` override them) are `TrainSettings`
(flairsuite/models/settings.py): `PAPER_TRAIN`, the paper's SGD schedule (learning rate 0.1, mini-batch 32, halved
after 3 epochs without dev gain, up to 150 epochs, best dev epoch kept); `LINEAR_TRAIN`, Adam 0.01, all else as
`PAPER_TRAIN`; `fine_tune_train(corpus)` for fine-tuned BERTs (Zöllner et al. 2021, §6.1, and Flair's `fine_tune`).
The measurements behind each choice are in results/README.md ("Why the taggers are built as they are").
"""

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping

import flair.nn
from flair.data import Dictionary
from flair.embeddings import TokenEmbeddings
from flair.models import SequenceTagger

from flairsuite.errors import unknown_name_error
from flairsuite.models.cse import ClassStartEndTagger
from flairsuite.models.lcrf import LCRFNERTagger
from flairsuite.models.settings import TrainSettings

TAG_FORMAT = "BIO"
HIDDEN_SIZE = 256
RNN_LAYERS = 1
LOCKED_DROPOUT = 0.5  # Flair's default, for the BiLSTM taggers only (see "Dropout" above)

# See "Training defaults" in the module docstring.
PAPER_TRAIN = TrainSettings()
LINEAR_TRAIN = replace(PAPER_TRAIN, optimizer="adam", learning_rate=0.01)
FINE_TUNE_TRAIN = replace(
    PAPER_TRAIN, optimizer="adamw", learning_rate=5e-5, mini_batch_size=16, max_epochs=30, schedule="linear", warmup_fraction=0.1, epoch_samples=5000,
    bucket_batches=50,
)
FINE_TUNE_EPOCHS = MappingProxyType({"ler": 50})  # the paper's longer training on LER (§6.1); other corpora: FINE_TUNE_TRAIN's 30


Builder = Callable[[TokenEmbeddings, Dictionary, str], flair.nn.Classifier]


def sequence_tagger(
    use_rnn: bool, use_crf: bool, model: type[SequenceTagger] = SequenceTagger, hidden_size: int = HIDDEN_SIZE, reproject: bool = True
) -> Builder:
    """A builder of SequenceTaggers (or LCRF-NER ones): BiLSTM with reprojection (unless not `reproject`), or a linear map without it."""

    def build(embeddings: TokenEmbeddings, tag_dictionary: Dictionary, tag_type: str) -> SequenceTagger:
        return model(
            embeddings=embeddings,
            tag_dictionary=tag_dictionary,
            tag_type=tag_type,
            use_rnn=use_rnn,
            hidden_size=hidden_size,
            rnn_layers=RNN_LAYERS,
            use_crf=use_crf,
            reproject_embeddings=use_rnn and reproject,
            tag_format=TAG_FORMAT,
            locked_dropout=LOCKED_DROPOUT if use_rnn else 0.0,
        )

    return build


def cse_tagger(embeddings: TokenEmbeddings, tag_dictionary: Dictionary, tag_type: str) -> ClassStartEndTagger:
    """Class-Start-End heads on the embeddings, without locked dropout (as the linear taggers)."""
    return ClassStartEndTagger(embeddings, tag_dictionary, tag_type, locked_dropout=0.0)


@dataclass(frozen=True)
class TaggerSpec:
    """A registered tagger: what it is, how to build it, its training defaults, the class it saves as.

    `saved_as` is the Flair model class whose `load` reads the saved file (the class name Flair
    records in it); plain Flair without flairsuite loads it when that is `SequenceTagger`.
    `spans_only`: the tagger's output layer is built on entity spans (LCRF-NER's transitions,
    Class-Start-End's span heads), so it tags NER only, not one-tag-per-token tasks such as PoS.
    """

    description: str
    build: Builder
    train: TrainSettings
    saved_as: type[flair.nn.Classifier] = SequenceTagger
    spans_only: bool = False

    @property
    def plain_flair(self) -> bool:
        """Whether plain Flair, without flairsuite, loads the saved model."""
        return self.saved_as is SequenceTagger


TAGGERS: Mapping[str, TaggerSpec] = MappingProxyType(
    {
        "bilstm-crf": TaggerSpec("BiLSTM (1 x 256) + CRF, as Akbik et al. 2018", sequence_tagger(True, True), PAPER_TRAIN),
        "bilstm512-crf": TaggerSpec("BiLSTM (1 x 512) + CRF: the hidden-size ablation", sequence_tagger(True, True, hidden_size=512), PAPER_TRAIN),
        "bilstm-crf-noproj": TaggerSpec(
            "BiLSTM (1 x 256) + CRF without Flair's reprojection layer: the reprojection ablation", sequence_tagger(True, True, reproject=False), PAPER_TRAIN
        ),
        "map-crf": TaggerSpec("linear map + CRF (no RNN)", sequence_tagger(False, True), LINEAR_TRAIN),
        "map": TaggerSpec("linear map + softmax (no RNN, no CRF)", sequence_tagger(False, False), LINEAR_TRAIN),
        "lcrf-ner": TaggerSpec(
            "linear map + LCRF-NER (Zöllner et al. 2021, Eq. 7)", sequence_tagger(False, True, LCRFNERTagger), LINEAR_TRAIN, spans_only=True
        ),
        "bilstm-lcrf-ner": TaggerSpec("BiLSTM (1 x 256) + LCRF-NER", sequence_tagger(True, True, LCRFNERTagger), PAPER_TRAIN, spans_only=True),
        "cse": TaggerSpec(
            "Class-Start-End heads on the embeddings (Zöllner et al. 2021, §4.1)", cse_tagger, LINEAR_TRAIN, saved_as=ClassStartEndTagger,
            spans_only=True,
        ),
    }
)


def tagger_spec(name: str) -> TaggerSpec:
    """The registered tagger `name`; an unknown name is an error listing the known ones."""
    if name not in TAGGERS:
        raise unknown_name_error("tagger", name, list(TAGGERS))
    return TAGGERS[name]


def default_train(name: str) -> dict[str, Any]:
    """Tagger `name`'s training defaults as a fresh plain dict, as run records hold them."""
    return tagger_spec(name).train.record()


def fine_tune_train(corpus: str) -> TrainSettings:
    """The training defaults of every tagger that fine-tunes its BERTs on dataset `corpus` (see the module docstring)."""
    return replace(FINE_TUNE_TRAIN, max_epochs=FINE_TUNE_EPOCHS.get(corpus, FINE_TUNE_TRAIN.max_epochs))


def saved_classes() -> dict[str, type[flair.nn.Classifier]]:
    """The classes the registry's taggers are saved as, by the class name a saved file records (`__cls__`)."""
    return {spec.saved_as.__name__: spec.saved_as for spec in TAGGERS.values()}


def build_tagger(name: str, embeddings: TokenEmbeddings, tag_dictionary: Dictionary, tag_type: str) -> flair.nn.Classifier:
    """An untrained tagger `name` over `embeddings`, predicting `tag_type` from `tag_dictionary`.

    A dictionary with `span_labels` (entity types) makes a BIO span tagger; one without (PoS tags)
    a tagger of one tag per token, as Flair's `SequenceTagger` decides.
    """
    return tagger_spec(name).build(embeddings, tag_dictionary, tag_type)
