"""Words cut at line ends in a labelled corpus: what a tagger loses, and what reading them whole wins back (issue 76).

    FLAIRSUITE_HOME=. python benchmarks/line_end_breaks.py      # $FLAIRSUITE_CORPORA, the ajmc-subwords seed-1 tagger
    python benchmarks/line_end_breaks.py --model PATH --share 0.05 --entity-share 1 --seed 1 --threads 1

OCR'd newspapers in HIPE's TSV cut words at line ends into `piece1` `¬` `piece2`, the hyphen a token flagged `EndOfLine`
in MISC. AjMC (`hipe-ajmc-de`) has no such marks, so its dev and test files are cut here, seeded, into two variants:

- **5 % of words**: `--share` of the tokens with at least `--min-letters` letters (6);
- **entity words**: `--entity-share` (all) of the tokens inside entities with at least that many letters;

each cut at an inner position drawn among those where `flairsuite.corpora.line_ends.decision` joins (two letters at
least on either side; a cut whose second piece would be a conjunction, or after capitals, is not drawn) into `piece1`
(`NoSpaceAfter`), `¬` (`EndOfLine|NoSpaceAfter`) and `piece2` (the word's own MISC). The tags follow the word's: `B-X`
on the first piece and `I-X` after it, `I-X` on all three inside an entity, `O` outside; so the gold entities are the
original spans mapped to the cut tokens. The files are read as an own corpus of format `hipe` (`line_break:
MISC:EndOfLine`), and the tagger (trained on the uncut AjMC, READ-ONLY here) tags them through `evaluate`'s fast path:

- **original**: the uncut files (the registry's `hipe-ajmc-de`);
- **cut, as read today**: the tagger as saved (its LMs read `Ber ¬ lin`);
- **cut, LMs joined**: its character LMs reading each cut word whole (`flairsuite.embeddings.joined.with_joined_breaks`;
  what a tagger trained on a corpus with `line_break` does itself); its word vectors look up the tokens as they are;
- **cut, LMs and word vectors joined**: also the word vectors of every token of a cut word looked up for the whole word
  (done here only, for the measurement: the suite's fastText embeddings look up the tokens as they are);
- **+ one entity per cut word**: the tags of "as read today" and of "LMs joined" with the rule `tag` and `evaluate` apply
  after decoding where a corpus marks breaks (`flairsuite.tagging.cut_words`): the tokens of a cut word take the type of
  the first of them that is tagged, `B-X` on the first piece (`I-X` where it continues an entity) and `I-X` after it;
  none tagged: all `O`.

The tagger was trained on uncut text, with LMs that read tokens as they are: reading a cut word whole gives each of its
tokens the same vector, which it never saw on adjacent tokens (a tagger trained with `line_break` on cut text learns
that). The last two columns separate what the joined reading recognises from how the tagger cuts the spans.

Prints the cut tokens and the entities they touch, and micro strict entity F1 (seqeval, IOB2) per split and condition.
With `--write DIR` the cut files stay in DIR, train cut by the same rule too, for training taggers on them (`{path:
DIR/entities/, format: hipe}` in an experiment reads them joined, `line_break: null` beside it as they are): not part of
this script's few minutes; benchmarks/README.md has such a measurement (map-crf, 3 seeds).
"""

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from common import run_main  # noqa: E402
from flair.data import Sentence  # noqa: E402

from flairsuite.corpora.break_marks import marks_of, reading_hyphen  # noqa: E402
from flairsuite.corpora.labeled import read_splits, split_files  # noqa: E402
from flairsuite.corpora.loading import linked, with_breaks  # noqa: E402
from flairsuite.corpora.own import own_corpus  # noqa: E402
from flairsuite.corpora.registry import DatasetSpec, dataset  # noqa: E402
from flairsuite.corpora.tags import bio_spans  # noqa: E402
from flairsuite.embeddings.broken_words import read_words  # noqa: E402
from flairsuite.embeddings.charlm import CharLMFeatures  # noqa: E402
from flairsuite.embeddings.joined import with_joined_breaks  # noqa: E402
from flairsuite.inference.saved_tagger import load_tagger  # noqa: E402
from flairsuite.inference.tagger import FastTagger  # noqa: E402
from flairsuite.tagging.cut_words import one_entity_per_word  # noqa: E402
from flairsuite.tagging.scoring import strict_scores  # noqa: E402

MODEL = Path(__file__).resolve().parent.parent / "results/ajmc-subwords/ajmc-de/proposed+subwords/bilstm-crf/seed-1/model.pt"
MARK = "¬"
SPLITS = ("dev", "test")


def letters(token: str) -> int:
    return sum(char.isalpha() for char in token)


def cut_points(token: str) -> list[int]:
    """The inner positions where `token` may be cut (module docstring): two characters at least on either side, and a
    cut the line-end rule joins."""
    return [k for k in range(2, len(token) - 1) if reading_hyphen(token[:k], MARK, token[k:]) == ""]


def cut_line(fields: list[str], at: int) -> list[str]:
    """The HIPE token line `fields` cut at `at` into three lines: piece, mark, piece (module docstring)."""
    token, tag, misc = fields[0], fields[1], fields[-1]
    inside = "O" if tag == "O" else f"I-{tag[2:]}"
    pieces = [(token[:at], tag, "NoSpaceAfter"), (MARK, inside, "EndOfLine|NoSpaceAfter"), (token[at:], inside, misc)]
    return ["\t".join([text, label, *fields[2:-1], flags]) + "\n" for text, label, flags in pieces]


Chooser = Callable[[str, str, random.Random], bool]  # (token, tag, the split's random numbers) -> cut it?


def cut_file(source: Path, target: Path, chosen: Chooser, rng: random.Random) -> int:
    """`source` (HIPE TSV) with the token lines `chosen(token, tag, rng)` picks cut, written to `target`; how many were cut."""
    cut = 0
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for number, line in enumerate(lines):
            fields = line.rstrip("\n").split("\t")
            if number == 0 or line.startswith("#") or not line.strip() or not chosen(fields[0], fields[1], rng):
                out.write(line)
                continue
            points = cut_points(fields[0])
            if not points:
                out.write(line)
                continue
            out.writelines(cut_line(fields, rng.choice(points)))
            cut += 1
    return cut


def variant(spec: DatasetSpec, root: Path, folder: Path, chosen: Chooser, seed: int, splits: tuple[str, ...]) -> tuple[DatasetSpec, dict[str, int]]:
    """The files of `splits` cut by `chosen` into `folder`, as an own corpus of format hipe; the tokens cut per split. Each
    split draws from its own random numbers (seed and split), so dev and test are cut alike with or without train."""
    folder.mkdir(parents=True)
    cut = {}
    for split, paths in split_files(spec, root, splits).items():
        cut[split] = cut_file(paths[0], folder / paths[0].name, chosen, random.Random(f"{seed}-{split}"))
    return own_corpus({"path": str(folder), "format": "hipe"}, folder, needed=splits, split_unsplit=False), cut


def sentences_of(spec: DatasetSpec, root: Path, split: str) -> tuple[list[Sentence], list[list[str]]]:
    """The split's sentences as `evaluate` builds them (linked in their documents, break marks labelled) and their gold tags."""
    data = read_splits(spec, root, [split])[split]
    return linked([with_breaks(Sentence(list(s.tokens)), s) for s in data.sentences], data.sentences), [s.tags for s in data.sentences]


def touched(gold: list[list[str]], sentences: list[Sentence]) -> tuple[int, int]:
    """(entities with a cut word, all entities)."""
    hit = total = 0
    for tags, sentence in zip(gold, sentences):
        marks = set(marks_of(sentence))
        for start, end, _ in bio_spans(tags):
            total += 1
            hit += any(start <= i < end for i in marks)
    return hit, total


class JoinedWords:
    """A word-vector featurizer looking up every token of a cut word as the whole word (the benchmark's fourth condition)."""

    def __init__(self, featurizer: Callable[[list[Sentence]], torch.Tensor]) -> None:
        self.featurizer = featurizer

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        return self.featurizer([self.respelled(sentence) for sentence in sentences])

    @staticmethod
    def respelled(sentence: Sentence) -> Sentence:
        words = read_words(sentence)
        if words is None:
            return sentence
        return Sentence([words.texts[owner] for owner in words.owners])


def predictions(tagger: FastTagger, sentences: list[Sentence]) -> list[list[str]]:
    return [[tag for tag, _ in tags] for tags in tagger.tag(sentences)]


def f1(gold: list[list[str]], predicted: list[list[str]], sentences: list[Sentence], rule: bool = False) -> float:
    if rule:
        predicted = [one_entity_per_word(tags, marks_of(sentence)) for tags, sentence in zip(predicted, sentences)]
    return strict_scores(gold, predicted)["f1"] * 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=MODEL, help="a saved tagger trained on AjMC (read only; the default is made by "
                        "`flairsuite tag experiments/ajmc-subwords.yaml`)")
    parser.add_argument("--corpora-dir", type=Path, default=Path(os.environ.get("FLAIRSUITE_CORPORA", "corpora")))
    parser.add_argument("--share", type=float, default=0.05, help="share of the tokens with --min-letters letters cut")
    parser.add_argument("--entity-share", type=float, default=1.0, help="share of the entity tokens with --min-letters letters cut")
    parser.add_argument("--min-letters", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--write", type=Path, default=None,
                        help="keep the cut files, train cut too, in DIR/words/ and DIR/entities/ (to train a tagger on them with format: hipe)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    spec, root = dataset("hipe-ajmc-de"), args.corpora_dir

    def words(token: str, tag: str, rng: random.Random) -> bool:
        return letters(token) >= args.min_letters and rng.random() < args.share

    def entity_words(token: str, tag: str, rng: random.Random) -> bool:
        return tag != "O" and letters(token) >= args.min_letters and rng.random() < args.entity_share

    model = load_tagger(args.model)
    as_saved = FastTagger(model)  # its featurizers keep the embeddings as saved
    with_joined_breaks(model.embeddings)  # in place: the LMs of `as_saved` stay as they were
    joined = FastTagger(model)
    both = FastTagger(model)
    both.featurizers = [feature if isinstance(feature, CharLMFeatures) else JoinedWords(feature) for feature in both.featurizers]
    print(f"{args.model}: loaded in {time.perf_counter() - started:.0f} s; {args.threads} thread(s), load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as temp:
        folder, splits = (args.write, ("train", *SPLITS)) if args.write else (Path(temp), SPLITS)
        variants = {
            f"{args.share:.0%} of words": variant(spec, root, folder / "words", words, args.seed, splits),
            f"entity words ({args.entity_share:.0%})": variant(spec, root, folder / "entities", entity_words, args.seed, splits),
        }
        for split in SPLITS:
            original, gold = sentences_of(spec, root, split)
            base = f1(gold, predictions(as_saved, original), original)
            same = f1(gold, predictions(joined, original), original)  # no marks: the joined reading changes nothing
            for name, (cut_spec, cut) in variants.items():
                sentences, cut_gold = sentences_of(cut_spec, root, split)
                hit, total = touched(cut_gold, sentences)
                today, lms, words_too = (predictions(tagger, sentences) for tagger in (as_saved, joined, both))
                scores = [f1(cut_gold, today, sentences), f1(cut_gold, lms, sentences), f1(cut_gold, words_too, sentences),
                          f1(cut_gold, today, sentences, rule=True), f1(cut_gold, lms, sentences, rule=True)]
                rows.append((name, split, cut[split], f"{hit} / {total}", base, *scores, same))
    print("| cut | split | cut tokens | entities cut / all | original | cut, as read today | cut, LMs joined | cut, LMs + word vectors joined "
          "| as read today + one entity per cut word | LMs joined + one entity per cut word |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name, split, cut, hit, *scores, same in rows:
        print(f"| {name} | {split} | {cut} | {hit} | " + " | ".join(f"{score:.2f}" for score in scores) + " |")
    unchanged = all(abs(row[4] - row[-1]) < 1e-9 for row in rows)
    print(f"\nuncut files through the joined reading: {'the same F1' if unchanged else 'a different F1 (!)'}; "
          f"micro strict entity F1 (%), evaluate's fast path; seed {args.seed}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    run_main(lambda: main() or 0)
