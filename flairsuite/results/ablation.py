"""Ablation tables: each change of a recipe against the runs it changes, read across experiments.

An ablation spreads over several experiment files (one per change, each with its own runs), so one
comparison table cannot put a change beside its baseline. An ablation file names the pairs:

```yaml
title: The German recipe by measured ablation
baseline: ablation-lm-de/lm-1h+word/bilstm-crf        # experiment/stack/tagger (fine-tuned runs: experiment/stack/ft/tagger,
                                                      # transfer runs: experiment/stack/transfer-joint/tagger)
changes:
  - {change: without word vectors, runs: ablation-de/proposed/bilstm-crf}
  - {change: LM hidden 1024 instead of 512, runs: ablation-lm-hidden-de/lm1024+word/bilstm-crf,
     baseline: ablation-lm-hidden-de/lm512+word/bilstm-crf}   # a change with a baseline of its own
  - {change: self-training above 0.9, two rounds, runs: st/proposed+word/threshold-0.9-round-2/map-crf,
     baseline: st/proposed+word/round-0/map-crf}            # rounds of a self-training experiment
```

A self-training experiment's rounds (`self_training_report.py`) are named by a segment after the stack: `round-0` (the
tagger on the labelled part only) or `threshold-T-round-R`; a round's cost is that of every training up to it (round 0
and the threshold's rounds so far: what it takes to get there), in core-minutes where the rounds recorded their threads.
A round against another round of the same study gets the interval of the per-seed differences instead of Welch's, marked
`paired` (a seed's rounds share its labelled part, its pool and its round 0, so the seeds' spread, mostly which part of
train each seed holds back, is not the change's).

`flairsuite results DIR --layout ablation --ablation-file FILE` prints one table per corpus: the baseline's dev and test
score (mean ± std (n) over seeds), then per change its scores and the difference to its baseline with
the 90 % Welch interval (`welch.py`), dev first, since dev is what decides whether a change is kept.
Beside each row: the valid perplexity per character of the character LMs its runs read, as recorded, and what a run
cost: its wall minutes times its torch threads (`seconds` and `threads` of metrics.json, mean over the runs; an upper
bound of the CPU time, reached on a machine nothing else uses; empty for runs from before the threads were recorded),
the tagger's training only (embedding files made once and shared, such as an adapted LM pair, are not in it).
Entity-Fix variants are left out. A change without runs (not trained yet, or misspelt) shows empty cells and a
footnote naming its key; an experiment without runs, or a baseline without runs, is an error naming the file and key.
"""

import math
import re
from pathlib import Path
from typing import Any, NamedTuple, Optional

import pandas as pd

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.files.yaml_file import read_yaml
from flairsuite.results.collect import SCORE, TRANSFER, trained_runs
from flairsuite.results.metrics_file import FINE_TUNED, NO_TRANSFER, TRANSFER_SEGMENT
from flairsuite.results.self_training_report import is_self_training, round_name, rounds_frame, with_costs
from flairsuite.results.tables import STYLES, WRITERS, Cell, Difference, metric_title, summary, written
from flairsuite.results.welch import paired_interval, welch_interval
from flairsuite.settings_schema import checked_keys

LEVEL = 0.90
ROUND = "round"  # the column of a self-training round's segment (rows added by `with_rounds`; NaN for runs)
NO_ROUND = ""
ROUND_SEGMENT = re.compile(r"round-0|threshold-[0-9.]+-round-[1-9][0-9]*")  # what `round_name` writes
PAIRED_NOTE = ("paired: two rounds of one self-training study, the interval of the per-seed differences (a seed's rounds share "
               "its labelled part, its pool and its round 0)")
DELTA = {"md": "Δ", "csv": "Δ", "latex": r"$\Delta$"}  # pdflatex without extra packages takes no Unicode Δ
HEADERS = ("change", "runs", "LM valid ppl", "dev", f"Δ dev [{LEVEL * 100:.0f} % interval]", "test", f"Δ test [{LEVEL * 100:.0f} % interval]",
           "core-min a run")


class RunsRef(NamedTuple):
    """The runs of one stack and tagger in one experiment: `experiment/stack/tagger`, `experiment/stack/ft/tagger` for the
    runs that fine-tune the stack's BERT, `experiment/stack/transfer-MODE/tagger` for the runs trained on other corpora
    first or beside (as their run ids say)."""

    experiment: str
    embeddings: str
    tagger: str
    fine_tune: bool = False
    transfer: str = NO_TRANSFER
    round: str = NO_ROUND

    def within(self) -> str:
        """The part after the experiment: `stack/tagger`, `stack/ft/tagger`, `stack/transfer-joint/tagger` or
        `stack/threshold-0.9-round-2/tagger`."""
        transfer = [] if self.transfer == NO_TRANSFER else [f"{TRANSFER_SEGMENT}{self.transfer}"]
        rounds = [] if self.round == NO_ROUND else [self.round]
        return "/".join([self.embeddings, *([FINE_TUNED] if self.fine_tune else []), *transfer, *rounds, self.tagger])

    def __str__(self) -> str:
        return f"{self.experiment}/{self.within()}"


class Change(NamedTuple):
    """One row of an ablation: what changed, its runs, the runs it is compared with."""

    change: str
    runs: RunsRef
    baseline: RunsRef


class Ablation(NamedTuple):
    """A read ablation file: its title, the baseline, the changes, and where it was read (for errors)."""

    title: str
    baseline: RunsRef
    changes: list[Change]
    path: Path


def runs_ref(text: Any, path: Path, key: str) -> RunsRef:
    """`experiment/stack/tagger`, `experiment/stack/ft/tagger`, `experiment/stack/transfer-MODE/tagger` or a self-training
    round, `experiment/stack/round-0/tagger` or `experiment/stack/threshold-T-round-R/tagger`, as a RunsRef; anything else is
    an error naming the file and key."""
    parts = [part.strip() for part in text.split("/")] if isinstance(text, str) else []
    tuned = len(parts) == 4 and parts[2] == FINE_TUNED
    transfer = parts[2].removeprefix(TRANSFER_SEGMENT) if len(parts) == 4 and parts[2].startswith(TRANSFER_SEGMENT) else NO_TRANSFER
    round_ = parts[2] if len(parts) == 4 and ROUND_SEGMENT.fullmatch(parts[2]) else NO_ROUND
    if tuned or transfer != NO_TRANSFER or round_ != NO_ROUND:
        parts = parts[:2] + parts[3:]
    if len(parts) != 3 or not all(parts) or not transfer:
        raise InputError(path, None, f"{key}: expected experiment/stack/tagger (e.g. ablation-lm-de/lm-1h+word/bilstm-crf; fine-tuned: "
                                     f"experiment/stack/{FINE_TUNED}/tagger; with transfer: experiment/stack/{TRANSFER_SEGMENT}joint/tagger; "
                                     f"a self-training round: experiment/stack/threshold-0.9-round-2/tagger or round-0), found {text!r}")
    return RunsRef(*parts, fine_tune=tuned, transfer=transfer, round=round_)


ABLATION_KEYS = ("title", "baseline", "changes")


def load_ablation(path: Path) -> Ablation:
    """Read and check an ablation file (module docstring); a problem is a one-line error naming the file and key."""
    try:
        data = checked_keys(read_yaml(path), ABLATION_KEYS, hint=f" with the keys {', '.join(ABLATION_KEYS)}")
    except FlairsuiteError as err:
        raise InputError(path, None, str(err)) from None
    baseline = runs_ref(data.get("baseline"), path, "baseline")
    changes = data.get("changes")
    if not isinstance(changes, list) or not changes:
        raise InputError(path, None, "changes: expected a list of {change: ..., runs: experiment/stack/tagger}")
    rows = []
    for number, item in enumerate(changes, 1):
        where = f"changes[{number}]"
        if not isinstance(item, dict) or not isinstance(item.get("change"), str) or set(item) - {"change", "runs", "baseline"}:
            raise InputError(path, None, f"{where}: expected {{change: TEXT, runs: experiment/stack/tagger[, baseline: ...]}}, found {item!r}")
        own = item.get("baseline")
        rows.append(Change(item["change"], runs_ref(item.get("runs"), path, f"{where}.runs"),
                           baseline if own is None else runs_ref(own, path, f"{where}.baseline")))
    title = data.get("title", path.stem)
    if not isinstance(title, str) or not title.strip() or "\n" in title.strip():
        raise InputError(path, None, f"title: expected one line of text, found {title!r}")
    return Ablation(title.strip(), baseline, rows, path)


def corpus_runs(frame: pd.DataFrame, ref: RunsRef, corpus: str) -> pd.DataFrame:
    """The trained runs of `ref` on `corpus` (Entity-Fix variants left out); runs on other corpora are not this table's."""
    runs = trained_runs(runs_of(frame, ref))
    return runs[runs["corpus_label"] == corpus]


def scores(frame: pd.DataFrame, ref: RunsRef, corpus: str, split: str) -> list[float]:
    """The main scores (%) of the runs of `ref` on `corpus` in `split`, Entity-Fix variants left out."""
    chosen = corpus_runs(frame, ref, corpus)
    return (chosen[f"{split}_{SCORE}"] * 100).tolist()


def seeded_scores(frame: pd.DataFrame, ref: RunsRef, corpus: str, split: str) -> dict[int, float]:
    """The main scores (%) of the runs of `ref` on `corpus` in `split` by seed, Entity-Fix variants left out."""
    chosen = corpus_runs(frame, ref, corpus)
    return {int(seed): float(score) * 100 for seed, score in zip(chosen["seed"], chosen[f"{split}_{SCORE}"])}


def one_study(a: RunsRef, b: RunsRef) -> bool:
    """Whether `a` and `b` are two rounds of the same self-training study (their seeds pair run by run)."""
    return a.round != NO_ROUND and b.round != NO_ROUND and a._replace(round=NO_ROUND) == b._replace(round=NO_ROUND)


def paired_difference(change: dict[int, float], baseline: dict[int, float]) -> Optional[Difference]:
    """The mean per-seed difference over the seeds both sides have, with its paired interval from two seeds on; None
    without a common seed."""
    seeds = sorted(set(change) & set(baseline))
    if not seeds:
        return None
    ours, theirs = [change[seed] for seed in seeds], [baseline[seed] for seed in seeds]
    if len(seeds) < 2:
        return Difference(ours[0] - theirs[0])
    return Difference(*paired_interval(ours, theirs, LEVEL), paired=True)


def perplexity_cell(frame: pd.DataFrame, ref: RunsRef, corpus: str) -> str:
    """`3.759 / 3.779`: the valid perplexity per character of the character LMs the runs of `ref` on `corpus` read, in
    stack order, as the runs recorded them (`artifact_summaries`); runs that read LMs of other perplexities add theirs
    after `;`. Runs on other corpora are not this table's (they may have read another file of the same name)."""
    seen: list[str] = []
    runs = corpus_runs(frame, ref, corpus)
    for specs, summaries in zip(runs["embedding_specs"], runs["artifact_summaries"]):
        values = [(summaries or {}).get(spec, {}).get("valid_ppl") for spec in specs.split() if spec.startswith("charlm:")]
        text = " / ".join(f"{value:.3f}" for value in values if value is not None)
        if text and text not in seen:
            seen.append(text)
    return "; ".join(seen)


def difference(change: list[float], baseline: list[float]) -> Optional[Difference]:
    """The difference of the means and its Welch interval (the difference alone with a single run a side); None without runs."""
    if not change or not baseline:
        return None
    if len(change) < 2 or len(baseline) < 2:
        return Difference(sum(change) / len(change) - sum(baseline) / len(baseline))
    return Difference(*welch_interval(change, baseline, LEVEL))


def core_minutes(frame: pd.DataFrame, ref: RunsRef, corpus: str) -> float:
    """Mean wall minutes times torch threads of the runs of `ref` on `corpus` (NaN without runs or without threads recorded)."""
    runs = corpus_runs(frame, ref, corpus)
    return float((runs["seconds"] * runs["threads"]).mean() / 60) if len(runs) else math.nan


def ablation_rows(frame: pd.DataFrame, ablation: Ablation, corpus: str) -> list[list[Cell]]:
    """The table's rows on one corpus: the baseline, then each change (HEADERS)."""
    def values(ref: RunsRef) -> dict[str, list[float]]:
        return {split: scores(frame, ref, corpus, split) for split in ("dev", "test")}

    base = values(ablation.baseline)
    rows: list[list[Cell]] = [["baseline", str(ablation.baseline), perplexity_cell(frame, ablation.baseline, corpus), summary(base["dev"]), None,
                               summary(base["test"]), None, core_minutes(frame, ablation.baseline, corpus)]]
    for change in ablation.changes:
        ours, theirs = values(change.runs), values(change.baseline)
        against = "" if change.baseline == ablation.baseline else f" against {change.baseline}"
        perplexity = perplexity_cell(frame, change.runs, corpus)
        if against and perplexity_cell(frame, change.baseline, corpus):
            perplexity += f" (against {perplexity_cell(frame, change.baseline, corpus)})"
        if one_study(change.runs, change.baseline):
            dev, test = (paired_difference(seeded_scores(frame, change.runs, corpus, split), seeded_scores(frame, change.baseline, corpus, split))
                         for split in ("dev", "test"))
        else:
            dev, test = difference(ours["dev"], theirs["dev"]), difference(ours["test"], theirs["test"])
        rows.append([change.change, f"{change.runs}{against}", perplexity, summary(ours["dev"]), dev, summary(ours["test"]), test,
                     core_minutes(frame, change.runs, corpus)])
    return rows


def references(ablation: Ablation) -> list[tuple[str, RunsRef]]:
    """Every reference of the file with its key: `baseline`, then `changes[n].runs` and `changes[n].baseline` (where given)."""
    found = [("baseline", ablation.baseline)]
    for number, change in enumerate(ablation.changes, 1):
        found.append((f"changes[{number}].runs", change.runs))
        if change.baseline != ablation.baseline:
            found.append((f"changes[{number}].baseline", change.baseline))
    return found


def runs_of(frame: pd.DataFrame, ref: RunsRef) -> pd.DataFrame:
    same = (frame["experiment"] == ref.experiment) & (frame["embeddings"] == ref.embeddings) & (frame["tagger"] == ref.tagger)
    rounds = frame[ROUND].fillna(NO_ROUND) if ROUND in frame else pd.Series(NO_ROUND, index=frame.index)
    return frame[same & (frame["fine_tune"].astype(bool) == ref.fine_tune) & (frame[TRANSFER] == ref.transfer) & (rounds == ref.round)]


def round_rows(root: Path, experiment: str) -> pd.DataFrame:
    """The finished rounds of the self-training experiment `root/experiment` as rows of a runs frame: its keys, the round's
    segment in ROUND, dev and test scores, and as `seconds` (with `threads` 1) the core-seconds of every training up to the
    round where its rounds recorded their threads (NaN threads otherwise: the cost cell stays empty)."""
    rounds = rounds_frame(root / experiment)
    if rounds.empty:
        return pd.DataFrame()
    rounds, _ = with_costs(rounds)
    threaded = rounds["threads"].notna().all()
    segment = [round_name(threshold, int(index)) for threshold, index in zip(rounds["threshold"], rounds["round"])]
    return pd.DataFrame({"experiment": experiment, "embeddings": rounds["stack"], "tagger": rounds["tagger"], "seed": rounds["seed"], "fine_tune": False,
                         TRANSFER: NO_TRANSFER, ROUND: segment, "corpus_label": rounds["corpus"], "entity_fix": False,
                         f"dev_{SCORE}": rounds["dev"], f"test_{SCORE}": rounds["test"], "embedding_specs": "",
                         "artifact_summaries": [{}] * len(rounds), "seconds": rounds["cost"],
                         "threads": 1.0 if threaded else math.nan})


def with_rounds(frame: pd.DataFrame, ablation: Ablation, root: Path) -> pd.DataFrame:
    """`frame` with the rounds of every self-training experiment the ablation names a round of (below `root`)."""
    named = sorted({ref.experiment for _, ref in references(ablation) if ref.round != NO_ROUND})
    extra = [rows for experiment in named if is_self_training(root / experiment) and not (rows := round_rows(root, experiment)).empty]
    return pd.concat([frame, *extra], ignore_index=True) if extra else frame


def pending_notes(frame: pd.DataFrame, ablation: Ablation) -> list[str]:
    """Footnotes for references without runs (not trained yet, or a misspelt stack or tagger); an experiment without any run,
    or a baseline without runs, is an error naming the file and key."""
    found = ", ".join(sorted(set(frame["experiment"])))
    notes = []
    for key, ref in references(ablation):
        if ref.experiment not in set(frame["experiment"]):
            raise InputError(ablation.path, None, f"{key}: no runs of experiment '{ref.experiment}' below the results folder (found: {found})")
        if runs_of(frame, ref).empty:
            stacks = ", ".join(sorted(set(frame.loc[frame["experiment"] == ref.experiment, "embeddings"])))
            if key == "baseline":
                raise InputError(ablation.path, None, f"baseline: {ref.experiment} has no runs of {ref.within()} (its stacks: {stacks})")
            notes.append(f"{key}: no runs of {ref} yet (stacks with runs in {ref.experiment}: {stacks})")
    return notes


def ablation_tables(frame: pd.DataFrame, ablation: Ablation, fmt: str = "md") -> str:
    """One table per corpus the baseline has runs on (sorted), in format `fmt`."""
    notes = pending_notes(frame, ablation)
    base = runs_of(frame, ablation.baseline)
    style = STYLES[fmt]
    sections = []
    for corpus in sorted(base["corpus_label"].unique()):
        metric = metric_title(base[base["corpus_label"] == corpus], SCORE)
        title = (f"{ablation.title}: {corpus}, dev and test {metric} (%), mean ± std over seeds (n); Δ: the change − its baseline, "
                 f"{LEVEL * 100:.0f} % Welch interval")
        cells = ablation_rows(frame, ablation, corpus)
        rows = [[*map(style.escape, row[:3]), *row[3:]] for row in cells]  # type: ignore[arg-type]
        headers, rows = written([style.escape(h).replace("Δ", DELTA[fmt]) for h in HEADERS], rows, style, numbers=fmt == "csv")
        footnotes = [f"{style.dagger} {style.escape(note)}" for note in notes]
        if any(isinstance(cell, Difference) and cell.paired for row in cells for cell in row):
            footnotes.append(style.escape(PAIRED_NOTE))
        sections.append(WRITERS[fmt](style.escape(title).replace("Δ", DELTA[fmt]), headers, rows, footnotes, 3))
    return "\n\n".join(sections)


def ablation_report(frame: pd.DataFrame, path: Optional[Path], fmt: str = "md", root: Optional[Path] = None) -> str:
    """The tables of the ablation file `path` over the runs of `frame` (and the self-training rounds it names, below the
    results folder `root`)."""
    if path is None or not path.is_file():
        raise FlairsuiteError(f"{path}: no such ablation file")
    ablation = load_ablation(path)
    return ablation_tables(frame if root is None else with_rounds(frame, ablation, root), ablation, fmt)
