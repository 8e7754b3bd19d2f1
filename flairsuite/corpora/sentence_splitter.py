"""Sentence boundaries in German (historical) text that keep dates, Roman numerals, initials and abbreviations whole.

Flair's segtok splitter cuts "Ich komme am 3. Mai 1913 nach Berlin." after "3." and "Fz. Marc kam." after "Fz.";
`GermanSentenceSplitter` decides every boundary by the rules below and tokenises each sentence with Flair's segtok
tokenizer, as `SegtokSentenceSplitter` does: a sentence's `start_position` is the offset of its first character in
the text, its tokens' offsets are in the sentence. `benchmarks/sentence_boundaries.py` measures both on the gold
sentences of Sturm, H. Arendt, LER, AjMC and the walk-through letters.

Where a sentence ends:

- A blank line (two line breaks, spaces between them allowed) always ends a sentence; a single line break is
  whitespace like any other.
- Otherwise a sentence ends only after a run of `.`, `!`, `?` or `…` with any closing quotes or brackets right
  after it (`" ' ” “ ’ ‘ » « ) ]`), followed by whitespace or the end of the text:
  - `!` and `?` always end it;
  - an ellipsis (`…`, two or more periods) ends it unless the next word starts in lower case ("whose... a") or the
    word before is a single letter (a name left out: "Herr R… aus S…");
  - a single period (with or without closing quotes or brackets) after the word W ends it unless W is
    - a number of one or two digits (an ordinal: "3. Mai", "im 19. Jahrhundert", "am 1. d. M."), a number
      before a month name (`MONTHS`, old and new: "Jenner", "Hornung", "Julius", "7bris", ...), or a number that
      follows sentence-final punctuation, a colon, a closing quote or bracket (or starts the text or a paragraph) and
      is no year 1500-2099 (a label: "1. Die Klage", "Phil. 241. 620.", "(Apollod. II 6, 4) 437. Vgl.");
    - a Roman numeral ("Friedrich II. von Preußen", "Kap. IV. lehrt"), a single letter (an initial, "A. Macke",
      "F. W. Murnau", or a piece of "z. B.", "d. h.", "u. s. w."), or letters with periods inside ("z.B.", "i.V.m.");
    - a month name before a number ("9. Mai. 1919");
    - on the list `ABBREVIATIONS` (titles, "Dr.", "Prof.", "Hr.", "Fr.", "St.", "Nr.", "Bd.", "S.", "vgl.", month,
      first-name, legal and bibliographic abbreviations), as written or with its first letter in upper case;
    - an abbreviation learned from the text (below) or given to the splitter;
    except "usw.", "u.s.w.", "u. s. w.", "usf.", "etc.", which end the sentence unless the next word starts in
    lower case.
  W is the text since the last whitespace or hyphen ("BT-Drs." gives "Drs"), opening quotes and brackets left
  out; before a period standing alone (tokenised text: "3 . Mai") it is the word before. A next word in lower case
  does not keep a sentence open after an ordinary word: the letters and the court decisions start sentences so
  ("er konnte", "aa) Nach"), and on the dev splits that choice scored higher on Sturm, H. Arendt, LER and the
  letters (lower on AjMC's commentaries, whose unknown abbreviations it splits after).

Learned abbreviations (`AbbreviationLearner`, `learn_abbreviations`): a word W (letters only, standing on its own:
not part of "z.B." or "3ten") is an abbreviation when the text never has W without a period right after it (the
issue's rule: a token that the text also has without a period is no abbreviation), it has at most four letters, and
either it has no vowel (a, e, i, o, u, y, umlauts, accented vowels: "Hrn.", "Ztg.", "Drs.") and is not an acronym
in capitals ("SPD." may end a sentence), or the text has "W." inside a sentence at least once: followed by a comma,
semicolon or colon, a word in lower case, or a number that is no enumeration's ("Thuk. 2, 40", "geb. 1880", not
"zurück. 4. Die"). A word seen only before sentence ends ("Berlin.") is never learned. The list is not subject to
the rule ("Fz." stays an abbreviation in a letter that also writes "Fz Marc").

The splitter learns from the text it splits, plus the abbreviations it is given (e.g. `learn_abbreviations` over
a corpus); with `learn=False`, from those only. Every other decision reads only the sentence's own text, the next
word and the character before a sentence's first word, so a text split from a sentence start on (as
`flairsuite.inference.stream` splits windows, `BOUNDARY` marking where the next sentence starts) gives the same
sentences as the whole text, given the same abbreviations.
"""

import re
from collections import Counter
from collections.abc import Iterable
from typing import Optional

from flair.data import Sentence
from flair.splitter import SentenceSplitter
from flair.tokenization import SegtokTokenizer, Tokenizer

MONTH_ABBREVIATIONS = frozenset("Jan Jän Febr Feb Mrz Apr Jun Jul Aug Sep Sept Okt Oct Nov Dez Dec 7br 8br 9br Xbr".split())
MONTHS = MONTH_ABBREVIATIONS | frozenset(
    """Januar Jänner Jenner Jener Februar Feber Hornung März Merz Martius April Aprilis Mai May Majus Juni Junius Juny
    Juli Julius July August Augustus September Oktober October November Dezember December Decembris 7bris 8bris 9bris
    10bris Xbris 7ber 8ber 9ber 10ber Xber""".split()
)
ABBREVIATIONS = MONTH_ABBREVIATIONS | frozenset(
    """Dr Prof Hr Hrn Herrn Fr Frl Fa Fam St Sta Nr No Bd Bde S Sp Anm Abb Abs Art Aufl Ausg Bl Jg Jh Jhd Jhdt Jahrh
    Kap Hft Hg Hrsg hrsg Tab Taf Tl Th Thl vgl bzw ca geb gest gegr verh verw sog bes dgl ebd ebda evtl ggf inkl insb
    lt Mio Mrd Mk Pf Pfd Rthl Thlr fl kr Ztg Str Pl Dir Sr Se Hochw Exc Exz Excell Mr Mrs Ms Mme Mlle Mons Msgr Gebr
    Co Cie Comp Geh Kgl kgl Ges Gr Hl hl sel ehem jun sen Wwe Rn Rdnr Rz Urt Beschl Az Ziff Buchst lit BGBl GVBl
    RGBl Slg Verf amtl Begr Drucks Bekl Kl Vors vorl ff ders vol Vol ed eds pp cf vs Jr Ltd Nachf Univ Inst Bearb
    Übers übers Tsd Std Min Mon Hs Hss Mss Abt Abth Abschn iHv iSd iSv iVm bzgl gem ua uä Fz Frz Friedr Wilh Wm Joh Jos
    Chr Ferd Gust Heinr Herm Ludw Rud herzl hrzl Hrzl freundl ergeb ergebst""".split()
)
FINAL_ABBREVIATIONS = frozenset({"usw", "usf", "etc", "u.s.w", "u.s.f", "etc.pp"})  # they close a sentence
FINAL_SPACED = re.compile(r"\bu\.\s?s\.\s?[wf]$")  # "u. s. w." / "u. s. f." before their last period
CLOSERS = "\"'”“’‘»«)]"
TERMINAL = re.compile(r"[.!?…]+[" + re.escape(CLOSERS) + r"]*(?=\s|$)")
PARAGRAPH = re.compile(r"\n[^\S\n]*\n")
OPENERS = "\"'„‚“‘»«(["
LETTERS = re.compile(r"[^\W\d_]+")
ROMAN = re.compile(r"(?=[IVXLCDM])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
LABEL_AFTER = frozenset(".!?…:" + CLOSERS)  # a number after these (or at the start) may be a label: "1. Die Klage"
YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
DOTTED = re.compile(r"(?:[^\W\d_]{1,4}\.)+[^\W\d_]{1,4}")
VOWELS = frozenset("aeiouyäöüáàâéèêíìîóòôúùûæœ")
# "W." inside a sentence: then , ; : or a word (checked for case), or a number that is no enumeration's ("4." "b)")
INSIDE = re.compile(r"\.(?:[,;:]|\s+(?:\d+(?![\d.)])|[^\W\d_]))")
MAX_LEARNED = 4  # letters of a learned abbreviation, at most
MAX_PENDING = 100_000  # characters the learner holds back, at most
STANDS_AFTER = frozenset(" \t\n\r\f\v-" + OPENERS)  # a word stands on its own after these (or at the text's start)
BOUNDARY = re.compile(r"\s+")  # after a sentence, up to where the next one starts
NEXT_WORD = re.compile(r"\s*(?:[" + re.escape(OPENERS) + r"]\s*)*([^\s.,;:!?]*)")


class AbbreviationLearner:
    """Counts, over texts given in pieces (`feed`), how often each word stands with and without a period after it."""

    def __init__(self) -> None:
        self.plain: Counter = Counter()
        self.dotted: Counter = Counter()
        self.inside: Counter = Counter()
        self._pending = ""

    def feed(self, text: str) -> None:
        """Count the words of `text`, a piece of a longer text; its last two words wait for the next piece (a word's
        count reads the word after it, and that word's end)."""
        self._pending += text
        cut = len(self._pending)
        for _ in range(2):  # back over the last two runs of non-space characters
            while cut > 0 and self._pending[cut - 1].isspace():
                cut -= 1
            while cut > 0 and not self._pending[cut - 1].isspace():
                cut -= 1
        if cut == 0 and len(self._pending) > MAX_PENDING:
            cut = len(self._pending)  # a text without whitespace: counted as it comes
        if cut:
            self._count(self._pending, cut)
            self._pending = self._pending[cut:]

    def close(self) -> None:
        """Count what is left: the end of the text."""
        self._count(self._pending, len(self._pending))
        self._pending = ""

    def _count(self, text: str, stop: int) -> None:
        for match in LETTERS.finditer(text, 0, stop):
            start, end = match.span()
            if start and text[start - 1] not in STANDS_AFTER:
                continue  # part of "z.B.", "Berlin-Charlottenburg", "3ten": no word of its own
            if end == len(text) or text[end] != ".":
                if end == len(text) or not text[end].isalnum():
                    self.plain[match.group()] += 1
                continue
            if end + 1 < len(text) and text[end + 1].isalpha():
                continue  # "z.B": letters with periods inside
            self.dotted[match.group()] += 1
            inside = INSIDE.match(text, end)
            if inside and not inside.group()[-1].isupper():
                self.inside[match.group()] += 1

    def abbreviations(self) -> frozenset[str]:
        """The words the rule of the module docstring takes as abbreviations."""
        return frozenset(word for word in self.dotted if learned(word, self.plain[word], self.inside[word]))


def learned(word: str, plain: int, inside: int) -> bool:
    """Whether a word seen `plain` times without a period and `inside` times with one inside a sentence is an abbreviation."""
    if plain or len(word) > MAX_LEARNED:
        return False
    acronym = len(word) > 1 and word.isupper()
    return (not acronym and not VOWELS.intersection(word.lower())) or inside > 0


def learn_abbreviations(texts: Iterable[str]) -> frozenset[str]:
    """The abbreviations learned from `texts` together (each a whole text: a document, a line of a corpus)."""
    learner = AbbreviationLearner()
    for text in texts:
        learner.feed(text)
        learner.feed("\n")
    learner.close()
    return learner.abbreviations()


def word_before(text: str, end: int) -> tuple[str, str]:
    """The word before a period at `end`: the characters since the last whitespace or hyphen, opening quotes and brackets
    left out (for a period standing alone, as in tokenised text "3 . Mai", the word before it); and the last non-space
    character before the word ("" at the start of the text or of a paragraph: where the split of a text starts)."""
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    start = end
    while start > 0 and not text[start - 1].isspace() and text[start - 1] != "-":
        start -= 1
    previous = start
    while previous > 0 and text[previous - 1].isspace():
        previous -= 1
    paragraph = PARAGRAPH.search(text, previous, start) is not None
    return text[start:end].lstrip(OPENERS), "" if paragraph else text[previous - 1 : previous]


def next_word(text: str, start: int) -> Optional[str]:
    """The word after the whitespace at `start` (opening quotes and brackets skipped), up to whitespace or punctuation;
    None where only whitespace follows."""
    match = NEXT_WORD.match(text, start)
    return None if match.end() == len(text) and not match.group(1) else match.group(1)


def keeps_period(word: str, previous: str, following: str, known: frozenset[str]) -> bool:
    """Whether a single period after `word` is no sentence end: `previous`, the last non-space character before the word;
    `following`, the next word; `known`, the abbreviations."""
    if word.isdigit():
        label = (previous in LABEL_AFTER or not previous) and not YEAR.fullmatch(word)  # "1. Die Klage", "Phil. 241. 620."
        return len(word) <= 2 or following in MONTHS or label
    if ROMAN.fullmatch(word) or DOTTED.fullmatch(word) or (len(word) == 1 and word.isalpha()):
        return True
    if word in MONTHS and following.isdigit():
        return True  # "9. Mai. 1919"
    return word in known or (word[:1].lower() + word[1:]) in known


def ends_sentence(text: str, match: "re.Match[str]", known: frozenset[str]) -> bool:
    """Whether the sentence-final punctuation `match` (with its closing quotes and brackets) ends a sentence."""
    following = next_word(text, match.end())
    if following is None:
        return True  # the end of the text
    at, stop = match.start(), match.group().rstrip(CLOSERS)
    word, previous = word_before(text, at)
    if stop[0] in "!?":
        return True
    if stop != ".":  # an ellipsis, or periods
        return not (len(word) == 1 and word.isalpha()) and not following[:1].islower()  # "Herr R… aus S…"; "whose... a"
    if word.lower() in FINAL_ABBREVIATIONS or FINAL_SPACED.search(text, max(0, at - 12), at):
        return not following[:1].islower()  # "Bilder usw. Dann", but "usw. sind"
    return not keeps_period(word, previous, following, known)


class GermanSentenceSplitter(SentenceSplitter):
    """Sentences by the rules of the module docstring; tokens by Flair's segtok tokenizer, at their offsets in the text."""

    def __init__(self, abbreviations: Iterable[str] = (), learn: bool = True, tokenizer: Optional[Tokenizer] = None) -> None:
        super().__init__()
        self._tokenizer = tokenizer or SegtokTokenizer()
        self.abbreviations = frozenset(abbreviations)
        self.learn = learn

    def ends(self, text: str) -> list[int]:
        """The offsets at which sentences end (each a cut: the next sentence starts after the whitespace there)."""
        known = ABBREVIATIONS | self.abbreviations | (learn_abbreviations([text]) if self.learn else frozenset())
        cuts = {match.start() for match in PARAGRAPH.finditer(text)}
        cuts.update(match.end() for match in TERMINAL.finditer(text) if ends_sentence(text, match, known))
        return sorted(cuts)

    def _perform_split(self, text: str) -> list[Sentence]:
        sentences, start = [], 0
        for end in [*self.ends(text), len(text)]:
            piece = text[start:end]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                sentences.append(Sentence(piece.strip(), use_tokenizer=self._tokenizer, start_position=start + lead))
            start = end
        return sentences

    @property
    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, value: Tokenizer) -> None:
        self._tokenizer = value
