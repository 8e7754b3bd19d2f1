"""The German sentence splitter (issue 74): dates, Roman numerals, initials and abbreviations stay inside a sentence,
real sentence ends still split, sentences and tokens sit at their offsets in the text as Flair's segtok splitter
puts them, and abbreviations are learned from the text (or a corpus) by the module's rule."""

import pytest
from flair.data import Sentence
from flair.splitter import SegtokSentenceSplitter
from flair.tokenization import SegtokTokenizer

from flairsuite.corpora.segmentation import split_text
from flairsuite.corpora.sentence_splitter import BOUNDARY, AbbreviationLearner, GermanSentenceSplitter, learn_abbreviations

LETTER = (
    "Berlin, den 14. März 1913.\n\nLieber Herr Walden!\r\nIch komme am 3. Mai 1913 nach Berlin. Fz. Marc kam gestern,\n"
    "F. W. Murnau auch.  Dr. Müller   schreibt z. B. über Kap. IV. der Schrift (vgl. S. 12).\n \nWas meinen Sie? "
    "„Ich komme.“ Am 1. d. M. fährt Friedrich II. von Preußen u. s. w. Dann nicht mehr…\n\nMit herzl. Grüßen\nIhr A. Macke\n"
)


def texts(sentences: list[Sentence]) -> list[str]:
    return [sentence.to_original_text() for sentence in sentences]


def pieces(text: str, sentences: list[Sentence]) -> list[str]:
    """Each sentence's characters in `text`, from its first token to its last."""
    return [text[s.start_position + s[0].start_position : s.start_position + s[-1].end_position] for s in sentences]


@pytest.mark.parametrize(
    "text",
    [
        "Ich komme am 3. Mai 1913 nach Berlin.",
        "Fz. Marc kam.",
        "Gruß Ihr Fz. Marc und Fz Marc.",  # the list holds "Fz" though the text has it without a period too
        "Er kam den 12ten Julius 1799 und am 2. Jenner 1800 an.",
        "Am 3. 7bris 1799 und am 14. Hornung schrieb er.",
        "Er schrieb am 1. d. M. an Walden.",
        "Im 19. Jahrhundert blühte die Kunst.",
        "Friedrich II. von Preußen starb.",
        "Kap. IV. lehrt das.",
        "Wilhelm II. Kaiser und König kam.",
        "A. Macke traf F. W. Murnau in Sindelsdorf.",
        "Dr. Müller, Prof. Meier, Hr. Walden und Fr. Walden kamen nach St. Gallen.",
        "Nr. 5 steht in Bd. 3 auf S. 12, vgl. z. B. die Briefe, d. h. alle.",
        "Bilder, Zeichnungen u. s. w. kamen an, usw. gingen, etc. blieben.",
        "Herr R… aus S… kam.",
        "Am 9. Mai. 1919 kam er.",
    ],
)
def test_dates_numerals_initials_and_abbreviations_stay_in_one_sentence(text: str) -> None:
    assert texts(split_text(text)) == [text]
    before = SegtokSentenceSplitter().split(text)
    if text.startswith(("Ich komme", "Fz. Marc kam")):
        assert len(before) > 1  # what issue 74 reported of segtok


def test_real_sentence_ends_still_split() -> None:
    text = "Er kam! Sie ging? Ja. Der Zug fuhr um 1913. Dann kam er nicht\n\nmehr. „Ich komme.“ Dann ging sie… Gut. Es ging u. s. w. Das Ende."
    assert texts(split_text(text)) == [
        "Er kam!",
        "Sie ging?",
        "Ja.",
        "Der Zug fuhr um 1913.",
        "Dann kam er nicht",  # a blank line always ends a sentence
        "mehr.",
        "„Ich komme.“",
        "Dann ging sie…",
        "Gut.",
        "Es ging u. s. w.",
        "Das Ende.",
    ]
    assert texts(split_text("Ich komme am 3. Mai 1913 nach Berlin. Der Zug ist voll.")) == ["Ich komme am 3. Mai 1913 nach Berlin.", "Der Zug ist voll."]
    assert texts(split_text("Es war schön. er konnte nicht. aa) Nach § 14 Abs. 1 gilt es.")) == [
        "Es war schön.",
        "er konnte nicht.",
        "aa) Nach § 14 Abs. 1 gilt es.",
    ]


def test_sentences_and_tokens_sit_at_their_offsets_as_segtoks_do() -> None:
    sentences = split_text(LETTER)
    assert pieces(LETTER, sentences) == [
        "Berlin, den 14. März 1913.",
        "Lieber Herr Walden!",
        "Ich komme am 3. Mai 1913 nach Berlin.",
        "Fz. Marc kam gestern,\nF. W. Murnau auch.",
        "Dr. Müller   schreibt z. B. über Kap. IV. der Schrift (vgl. S. 12).",
        "Was meinen Sie?",
        "„Ich komme.“",
        "Am 1. d. M. fährt Friedrich II. von Preußen u. s. w.",
        "Dann nicht mehr…",
        "Mit herzl. Grüßen\nIhr A. Macke",
    ]
    for sentence in sentences:
        assert sentence[0].start_position == 0  # a sentence starts at its first token, as segtok's
        for token in sentence:
            start = sentence.start_position + token.start_position
            assert LETTER[start : start + len(token.text)] == token.text
        # the tokens are Flair's segtok tokenizer's of the sentence's text
        text = LETTER[sentence.start_position : sentence.start_position + sentence[-1].end_position]
        assert [t.text for t in sentence] == [t.text for t in Sentence(text, use_tokenizer=SegtokTokenizer())]
    assert [s.previous_sentence() for s in sentences[1:]] == sentences[:-1]  # linked as one document
    plain = "Am Montag kam Anna nach Berlin. Otto blieb in Wien.\n\nDann fuhr er."
    ours, segtok = split_text(plain), SegtokSentenceSplitter().split(plain)
    assert [(s.start_position, [(t.text, t.start_position, t.end_position) for t in s]) for s in ours] == [
        (s.start_position, [(t.text, t.start_position, t.end_position) for t in s]) for s in segtok
    ]
    assert split_text("") == [] and split_text("  \n\n ") == []


def test_abbreviations_are_learned_from_the_text_by_the_rule() -> None:
    # no vowel, never without a period: an abbreviation; the text has it without one too: none
    assert texts(split_text("Gruß an Hrb. Walden kam nicht.")) == ["Gruß an Hrb. Walden kam nicht."]
    assert texts(split_text("Hrb kam heute. Gruß an Hrb. Walden kam nicht.")) == ["Hrb kam heute.", "Gruß an Hrb.", "Walden kam nicht."]
    # with vowels: learned where the text has it inside a sentence (before a number, a lower-case word, a comma)
    assert texts(split_text("Er las Thuk. 2, 40 und dann Thuk. Die Rede ist kurz.")) == ["Er las Thuk. 2, 40 und dann Thuk. Die Rede ist kurz."]
    assert texts(split_text("Er las Thuk und dann Thuk. Die Rede ist kurz.")) == ["Er las Thuk und dann Thuk.", "Die Rede ist kurz."]
    assert learn_abbreviations(["Er las Thuk. 2, 40.", "Sie kam nach Wien. Dann ging sie nach Ulm. Ulm ist klein."]) == {"Thuk"}
    # words seen only before sentence ends, acronyms in capitals, words of five letters or more, enumerations: none
    assert learn_abbreviations(["Er war in der SPD. Sie fuhr heim. Dann kam sie zurück. 4. Die Klage."]) == frozenset()
    assert texts(split_text("Er war in der SPD. Dann ging er.")) == ["Er war in der SPD.", "Dann ging er."]


def test_abbreviations_learned_from_a_corpus_are_given_to_the_splitter() -> None:
    text = "Das steht in der Anl. Dort ist alles."
    assert len(split_text(text)) == 2  # "Anl" is not learned from this text alone
    corpus = learn_abbreviations(["Siehe Anl. 3 und die Anl., die folgt.", "Er kam."])
    assert "Anl" in corpus
    assert texts(split_text(text, abbreviations=corpus)) == [text]
    assert texts(GermanSentenceSplitter(abbreviations={"Anl"}, learn=False).split(text)) == [text]
    assert len(GermanSentenceSplitter(learn=False).split("Gruß an Hrb. Walden kam nicht.")) == 2


def test_the_learner_counts_a_text_given_in_pieces_as_the_whole() -> None:
    text = LETTER + " Er las Thuk. 2 und Hrb. Walden, Anl. 3; ders. schrieb. " * 3
    whole = learn_abbreviations([text])
    assert {"Thuk", "Hrb", "Anl", "ders"} <= whole
    for size in (1, 2, 7, 40):
        learner = AbbreviationLearner()
        for start in range(0, len(text), size):
            learner.feed(text[start : start + size])
        learner.close()
        assert learner.abbreviations() == whole


def test_a_text_split_from_a_sentence_start_gives_the_whole_texts_sentences() -> None:
    """What `flairsuite.inference.stream` relies on: given the same abbreviations, the split of the text from where a
    sentence starts (`BOUNDARY` after the one before) holds the whole text's later sentences at the same offsets."""
    text = LETTER + "Phil. 241. 620. Ant. 12. 437. Vgl. zu 108.\n\n240. Vgl. Aias. 1913. Dann kam er am 3. Mai. 1. Die Klage."
    splitter = GermanSentenceSplitter(abbreviations=learn_abbreviations([text]), learn=False)
    whole = [(s.start_position, s.to_original_text()) for s in splitter.split(text)]
    for index, sentence in enumerate(splitter.split(text)[:-1]):
        end = sentence.start_position + sentence[-1].end_position
        restart = next((found.end() for found in BOUNDARY.finditer(text, end) if found.start() == end), end)
        rest = [(restart + s.start_position, s.to_original_text()) for s in splitter.split(text[restart:])]
        assert rest == whole[index + 1 :], text[restart : restart + 40]
