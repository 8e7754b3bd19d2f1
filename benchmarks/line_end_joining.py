"""Which rule tells a word broken at a line end ("Ber-\\nlin") from a hyphenated compound ("Lasker-\\nSchüler")?

    python benchmarks/line_end_joining.py                      # $FLAIRSUITE_CORPORA, else corpora/
    python benchmarks/line_end_joining.py --corpora-dir DIR --paragraphs 4000 --seed 1

The German raw-text sets of the registry (`raw-de`: ELTeC novels 1840-1920, 10kGNAD news) hold no line-broken text
(one paragraph per line), so line-broken text is made from them: every fifth novel and every fifth news article is
held out, and its paragraphs are set in lines of 35 to 75 characters (a width drawn per paragraph), greedily, as a
hand or a typesetter breaks them: a word that does not fit is broken at its last hyphen that fits (a compound:
"Charakter-|Studie", truth **keep** the hyphen), else at the last syllable-ish position that fits (German's rules of
thumb: between two vowels' consonants before the last one, "Ber-|lin", "Sindels-|dorf", one consonant goes to the
next syllable, "Wa-|gen", ch/ck/sch/ph/th/qu stay together; at least two letters on either side; truth **join**), else
it goes to the next line; a word written with a trailing hyphen before a space ("Haus- und Gartenarbeit", a suspended
compound) may end a line as it is (truth **leave**: the line break stands for the space). Every hyphen before a line
break of the made text is one case, with the letters before it (left) and after the break (right).

The lexicon is the word counts of the other novels and articles (case-folded words of letters, and "a-b" for each
hyphen between two words of a compound), so a name of a held-out novel is as unknown to it as a letter's names are.

The rules (`flairsuite.corpora.line_ends` implements the one chosen; --min-count prunes the lexicon as a shipped one
would be pruned):

- (a) capitalisation: keep when the right part starts with a capital and is not all capitals, or the left part is an
  abbreviation in capitals ("US-|geführt"), else join;
- (b) lexicon: join when the joined word is at least as frequent as the hyphenated pair and occurs at all, keep when
  the pair is more frequent, join when the lexicon knows neither;
- (c) both: the lexicon where it knows either form, else the capitalisation rule;
- "+ conj": any of them, but a right part that is a conjunction ("und", "oder", ...) leaves the break as it is
  ("(a) + conj" is `flairsuite.corpora.line_ends.decision`, the rule shipped).

A second table takes the held-out text as it is: every hyphen of a compound is a keep case, every hyphen before a
space and a lower-case word ("Haus- und", "Vor- oder") a leave case, and as many join cases are words of at least
five letters (drawn by their occurrences) broken at one of their syllable-ish positions.

Prints one table per source and the total: accuracy per truth (the number of cases in brackets) and over all cases.
"""

import argparse
import csv
import gzip
import io
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flairsuite.corpora.line_ends import CONJUNCTIONS, capitalised_compound, decision  # noqa: E402

LETTERS = r"[^\W\d_]"
WORD = re.compile(rf"{LETTERS}+(?:-{LETTERS}+)*")
VOWELS = "aeiouäöüyAEIOUÄÖÜY"
NUCLEI = ("ei", "ai", "au", "eu", "äu", "ie", "aa", "ee", "oo")
UNITS = ("sch", "ch", "ck", "ph", "th", "qu")
TRUTHS = ("join", "keep", "leave")
HELD_OUT = 5  # every fifth document is held out


def novels(path: Path) -> list[str]:
    """The ELTeC novels (separated by a blank line), each as its text (one paragraph a line)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [novel for novel in handle.read().split("\n\n") if novel.strip()]


def articles(path: Path) -> list[str]:
    """The 10kGNAD news articles (`label;'text'` lines)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [row[1] for row in csv.reader(io.StringIO(handle.read()), delimiter=";", quotechar="'") if len(row) > 1]


def lexicon(documents: list[str]) -> Counter:
    """Case-folded word counts, and "a-b" for each hyphen between two words of a compound."""
    counts: Counter = Counter()
    for document in documents:
        for word in WORD.findall(document.casefold()):
            if "-" in word:
                parts = word.split("-")
                counts.update(f"{a}-{b}" for a, b in zip(parts, parts[1:]))
            else:
                counts[word] += 1
    return counts


def syllable_breaks(word: str) -> list[int]:
    """Positions inside a word of letters where a syllable-ish break may fall (module docstring)."""
    units, i = [], 0  # (start, is vowel nucleus)
    while i < len(word):
        lower = word[i:].lower()
        unit = next((u for u in (*NUCLEI, *UNITS) if lower.startswith(u)), lower[0])
        units.append((i, unit[0] in VOWELS.lower() and unit not in UNITS))
        i += len(unit)
    vowels = [k for k, (_, vowel) in enumerate(units) if vowel]
    breaks = []
    for a, b in zip(vowels, vowels[1:]):
        if b - a >= 2:  # consonants between: the last one goes to the next syllable
            breaks.append(units[b - 1][0])
    return [p for p in breaks if 2 <= p <= len(word) - 2]


def break_options(word: str) -> list[tuple[str, str, str]]:
    """(text ending the line, text starting the next, truth) for each place a word may be broken."""
    core = re.match(rf"^(\W*)({LETTERS}+(?:-{LETTERS}+)*)(\W*)$", word)
    if core is None:
        return []
    lead, letters, tail = core.groups()
    options = []
    offset = 0
    parts = letters.split("-")
    for index, part in enumerate(parts):
        if index:
            cut = len(lead) + offset - 1  # after the compound's hyphen
            if len(parts[index - 1]) >= 2 and len(part) >= 2:
                options.append((word[: cut + 1], word[cut + 1 :], "keep"))
        for position in syllable_breaks(part):
            cut = len(lead) + offset + position
            options.append((word[:cut] + "-", word[cut:], "join"))
        offset += len(part) + 1
    return options


def labelled_cases(paragraph: str, width: int) -> Iterator[tuple[str, str, str]]:
    """(left, right, truth) of each line-end hyphen, the truth known from how the break was made."""
    lines, line = [], ""
    made: list[tuple[str, str, str]] = []
    for word in paragraph.split():
        if not line or len(line) + 1 + len(word) <= width:
            line = f"{line} {word}" if line else word
            continue
        room = width - len(line) - 1
        fitting = [option for option in break_options(word) if len(option[0]) <= room]
        if fitting:
            head, rest, truth = max(fitting, key=lambda option: len(option[0]))
            lines.append(f"{line} {head}")
            made.append((head, rest, truth))
            line = rest
        else:
            lines.append(line)
            if re.search(rf"{LETTERS}-$", line):  # "Haus-" before a space ends the line as it is
                made.append((line.rsplit(" ", 1)[-1], word, "leave"))
            line = word
    for head, rest, truth in made:
        left = re.search(rf"({LETTERS}+)-$", head)
        right = re.match(rf"^({LETTERS}+)", rest)
        if left is not None and right is not None:
            yield left.group(1), right.group(1), truth


SUSPENDED = re.compile(rf"({LETTERS}+)- ({LETTERS}+)")
PLAIN_WORD = re.compile(rf"(?<![-\w]){LETTERS}{{5,}}(?![-\w])")


def targeted_cases(documents: list[str], rng: random.Random) -> list[tuple[str, str, str]]:
    """Every hyphen of a compound in `documents` as a keep case, every "a- b" (b lower-case) as a leave case, and as many join cases:
    words of at least five letters (drawn by their occurrences) broken at a syllable-ish position drawn among theirs."""
    keep, leave, words = [], [], []
    for document in documents:
        for word in WORD.findall(document):
            parts = word.split("-")
            keep.extend((a, b, "keep") for a, b in zip(parts, parts[1:]) if len(a) >= 2 and len(b) >= 2)
        leave.extend((a, b, "leave") for a, b in SUSPENDED.findall(document) if b[:1].islower())
        words.extend(PLAIN_WORD.findall(document))
    join = []
    for word in rng.sample(words, min(len(words), 4 * len(keep))):
        breaks = syllable_breaks(word)
        if breaks and len(join) < len(keep):
            cut = rng.choice(breaks)
            join.append((word[:cut], word[cut:], "join"))
    return keep + leave + join


def rule_capitalisation(left: str, right: str, counts: Counter) -> str:
    return "keep" if capitalised_compound(left, right) else "join"


def rule_lexicon(left: str, right: str, counts: Counter) -> str:
    joined, pair = counts[(left + right).casefold()], counts[f"{left}-{right}".casefold()]
    return "keep" if pair > joined else "join"


def rule_both(left: str, right: str, counts: Counter) -> str:
    joined, pair = counts[(left + right).casefold()], counts[f"{left}-{right}".casefold()]
    if joined or pair:
        return "keep" if pair > joined else "join"
    return rule_capitalisation(left, right, counts)


def with_conjunctions(rule: Callable[[str, str, Counter], str]) -> Callable[[str, str, Counter], str]:
    return lambda left, right, counts: "leave" if right in CONJUNCTIONS else rule(left, right, counts)


RULES = {
    "(a) capitalisation": rule_capitalisation,
    "(b) lexicon": rule_lexicon,
    "(c) both": rule_both,
    "(a) capitalisation + conj (shipped)": lambda left, right, counts: decision(left, right),
    "(b) lexicon + conj": with_conjunctions(rule_lexicon),
    "(c) both + conj": with_conjunctions(rule_both),
}


def table(title: str, found: list[tuple[str, str, str]], counts: Counter) -> str:
    """Accuracy of every rule per truth and overall, as a Markdown table."""
    totals = Counter(truth for _, _, truth in found)
    unknown = sum(1 for left, right, _ in found if not counts[(left + right).casefold()] and not counts[f"{left}-{right}".casefold()])
    head = " | ".join(f"{truth} ({totals[truth]:,})" for truth in TRUTHS)
    lines = [f"{title}: {len(found):,} line-end hyphens, {unknown:,} ({unknown / max(len(found), 1):.1%}) with neither form in the lexicon",
             "", f"| rule | {head} | all ({len(found):,}) |", "|---|" + "--:|" * (len(TRUTHS) + 1)]
    for name, rule in RULES.items():
        right_by = Counter(truth for left, right, truth in found if rule(left, right, counts) == truth)
        cells = [f"{right_by[truth] / totals[truth]:.1%}" if totals[truth] else "–" for truth in TRUTHS]
        lines.append(f"| {name} | {' | '.join(cells)} | {sum(right_by.values()) / max(len(found), 1):.1%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora-dir", type=Path, default=Path(os.environ.get("FLAIRSUITE_CORPORA", "corpora")))
    parser.add_argument("--paragraphs", type=int, default=4000, help="held-out novel paragraphs set in lines (all held-out articles are)")
    parser.add_argument("--min-count", type=int, default=1, help="lexicon entries seen fewer times are dropped (a shipped lexicon's pruning)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    sources = {"novels (ELTeC)": novels(args.corpora_dir / "raw_de_eltec" / "eltec_deu.txt.gz"),
               "news (10kGNAD)": articles(args.corpora_dir / "raw_de_10kgnad" / "test.csv.gz")}
    kept = [doc for docs in sources.values() for i, doc in enumerate(docs) if i % HELD_OUT != HELD_OUT - 1]
    counts = lexicon(kept)
    if args.min_count > 1:
        counts = Counter({word: n for word, n in counts.items() if n >= args.min_count})
    print(f"lexicon: {len(counts):,} entries from {len(kept):,} documents (min count {args.min_count}); "
          f"held out: every {HELD_OUT}th document; seed {args.seed}", file=sys.stderr)
    everything, targeted = [], []
    for number, (name, documents) in enumerate(sources.items()):
        rng = random.Random(args.seed * 100 + number)
        held = [doc for i, doc in enumerate(documents) if i % HELD_OUT == HELD_OUT - 1]
        paragraphs = [p for doc in held for p in doc.split("\n") if len(p) >= 200]
        if len(paragraphs) > args.paragraphs:
            paragraphs = rng.sample(paragraphs, args.paragraphs)
        found = [case for p in paragraphs for case in labelled_cases(p, rng.randint(35, 75))]
        everything.extend(found)
        print(table(f"set in lines: {name}, {len(paragraphs):,} paragraphs", found, counts) + "\n")
        targeted.extend(targeted_cases(held, rng))
    print(table("set in lines: all", everything, counts) + "\n")
    print(table("compounds and words of the held-out text (every compound hyphen, as many words)", targeted, counts))
    print(f"{time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
