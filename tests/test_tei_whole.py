"""A TEI letter tagged in place, whole: every text block, read through inline markup, entities nested with the markup there.

The unit tests give the spans a good tagger would find to the markup functions directly (a small test model finds no real
names); the command-line tests run `flairsuite predict` with a committed tagger of tests/fixtures/saved-models. The last
test puts random spans into random markup: the document stays byte for byte, and each entity holds exactly its span's text.
"""

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_error_line, well_formed, write_file

from flairsuite.cli import cli
from flairsuite.markup.spans import Span
from flairsuite.markup.tei import tag_in_place
from flairsuite.markup.tei_blocks import DEFAULT_BLOCKS, parse_blocks
from flairsuite.markup.xmlsource import parse_xml

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "saved-models"
ROOT = Path(__file__).resolve().parents[1]
TEI = "{http://www.tei-c.org/ns/1.0}"
HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0">\n'
    "  <teiHeader><fileDesc><titleStmt><title>Brief von August Macke an Herwarth Walden</title></titleStmt>"
    "<publicationStmt><p>Bonn, Berlin</p></publicationStmt><sourceDesc><p>Franz Marc</p></sourceDesc></fileDesc></teiHeader>\n"
    "  <text><body><div>\n"
)
FOOTER = "\n  </div></body></text>\n</TEI>\n"
FIRST = (
    HEADER
    + '<p>Lieber <persName ref="#walden">Herwarth Walden</persName>, ich war mit Franz Marc in München und fahre morgen nach Berlin.</p>\n'
    + "<p>Am 4. Mai 1913 traf ich Kandinsky in <placeName>Murnau</placeName><lb/>bei Gabriele Münter.</p>"
    + FOOTER
)
SECOND = (
    HEADER
    + "<opener><dateline><placeName>Bonn</placeName>, 3. Mai 1913</dateline><salute>Lieber Herwarth Walden!</salute></opener>\n"
    + '<p>Ich war mit Franz Marc in Sindels-<lb break="no"/>dorf und fahre morgen nach Ber-<lb break="no"/>lin zu Else Lasker-<lb break="no"/>Schüler.</p>\n'
    + "<closer><salute>Mit herzlichen Grüßen</salute><signed>Ihr August Macke</signed></closer>"
    + FOOTER
)
NAMES = {
    "Herwarth Walden": "PER", "Franz Marc": "PER", "München": "LOC", "Berlin": "LOC", "4. Mai 1913": "DATE", "Kandinsky": "PER",
    "Murnau": "LOC", "Gabriele Münter": "PER", "Bonn": "LOC", "3. Mai 1913": "DATE", "Sindelsdorf": "LOC", "Else Lasker-Schüler": "PER",
    "August Macke": "PER", "Doktor Walden": "PER", "Köln": "LOC",
}  # fmt: skip
START_TAG = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<(/?)[^>]*?(/?)>", re.S)


def tagger(text: str) -> list[Span]:
    """The spans a good tagger would give: every name of NAMES in `text`, longest first, not overlapping, sorted."""
    spans: list[Span] = []
    for name in sorted(NAMES, key=len, reverse=True):
        for found in re.finditer(re.escape(name), text):
            if all(found.end() <= span.start or span.end <= found.start() for span in spans):
                spans.append(Span(found.start(), found.end(), NAMES[name], 0.9))
    return sorted(spans, key=lambda span: span.start)


def tagged(document: str, blocks=None):
    """The document's segments and the document tagged in place with `tagger`'s spans."""
    source = parse_xml(document, Path("brief.xml"), blocks)
    return source, tag_in_place(source, [tagger(segment.text) for segment in source.segments])


def inserted_removed(document: str) -> str:
    """The document without the elements `tag_in_place` inserted (start tags with `cert`, and their end tags)."""
    parts, opened, position = [], [], 0
    for tag in START_TAG.finditer(document):
        closing, empty = tag.group(1), tag.group(2)
        if tag.group(0).startswith(("<!", "<?")) or empty:
            continue
        drop = opened.pop() if closing else ' cert="' in tag.group(0)
        if not closing:
            opened.append(drop)
        if drop:
            parts.append(document[position : tag.start()])
            position = tag.end()
    return "".join(parts) + document[position:]


def test_the_first_letter() -> None:
    source, marked = tagged(FIRST)
    assert [segment.text for segment in source.segments] == [
        "Lieber Herwarth Walden, ich war mit Franz Marc in München und fahre morgen nach Berlin.",
        "Am 4. Mai 1913 traf ich Kandinsky in Murnau bei Gabriele Münter.",
    ]  # read through persName, placeName and lb; the header is never tagged
    assert (marked.inserted, marked.skipped, marked.already_marked) == (6, 0, 2)  # Herwarth Walden and Murnau are marked already
    assert (
        '<p>Lieber <persName ref="#walden">Herwarth Walden</persName>, ich war mit <persName cert="0.90">Franz Marc</persName> in '
        '<placeName cert="0.90">München</placeName> und fahre morgen nach <placeName cert="0.90">Berlin</placeName>.</p>\n'
        '<p>Am <date cert="0.90">4. Mai 1913</date> traf ich <persName cert="0.90">Kandinsky</persName> in <placeName>Murnau</placeName>'
        '<lb/>bei <persName cert="0.90">Gabriele Münter</persName>.</p>'
    ) in marked.text
    assert inserted_removed(marked.text) == FIRST
    well_formed(marked.text)


def test_the_second_letter() -> None:
    source, marked = tagged(SECOND)
    assert [segment.text for segment in source.segments] == [
        "Bonn, 3. Mai 1913",  # dateline and salute are texts of their own; the opener holds no text outside them
        "Lieber Herwarth Walden!",
        "Ich war mit Franz Marc in Sindelsdorf und fahre morgen nach Berlin zu Else Lasker-Schüler.",
        "Mit herzlichen Grüßen",
        "Ihr August Macke",
    ]
    assert (marked.inserted, marked.skipped, marked.already_marked) == (7, 0, 1)  # Bonn is marked already
    assert (
        '<opener><dateline><placeName>Bonn</placeName>, <date cert="0.90">3. Mai 1913</date></dateline>'
        '<salute>Lieber <persName cert="0.90">Herwarth Walden</persName>!</salute></opener>\n'
        '<p>Ich war mit <persName cert="0.90">Franz Marc</persName> in <placeName cert="0.90">Sindels-<lb break="no"/>dorf</placeName> '
        'und fahre morgen nach <placeName cert="0.90">Ber-<lb break="no"/>lin</placeName> zu '
        '<persName cert="0.90">Else Lasker-<lb break="no"/>Schüler</persName>.</p>\n'
        '<closer><salute>Mit herzlichen Grüßen</salute><signed>Ihr <persName cert="0.90">August Macke</persName></signed></closer>'
    ) in marked.text
    assert inserted_removed(marked.text) == SECOND
    root = well_formed(marked.text)
    assert root.find(f"{TEI}teiHeader").find(".//*[@cert]") is None


@pytest.mark.parametrize(
    "content",
    [
        'Ber-<lb break="no"/>lin', 'Ber<lb break="no"/>lin', 'Ber¬<lb break="no"/>\n   lin', 'Ber⸗\n<lb break="no"/>lin',
        'Ber=<lb break="no"/><pb n="2"/>\n<lb break="no"/>lin', 'Ber-\r\n  <lb break="no"/>lin',
    ],
)  # fmt: skip
def test_a_word_broken_at_a_line_end_is_joined(content: str) -> None:
    document = f"<TEI xmlns='http://www.tei-c.org/ns/1.0'><text><p>nach {content}.</p></text></TEI>"
    source, marked = tagged(document)
    assert [segment.text for segment in source.segments] == ["nach Berlin."]
    assert marked.inserted == 1 and inserted_removed(marked.text) == document
    assert re.search(r'<placeName cert="0.90">Ber.*lin</placeName>\.', marked.text, re.S)
    well_formed(marked.text)


def test_a_hyphen_before_a_capital_stays_and_a_plain_lb_is_a_space() -> None:
    source = parse_xml('<p>Else Lasker-<lb break="no"/>Schüler und<lb/>Nell-<lb/>Walden</p>', Path("b.xml"))
    assert source.segments[0].text == "Else Lasker-Schüler und Nell- Walden"


def test_choice_add_del_fw_app_and_notes() -> None:
    document = (
        "<TEI xmlns='http://www.tei-c.org/ns/1.0'><text><p>"
        "<choice><abbr>Dr.</abbr> <expan>Doktor</expan></choice> Walden fuhr nach <choice><orig>Cöln</orig><reg>Köln</reg></choice>"
        "<note place='foot'>Mit Franz Marc.</note>, <del>Bonn</del><add>nach Berlin</add><pb/><fw>12</fw> und "
        "<app><lem>Murnau</lem><rdg>Murnaw</rdg></app>.</p></text></TEI>"
    )
    source, marked = tagged(document)
    assert [segment.text for segment in source.segments] == [
        "Doktor Walden fuhr nach Köln, nach Berlin  und Murnau.",  # the note is left out of the sentence: a text of its own
        "Mit Franz Marc.",
    ]
    assert '<persName cert="0.90"><choice><abbr>Dr.</abbr> <expan>Doktor</expan></choice> Walden</persName>' in marked.text
    assert '<placeName cert="0.90"><choice><orig>Cöln</orig><reg>Köln</reg></choice></placeName>' in marked.text
    assert '<add>nach <placeName cert="0.90">Berlin</placeName></add>' in marked.text
    assert "<note place='foot'>Mit <persName cert=\"0.90\">Franz Marc</persName>.</note>" in marked.text
    assert inserted_removed(marked.text) == document
    well_formed(marked.text)


def test_an_entity_takes_whole_elements_and_the_outermost_place() -> None:
    document = "<p>mit <hi rend='b'>Franz</hi> <hi>Marc</hi> und <hi>Kandinsky</hi><lb/></p>"
    source = parse_xml(document, Path("b.xml"))
    marked = tag_in_place(source, [[Span(4, 14, "PER", 0.5), Span(19, 28, "PER", 0.5)]])
    assert marked.text == (
        '<p>mit <persName cert="0.50"><hi rend=\'b\'>Franz</hi> <hi>Marc</hi></persName> und <persName cert="0.50"><hi>Kandinsky</hi></persName><lb/></p>'
    )


def test_an_entity_crossing_an_element_boundary_is_skipped_and_counted() -> None:
    document = "<p><hi>Herr Franz</hi> Marc kam <persName>Anna</persName>.</p>"
    source = parse_xml(document, Path("b.xml"))
    text = source.segments[0].text
    crossing, overlapping = Span(text.index("Franz"), text.index("Marc") + 4, "PER", 0.5), Span(text.index("kam"), text.index("."), "PER", 0.5)
    marked = tag_in_place(source, [[crossing, overlapping]])
    assert (marked.inserted, marked.skipped, marked.already_marked, marked.text) == (0, 1, 1, document)


def test_the_block_list() -> None:
    assert parse_blocks("p, head") == {"p", "head"}
    assert parse_blocks("+quote,-note") == DEFAULT_BLOCKS - {"note"} | {"quote"}
    for bad in ("", "p,+quote", "teiHeader", "p q", "-" + ",-".join(DEFAULT_BLOCKS)):
        with pytest.raises(ValueError):
            parse_blocks(bad)
    source, marked = tagged(SECOND, parse_blocks("p"))
    assert len(source.segments) == 1 and marked.inserted == 4
    source, _ = tagged(SECOND, parse_blocks("opener,p"))
    assert source.segments[0].text == "Bonn, 3. Mai 1913Lieber Herwarth Walden!"  # dateline and salute read as inline


def test_predict_tags_a_tei_letter_in_place(tmp_path: Path) -> None:
    path = write_file(tmp_path / "brief.xml", SECOND)
    out = tmp_path / "brief-ner.xml"
    result = subprocess.run(
        [sys.executable, "-m", "flairsuite", "predict", str(FIXTURES / "lcrf-ner.pt"), str(path), "--format", "tei", "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = out.read_text(encoding="utf-8")
    well_formed(document)
    assert inserted_removed(document).encode("utf-8") == path.read_bytes()
    summary = re.search(r"inserted (\d+) entities, skipped (\d+) crossing markup, (\d+) already marked", result.stderr)
    assert summary and int(summary.group(1)) == len(re.findall(r' cert="', document)) > 0
    assert "left untagged" not in result.stderr
    assert '<lb break="no"/>' in document and document.count("<lb") == SECOND.count("<lb")


def test_html_of_a_tei_letter_shows_the_same_texts_and_blocks_are_an_option(tmp_path: Path) -> None:
    path = write_file(tmp_path / "brief.xml", SECOND)
    result = CliRunner().invoke(cli, ["predict", str(FIXTURES / "cse.pt"), str(path), "--format", "html", "--tei-blocks", "p,salute"])
    assert result.exit_code == 0, result.output
    texts = re.findall(r'<div class="doc">(.*?)</div>', result.stdout, re.S)
    assert [re.sub(r"<[^>]+>", "", text) for text in texts] == [
        "Lieber Herwarth Walden!",
        "Ich war mit Franz Marc in Sindelsdorf und fahre morgen nach Berlin zu Else Lasker-Schüler.",
        "Mit herzlichen Grüßen",
    ]  # the texts tei tags: the two salutes and the p, words joined at <lb break="no"/>
    line = one_error_line(CliRunner().invoke(cli, ["predict", str(FIXTURES / "cse.pt"), str(path), "--tei-blocks", "p"]))
    assert "--tei-blocks applies to --format tei and html only" in line
    result = CliRunner().invoke(cli, ["predict", str(FIXTURES / "cse.pt"), str(path), "--format", "tei", "--tei-blocks", "p,+q"])
    assert result.exit_code == 2 and "Invalid value for '--tei-blocks'" in result.output and "not both" in result.output


PIECES = ["Anna", "Ber-", "lin", "&amp;", "K&#246;ln", "x\r\ny", "  ", "\n", "¬", "&e;", "<lb/>", '<lb break="no"/>', '<pb n="3"/>', "<lb></lb>",
          "<!-- c -->", "<![CDATA[a<b]]>", "<?pi x?>", "<hi/>"]  # fmt: skip


def random_content(generator, depth: int) -> str:
    """Text and markup of every kind `parse_xml` reads, nested up to three elements deep."""
    parts = []
    for _ in range(generator.randint(0, 6)):
        kind = generator.random()
        if depth < 3 and kind < 0.2:
            name = generator.choice(["hi", "persName", "add", "seg", "del", "fw", "note", "p", "s"])
            parts.append(f"<{name}>{random_content(generator, depth + 1)}</{name}>")
        elif depth < 3 and kind < 0.28:
            parts.append(f"<choice><abbr>{random_content(generator, depth + 1)}</abbr> <expan>{random_content(generator, depth + 1)}</expan></choice>")
        else:
            parts.append(generator.choice(PIECES))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(150))
def test_any_spans_keep_the_document_and_its_texts(seed: int) -> None:
    generator = random.Random(seed)
    body = "".join(f"<{name}>{random_content(generator, 0)}</{name}>\n" for name in generator.choices(["p", "ab", "opener", "head", "div"], k=3))
    document = f"<!DOCTYPE TEI [<!ENTITY e \"Anna &amp; Otto\">]><TEI xmlns='{TEI[1:-1]}'><text><body>{body}</body></text></TEI>"
    source = parse_xml(document, Path("f.xml"))
    spans = []
    for segment in source.segments:
        points = sorted({generator.randint(0, len(segment.text)) for _ in range(generator.randint(0, 6))})
        spans.append([Span(start, end, generator.choice(["PER", "LOC"]), 0.5) for start, end in zip(points[::2], points[1::2]) if start < end])
    marked = tag_in_place(source, spans)
    assert marked.inserted + marked.skipped + marked.already_marked == sum(map(len, spans))
    well_formed(marked.text)
    assert inserted_removed(marked.text) == document
    again = parse_xml(marked.text, Path("f.xml"))
    assert [segment.text for segment in again.segments] == [segment.text for segment in source.segments]  # the texts read the same
    for before, after, found in zip(source.segments, again.segments, spans):
        names = {"persName", "placeName"}
        old = [(element.start, element.end) for element in before.elements if element.name in names]
        new = [(element.start, element.end) for element in after.elements if element.name in names]
        expected = [(s.start, s.end) for s in found if before.source_range(s.start, s.end) and not any(a < s.end and s.start < b for a, b in old)]
        assert len(new) - len(old) == len(expected) and all(span in new for span in expected)  # each entity holds exactly its span's text
