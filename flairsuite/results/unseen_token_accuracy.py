"""Token accuracy of PoS runs on the test tokens their training had seen and had not.

Where a PoS tagger loses accuracy says why it sits below a published number. A token whose form occurs in the
corpus's train split is mostly a question of ambiguity; an unseen one must be tagged from what the embeddings
generalise, from its characters through the LM pair or from the word vectors, if it is in their own vocabulary.
For each PoS run, from the `predictions.tsv` beside its metrics.json (git-ignored: the runs trained on this machine),
the accuracy on all test tokens, on those seen and unseen in train (exact form), and, given a `train-fasttext`
folder, on those outside the vectors' own vocabulary as Flair's `WordEmbeddings` looks tokens up (before
`train-fasttext` added subword-built vectors for the corpus tokens it lacked).
"""

import json
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Optional

import pandas as pd
from gensim.models.keyedvectors import KeyedVectors

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file
from flairsuite.results.predictions import PREDICTIONS_FILE, Prediction, read_prediction_sentences
from flairsuite.settings_schema import POSITIVE_INTEGER
from flairsuite.wordvectors.coverage import covered
from flairsuite.wordvectors.store import VECTORS_FILE

GROUPS = ("all", "seen in train", "unseen in train", "outside the vectors")


def group_counts(tokens: Iterable[Prediction], train_forms: set[str], vocab: Optional[Mapping[str, int]]) -> dict[str, tuple[int, int]]:
    """Per group of GROUPS, (correct, tokens) over `tokens`; without `vocab`, no `outside the vectors` entry."""
    counts = {group: [0, 0] for group in GROUPS if vocab is not None or group != "outside the vectors"}
    for token in tokens:
        groups = ["all", "seen in train" if token.token in train_forms else "unseen in train"]
        if vocab is not None and not covered(token.token, vocab):
            groups.append("outside the vectors")
        for group in groups:
            counts[group][0] += token.gold == token.predicted
            counts[group][1] += 1
    return {group: (correct, total) for group, (correct, total) in counts.items()}


def own_vocabulary(folder: Path) -> dict[str, int]:
    """The vocabulary a `train-fasttext` folder's vectors learned from raw text: the first `vocabulary` keys of its
    vectors (summary.json), without the corpus tokens added after training."""
    summary_path = folder / SUMMARY_FILE
    if not summary_path.is_file() or not (folder / VECTORS_FILE).is_file():
        raise FlairsuiteError(f"{folder}: not a train-fasttext folder (needs {SUMMARY_FILE} and {VECTORS_FILE})")
    size = read_summary_file(summary_path, {"vocabulary": POSITIVE_INTEGER.noted(" (the words trained from raw text)")})["vocabulary"]
    try:
        keys = KeyedVectors.load(str(folder / VECTORS_FILE), mmap="r").index_to_key[:size]
    except (OSError, ValueError, EOFError, pickle.UnpicklingError) as err:
        raise FlairsuiteError(f"{folder / VECTORS_FILE}: not readable as gensim vectors ({type(err).__name__}); run train-fasttext again") from None
    return {word: index for index, word in enumerate(keys)}


def train_forms(corpus: str, options: Mapping[str, str], root: Path) -> set[str]:
    """The token forms of the train split of registry corpus `corpus` with `options`."""
    return {token for sentence in read_splits(dataset(corpus, **options), root, ["train"])["train"].sentences for token in sentence.tokens}


def unseen_frame(runs: pd.DataFrame, root: Path, vocab: Optional[Mapping[str, int]] = None) -> pd.DataFrame:
    """One row per PoS run of `runs` (`collect`) with a predictions file: its KEYS and seed, and per group the
    accuracy (`<group>`, a fraction) and token count (`<group> tokens`)."""
    forms: dict[str, set[str]] = {}
    rows = []
    for run in runs[runs["task"] == "pos"].itertuples():
        path = Path(run.path).parent / PREDICTIONS_FILE
        if not path.is_file():
            continue
        key = json.dumps([run.corpus, run.corpus_options], sort_keys=True)
        if key not in forms:
            forms[key] = train_forms(run.corpus, run.corpus_options, root)
        counts = group_counts((t for s in read_prediction_sentences(path) for t in s), forms[key], vocab)
        row = {"corpus_label": run.corpus_label, "embeddings": run.embeddings, "tagger": run.tagger, "seed": run.seed}
        for group, (correct, total) in counts.items():
            row[group] = correct / total if total else float("nan")
            row[f"{group} tokens"] = total
        rows.append(row)
    if not rows:
        raise FlairsuiteError(f"no PoS run has a {PREDICTIONS_FILE} beside its metrics.json (it is git-ignored: run this where they were trained)")
    return pd.DataFrame(rows)


def unseen_table(frame: pd.DataFrame) -> str:
    """Markdown: per corpus, stack and tagger, the mean accuracy (%) of each group over seeds, each group's share of the
    test tokens in its header."""
    groups = [group for group in GROUPS if group in frame.columns]
    lines = []
    for label, part in frame.groupby("corpus_label", sort=True):
        first = part.iloc[0]
        shares = [f"{group} ({100 * first[f'{group} tokens'] / first['all tokens']:.1f} %)" if group != "all" else f"all ({first['all tokens']:,})"
                  for group in groups]
        lines += [f"### {label}: test accuracy (%) by the tokens' group (share of the test tokens), mean over seeds", "",
                  "| embeddings | tagger | seeds | " + " | ".join(shares) + " |", "|---|---|--:|" + "--:|" * len(groups)]
        for (embeddings, tagger), runs in part.groupby(["embeddings", "tagger"], sort=True):
            cells = [f"{100 * runs[group].mean():.2f}" for group in groups]
            lines.append(f"| {embeddings} | {tagger} | {len(runs)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)
