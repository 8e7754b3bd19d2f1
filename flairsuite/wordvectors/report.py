"""Text for the `train-fasttext` summary: the OOV table and nearest neighbours of probe words."""

from collections.abc import Iterator

from gensim.models.fasttext import FastTextKeyedVectors

PROBES = {
    "de": ("Berlin", "König", "Gericht", "Montag"),
    "en": ("London", "king", "court", "Monday"),
    "da": ("København", "konge", "domstol", "mandag"),
    "zh": ("京", "帝", "江", "说"),  # Chinese vectors are per character (its segmentation): probes are characters
}


def neighbours(wv: FastTextKeyedVectors, language: str, topn: int = 5) -> dict[str, list[tuple[str, float]]]:
    """The `topn` nearest vocabulary words of each probe word of `language` (an unseen probe by its n-grams)."""
    return {word: [(w, round(float(s), 3)) for w, s in wv.most_similar(word, topn=topn)] for word in PROBES.get(language, ())}


def oov_table(rows: list[dict]) -> Iterator[str]:
    """One line per split: tokens and OOV rates (as Flair looks tokens up) before and after augmentation."""
    yield f"{'dataset':<14}{'split':<7}{'tokens':>10}{'OOV before':>12}{'OOV after':>11}"
    for r in rows:
        yield f"{r['dataset']:<14}{r['split']:<7}{r['tokens']:>10,}{r['oov_before_rate']:>12.2%}{r['oov_after_rate']:>11.2%}"


def neighbour_lines(found: dict[str, list[tuple[str, float]]], unseen: list[str]) -> Iterator[str]:
    """`probe: w1 0.71, w2 0.65, ...`, probes outside the vocabulary marked."""
    for word, near in found.items():
        mark = " (not in vocabulary: n-grams)" if word in unseen else ""
        yield f"  {word}{mark}: " + ", ".join(f"{w} {s:.2f}" for w, s in near)
