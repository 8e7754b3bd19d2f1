"""One entity per word cut at a line end: after decoding, the tokens of a cut word (`Soph` `¬` `okles`, its pieces and
break marks, `flairsuite.corpora.break_marks`) get the tags of one word.

A tagger labels the tokens as they are; where the character LMs read the cut word whole, every token of it has the
same embedding, and a tagger that never saw that tags each piece as an entity of its own (`B-pers` `B-pers` `B-pers`):
the name found, the span split. The rule: a cut word takes the type of its first token tagged other than O; its first
token keeps `I-` where it continues an entity from the word before, else `B-`; its other tokens `I-`; a word whose
tokens are all O stays O. Scored on AjMC dev with synthetic cuts of every entity word (`benchmarks/line_end_breaks.py`,
a BiLSTM-CRF trained uncut): strict F1 63.63 with the LMs reading joined and without the rule, 87.55 with it (uncut:
87.04); reading token by token, 73.82 without and 82.71 with it. `flairsuite tag` and `evaluate` apply it wherever a
corpus marks breaks (`line_break`), to the tags they score and write; elsewhere nothing changes.
"""

from collections.abc import Mapping, Sequence


def cut_word_groups(marks: Sequence[int]) -> list[list[int]]:
    """The token indices of each cut word: a mark with the piece before and after it, chains (`a ¬ b ¬ c`) as one."""
    groups: list[list[int]] = []
    for mark in sorted(marks):
        if groups and groups[-1][-1] >= mark - 1:  # this mark's left piece is the previous one's right piece
            groups[-1].extend(range(groups[-1][-1] + 1, mark + 2))
        else:
            groups.append([mark - 1, mark, mark + 1])
    return groups


def one_entity_per_word(tags: Sequence[str], marks: Sequence[int]) -> list[str]:
    """`tags` with the tokens of each cut word (`marks`: the sentence's break marks) made one word's tags."""
    found = list(tags)
    for group in cut_word_groups(marks):
        kinds = [tags[i][2:] for i in group if tags[i] != "O"]
        if not kinds:
            found[group[0] : group[-1] + 1] = ["O"] * len(group)
            continue
        first = tags[group[0]] if tags[group[0]] == f"I-{kinds[0]}" else f"B-{kinds[0]}"
        found[group[0] : group[-1] + 1] = [first] + [f"I-{kinds[0]}"] * (len(group) - 1)
    return found


def whole_words(tags: Sequence[Sequence[str]], breaks: Mapping[int, Sequence[int]]) -> list[list[str]]:
    """Per sentence, `one_entity_per_word` where `breaks` (sentence index: its marks) has marks; the others as they are."""
    return [one_entity_per_word(sentence, breaks[index]) if breaks.get(index) else list(sentence) for index, sentence in enumerate(tags)]
