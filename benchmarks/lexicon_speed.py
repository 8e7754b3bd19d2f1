"""Entity lexicons: new-word discovery over a language's whole raw text, and matching speed, each against the ordinary way.

Discovery: `flairsuite.lexicon` (numpy n-gram ids, `np.unique`) over the prepared training text of
`--lang` (German: 71 M characters), wall time and peak RSS; beside it the ordinary way, Python
`collections.Counter`s of token tuples with their left/right neighbour Counters, timed on the first
`--sample` documents (it would need many GB on the whole text), and ours on the same sample: the ratio.

Matching: the lexicon just found, matched over the same text by both rules (`BulkMaximum.text_arrays`,
`BulkDaluke.text_arrays`: all lines in pieces, spans as character offsets per line), in characters per
second with the process's peak memory, and as `match-lexicon` writes it (JSON lines); beside it the
ordinary maximum matching, a Python loop trying every length from the longest entry down at each unit
against a `set` of entries, on the sample.

    python benchmarks/lexicon_speed.py --lang de
    python benchmarks/lexicon_speed.py --lang zh --sample 5000

Results: benchmarks/results/lexicon_speed.json (one key per language).
"""

import argparse
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any, Optional

from common import machine, run_main

from flairsuite.corpora.registry import language_segmentation
from flairsuite.lexicon.discover import SETTINGS, discover
from flairsuite.lexicon.lexicon_commands import match_lines, text_documents
from flairsuite.lexicon.match import BulkMaximum, LexiconMatcher
from flairsuite.lexicon.ngrams import is_word, unit_text
from flairsuite.lexicon.store import Lexicon, split_entry
from flairsuite.rawtext.language import prepare_language
from flairsuite.rawtext.tokens import tokenize
from flairsuite.runtime.memory import PeakMemory

RESULTS = Path(__file__).parent / "results" / "lexicon_speed.json"


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", default="de", help="language whose raw-text set is read (default de)")
    parser.add_argument("--sample", type=int, default=20_000, help="documents for the ordinary-way comparisons (default 20,000)")
    return parser.parse_args(argv)


def counter_discovery(documents: list[list[str]], longest: int, shortest: int) -> int:
    """The ordinary way: Counters of n-gram tuples and of their neighbours (what MI and the entropies need); the candidates counted."""
    grams: Counter = Counter()
    left: dict[tuple[str, ...], Counter] = {}
    right: dict[tuple[str, ...], Counter] = {}
    for units in documents:
        words = [unit if is_word(unit) else None for unit in units]
        for n in range(1, longest + 1):
            for start in range(len(words) - n + 1):
                gram = tuple(words[start : start + n])
                if None in gram:
                    continue
                grams[gram] += 1
                if n >= shortest:  # a neighbour: a word or a mark itself, a document end None
                    left.setdefault(gram, Counter())[units[start - 1] if start else None] += 1
                    right.setdefault(gram, Counter())[units[start + n] if start + n < len(units) else None] += 1
    for neighbours in (left, right):  # the entropies, as discover computes them
        for counts in neighbours.values():
            total = sum(counts.values())
            sum(-c / total * math.log2(c / total) for c in counts.values())
    return len(grams)


def python_maximum(lines: list[str], entries: set[tuple[str, ...]], longest: int, characters: bool) -> int:
    """The ordinary maximum matching: at each unit the longest entry tried first, a set lookup per length."""
    found = 0
    for line in lines:
        units = tokenize(line, characters)
        i = 0
        while i < len(units):
            for n in range(min(longest, len(units) - i), 0, -1):
                if tuple(units[i : i + n]) in entries:
                    found += 1
                    i += n
                    break
            else:
                i += 1
    return found


def timed(function, *args) -> tuple[Any, float]:
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    units = language_segmentation(args.lang)
    settings = SETTINGS[units]
    corpus = prepare_language(args.lang, (), None)
    path = corpus.text_path("train")
    lines = path.read_text(encoding="utf-8").splitlines()
    characters = sum(map(len, lines))
    print(f"{args.lang}: {len(lines):,} documents, {characters:,} characters ({units}); settings {settings}")

    with PeakMemory() as peak:
        started = time.perf_counter()
        text = unit_text(text_documents(path, units == "characters"))
        table = discover(text, settings, "" if units == "characters" else " ")
        discovery_seconds = time.perf_counter() - started
    print(f"discovery, whole text: {len(table):,} entries from {text.size:,} units in {discovery_seconds:.1f} s, "
          f"peak RSS {peak.rss_mb:,.0f} MB (RssAnon {peak.anon_mb:,.0f} MB)")

    sample = lines[: args.sample]
    sample_units = [tokenize(line, units == "characters") for line in sample]
    joiner = "" if units == "characters" else " "
    _, ours_sample = timed(lambda: discover(unit_text(sample_units), settings, joiner, progress=False))
    _, counter_sample = timed(counter_discovery, sample_units, settings.longest, settings.shortest)
    sample_chars = sum(map(len, sample))
    print(f"discovery, first {len(sample):,} documents ({sample_chars:,} characters): ours {ours_sample:.2f} s, "
          f"Python Counters {counter_sample:.2f} s: {counter_sample / ours_sample:.1f}x")

    lexicon = Lexicon(units, tuple(split_entry(entry, units) for entry in table["entry"]), tuple(table["score"]))
    rates = {}
    for rule in ("maximum",) if units == "characters" else ("maximum", "daluke"):  # DaLUKE's rule is for words (match.py)
        bulk = LexiconMatcher(lexicon, rule).bulk  # BulkMaximum or BulkDaluke: all lines in pieces, spans as arrays
        with PeakMemory() as matching_peak:
            spans, seconds = timed(lambda b=bulk: len(b.text_arrays(lines)[0]))
        _, json_seconds = timed(lambda r=rule: sum(len(json.dumps(record, ensure_ascii=False)) for record in match_lines(lexicon, r, lines)))
        rates[rule] = {"spans": spans, "seconds": round(seconds, 2), "chars_per_second": round(characters / seconds),
                       "with_json_lines_chars_per_second": round(characters / json_seconds),
                       "peak_rss_mb": round(matching_peak.rss_mb or 0), "peak_rss_anon_mb": round(matching_peak.anon_mb or 0)}
        print(f"matching ({rule}), whole text: {spans:,} spans in {seconds:.1f} s, {characters / seconds / 1e6:.2f} M characters/s, "
              f"peak RSS {matching_peak.rss_mb:,.0f} MB (as match-lexicon's JSON lines: {characters / json_seconds / 1e6:.2f} M characters/s)")
    entries = set(lexicon.entries)
    longest = max(map(len, entries))
    bulk = BulkMaximum(lexicon)
    sample_ours, ours_seconds = timed(lambda: len(bulk.text_arrays(sample)[0]))
    sample_python, python_seconds = timed(python_maximum, sample, entries, longest, units == "characters")
    print(f"matching (maximum), first {len(sample):,} documents: ours {sample_chars / ours_seconds / 1e6:.2f} M chars/s "
          f"({sample_ours:,} spans), Python set lookups {sample_chars / python_seconds / 1e6:.2f} M chars/s ({sample_python:,} spans): "
          f"{python_seconds / ours_seconds:.1f}x")

    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[args.lang] = {
        "machine": machine(1),
        "documents": len(lines), "characters": characters, "units": units, "settings": settings.__dict__, "joiner": joiner,
        "discovery": {"entries": len(table), "units": text.size, "seconds": round(discovery_seconds, 1),
                      "peak_rss_mb": round(peak.rss_mb or 0), "peak_rss_anon_mb": round(peak.anon_mb or 0)},
        "discovery_sample": {"documents": len(sample), "characters": sample_chars, "ours_seconds": round(ours_sample, 2),
                             "counter_seconds": round(counter_sample, 2), "ratio": round(counter_sample / ours_sample, 1)},
        "matching": rates,
        "matching_sample": {"ours_chars_per_second": round(sample_chars / ours_seconds),
                            "python_chars_per_second": round(sample_chars / python_seconds), "ratio": round(python_seconds / ours_seconds, 1)},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    from flairsuite.files.atomic import write_json

    write_json(RESULTS, results)
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    run_main(main)
