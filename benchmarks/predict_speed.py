"""Prediction speed: plain Flair's SequenceTagger.predict against flairsuite's fast path, on one model.

The model: fastText + the forward/backward character LMs (charlm/de-*, hidden 512) + BiLSTM-CRF (BIO),
built by `flairsuite.models.registry.build_tagger("bilstm-crf")`; `--model PATH`, or trained once with plain
Flair's ModelTrainer on Sturm (`--epochs`, embeddings_storage_mode="cpu") and cached in
benchmarks/cache/ (git-ignored). Each run tags the Sturm and Arendt test sets (fresh Sentence objects
every time) with:
  flair                plain Flair: model.predict(sentences), its defaults (mini_batch_size=32)
  flairsuite           flairsuite.inference.FastTagger (the `flairsuite predict` default: the character LMs in
                       int8, the tagger's recurrence in int8 and its input map in bfloat16 where the CPU computes
                       bfloat16 natively, else float32 (head="mixed"); length-bucketed)
  flairsuite float32   the same without quantisation
  float32 head         the default with the tagger's layers in float32 (head="float32", the default until 2026-12-07)
  flairsuite int8 head the tagger's layers in int8 with one activation scale for the whole input row (head="int8")
--repeats times, alternating, and prints tokens/s, the ratio to Flair (target >= 4x), F1 on the Sturm
test set (target: within 0.2 points of Flair's), agreement with Flair's spans, and peak RSS.
Run `python benchmarks/predict_speed.py -h`; see benchmarks/README.md.
"""

import argparse
import hashlib
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import flair
import torch
from common import machine, run_main
from flair.data import Sentence
from flair.models import SequenceTagger
from flair.trainers import ModelTrainer

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import load_corpus
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.corpora.registry import dataset
from flairsuite.embeddings import artifact_digest, stack
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file, write_json
from flairsuite.files.paths import corpora_dir, home
from flairsuite.inference.tagger import FastTagger
from flairsuite.models.registry import build_tagger
from flairsuite.tagging.scoring import flair_f1

HERE = Path(__file__).resolve().parent
SPECS = ["charlm:de-forward", "charlm:de-backward", "fasttext:de"]
TRAIN_CORPUS = "sturm"
TEST_CORPORA = ("sturm", "arendt")
TARGET_RATIO = 4.0
TARGET_F1_POINTS = 0.2

Tags = list[list[str]]


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--model", type=Path, help="a saved SequenceTagger to use (default: train one, cached in benchmarks/cache/)")
    add("--epochs", type=int, default=10, help="epochs of the benchmark model when it is trained (default 10)")
    add("--repeats", type=int, default=3, help="timed runs per method, alternating (default 3)")
    add("--threads", type=int, default=0, help="torch threads (default: torch's, all cores)")
    add("--seed", type=int, default=1)
    add("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    add("--out", type=Path, default=HERE / "results" / "predict_speed.json", help="results JSON")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.epochs < 1:
        parser.error("--repeats and --epochs must be at least 1")
    return args


# ---------------------------------------------------------------- the model


def cached_model_path(epochs: int, seed: int) -> Path:
    """The cache file of the benchmark model, keyed by the artifacts' contents and the training settings."""
    key = hashlib.sha256()
    for spec in SPECS:
        key.update(f"{spec}={artifact_digest(spec, home())}\n".encode())
    key.update(f"bilstm-crf {TRAIN_CORPUS} epochs={epochs} seed={seed} flair={flair.__version__}".encode())
    return HERE / "cache" / f"predict_speed-{key.hexdigest()[:16]}.pt"


def train_model(target: Path, epochs: int, seed: int, root: Path) -> None:
    """Train the benchmark model with plain Flair's ModelTrainer and save it to `target` atomically.

    One torch thread: two OpenMP threads slow down many times over when another process shares the
    cores, and the training's speed is not what is measured.
    """
    torch.set_num_threads(1)
    flair.set_seed(seed)
    corpus = load_corpus(TRAIN_CORPUS, root)
    model = build_tagger("bilstm-crf", stack(SPECS, home()), corpus.make_label_dictionary("ner", add_unk=False), "ner")
    with tempfile.TemporaryDirectory(prefix="predict-speed-") as work:
        trainer = ModelTrainer(model, corpus)
        trainer.train(work, max_epochs=epochs, embeddings_storage_mode="cpu", save_final_model=False, create_file_logs=False, create_loss_file=False)
    with atomic_file(target) as temp:
        model.save(temp)


def benchmark_model(args: argparse.Namespace, root: Path) -> tuple[SequenceTagger, str]:
    """The model to measure and where it came from."""
    if args.model:
        return SequenceTagger.load(args.model), str(args.model)
    path = cached_model_path(args.epochs, args.seed)
    if not path.is_file():
        print(f"training the benchmark model ({args.epochs} epochs on {TRAIN_CORPUS}, plain Flair) -> {path}", flush=True)
        # in a child process, so that training's memory does not count in the peak RSS measured here
        child = multiprocessing.get_context("spawn").Process(target=train_model, args=(path, args.epochs, args.seed, root))
        child.start()
        child.join()
        if child.exitcode != 0:
            raise FlairsuiteError(f"training the benchmark model failed (exit code {child.exitcode}; its output is above)")
    return SequenceTagger.load(path), str(path)


# ---------------------------------------------------------------- measuring


def test_sets(root: Path) -> dict[str, list[TaggedSentence]]:
    """The test sentences (tokens, gold tags, whitespace) of each test corpus."""
    return {name: read_splits(dataset(name), root, ["test"])["test"].sentences for name in TEST_CORPORA}


def fresh(sentences: list[TaggedSentence]) -> list[Sentence]:
    """New, unlabeled Flair sentences of the tokens (with their whitespace)."""
    made = []
    for tagged in sentences:
        sentence = Sentence(tagged.tokens)
        for token, whitespace in zip(sentence.tokens, tagged.whitespace_after):
            token.whitespace_after = 1 if whitespace else 0
        made.append(sentence)
    return made


def flair_predict(model: SequenceTagger, sentences: list[Sentence]) -> Tags:
    """Plain Flair's predict with its defaults; its spans as BIO tags."""
    model.predict(sentences)
    tags = [["O"] * len(sentence) for sentence in sentences]
    for row, sentence in zip(tags, sentences):
        for span in sentence.get_spans(model.label_type):
            first = span.tokens[0].idx - 1
            kind = span.get_label(model.label_type).value
            row[first : first + len(span)] = [f"B-{kind}"] + [f"I-{kind}"] * (len(span) - 1)
    return tags


def fast_predict(model: SequenceTagger, sentences: list[Sentence], quantize: bool, head: str = "mixed") -> Tags:
    """flairsuite's fast path (set-up included): the raw tags."""
    return [[tag for tag, _ in row] for row in FastTagger(model, quantize=quantize, head=head).tag(sentences)]


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux: /proc/self/clear_refs); False if not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> Optional[float]:
    """VmHWM of this process in MB (None where /proc is not there)."""
    status = Path("/proc/self/status")
    if not status.exists():
        return None
    line = next(line for line in status.read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def timed(run: Callable[[list[Sentence]], Tags], data: dict[str, list[TaggedSentence]]) -> tuple[float, dict[str, Tags], Optional[float]]:
    """Seconds to tag all test sets in one call (fresh sentences), the tags per corpus, the peak RSS meanwhile."""
    sentences = {name: fresh(data[name]) for name in data}
    everything = [s for name in data for s in sentences[name]]
    reset = reset_peak_rss()
    start = time.perf_counter()
    tags = run(everything)
    seconds = time.perf_counter() - start
    peak = peak_rss_mb() if reset else None
    per_corpus, at = {}, 0
    for name in data:
        per_corpus[name] = tags[at : at + len(data[name])]
        at += len(data[name])
    return seconds, per_corpus, peak


def agreement(reference: dict[str, Tags], other: dict[str, Tags]) -> dict[str, float]:
    """How far `other` agrees with `reference` over all corpora: share of equal tags, span F1."""
    ref = [row for name in reference for row in reference[name]]
    oth = [row for name in reference for row in other[name]]
    equal = sum(a == b for r, o in zip(ref, oth) for a, b in zip(r, o))
    return {"tags_equal": equal / sum(len(r) for r in ref), "span_f1": flair_f1(ref, oth)}


def measure(model: SequenceTagger, data: dict[str, list[TaggedSentence]], repeats: int) -> dict[str, Any]:
    """Every method `repeats` times, alternating; speeds, F1 on the training corpus's test set, agreement, peak RSS."""
    methods: dict[str, Callable[[list[Sentence]], Tags]] = {
        "flair": lambda s: flair_predict(model, s),
        "flairsuite": lambda s: fast_predict(model, s, True),
        "flairsuite float32": lambda s: fast_predict(model, s, False),
        "float32 head": lambda s: fast_predict(model, s, True, head="float32"),
        "flairsuite int8 head": lambda s: fast_predict(model, s, True, head="int8"),
    }
    tokens = sum(len(s.tokens) for name in data for s in data[name])
    gold = [s.tags for s in data[TRAIN_CORPUS]]
    seconds: dict[str, list[float]] = {name: [] for name in methods}
    peaks: dict[str, list[float]] = {name: [] for name in methods}
    tags: dict[str, dict[str, Tags]] = {}
    for repeat in range(repeats):
        for name, method in methods.items():
            took, tags[name], peak = timed(method, data)
            seconds[name].append(took)
            peaks[name] += [peak] if peak is not None else []
            print(f"  run {repeat + 1}/{repeats} {name:<19} {took:7.2f} s  {tokens / took:8,.0f} tokens/s  load {os.getloadavg()[0]:.1f}", flush=True)
    results = {}
    for name in methods:
        results[name] = {
            "seconds": [round(s, 3) for s in seconds[name]],
            "tokens_per_second_best": round(tokens / min(seconds[name])),
            "tokens_per_second_median": round(tokens / statistics.median(seconds[name])),
            "f1": flair_f1(gold, tags[name][TRAIN_CORPUS]),
            "peak_rss_mb": round(max(peaks[name])) if peaks[name] else None,
            "agreement_with_flair": agreement(tags["flair"], tags[name]),
        }
    return {"tokens": tokens, "sentences": sum(len(data[name]) for name in data), "methods": results}


# ---------------------------------------------------------------- report


def report(measured: dict[str, Any]) -> list[str]:
    """The table and the issue's targets."""
    runs = measured["methods"]
    flair_best, flair_median = runs["flair"]["tokens_per_second_best"], runs["flair"]["tokens_per_second_median"]
    lines = [
        "",
        f"{'method':<20}{'tokens/s best':>14}{'median':>10}{'x Flair':>9}{'F1 sturm':>10}{'tags = Flair':>13}{'span F1 vs Flair':>17}{'peak RSS':>10}",
    ]
    for name, r in runs.items():
        rss = "-" if r["peak_rss_mb"] is None else f"{r['peak_rss_mb']:,} MB"
        lines.append(
            f"{name:<20}{r['tokens_per_second_best']:>14,}{r['tokens_per_second_median']:>10,}"
            f"{r['tokens_per_second_best'] / flair_best:>8.2f}x{r['f1'] * 100:>10.2f}"
            f"{r['agreement_with_flair']['tags_equal']:>13.2%}{r['agreement_with_flair']['span_f1'] * 100:>17.2f}{rss:>10}"
        )
    fast = runs["flairsuite"]
    ratio = fast["tokens_per_second_best"] / flair_best
    median_ratio = fast["tokens_per_second_median"] / flair_median
    points = (fast["f1"] - runs["flair"]["f1"]) * 100
    lines += [
        "",
        "F1: Flair's span F1 (exact spans, micro) on the Sturm test set; Flair's spans as predict attaches them,",
        "flairsuite's raw tags decoded to spans the same way (get_spans_from_bio). Agreement: over both test sets.",
        "",
        f"  {'PASS' if ratio >= TARGET_RATIO else 'FAIL'}  flairsuite >= {TARGET_RATIO:g}x Flair's tokens/s ({ratio:.2f}x best, {median_ratio:.2f}x median)",
        f"  {'PASS' if abs(points) <= TARGET_F1_POINTS else 'FAIL'}  F1 within {TARGET_F1_POINTS} points of Flair's ({points:+.2f} points)",
    ]
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    flair.device = torch.device("cpu")
    root = corpora_dir(args.corpora_dir)
    model, source = benchmark_model(args, root)
    data = test_sets(root)
    tokens = sum(len(s.tokens) for name in data for s in data[name])
    print(f"model {source}; test sets {', '.join(TEST_CORPORA)}: {tokens:,} tokens; {torch.get_num_threads()} torch threads", flush=True)
    measured = measure(model, data, args.repeats)
    print("\n".join(report(measured)))
    options = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    write_json(args.out, {"options": options, "model": source, "machine": machine(torch.get_num_threads()), **measured})
    print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    run_main(main)
