"""`flairsuite.markup` and `predict --format tei|html`: offsets kept exactly, well-formed TEI, in-place tagging, HTML, one-line errors.

The unit tests use hand-made spans (no model); the command-line tests use the small saved taggers of
tests/fixtures/saved-models, which tag nearly every word as pers, place or date.
"""

import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner, Result
from conftest import one_error_line, well_formed, write_file

from flairsuite.cli import cli
from flairsuite.errors import InputError
from flairsuite.markup.html import CSS, render_html
from flairsuite.markup.spans import Span, Wrap, wrap_text
from flairsuite.markup.tei import paragraphs, tag_in_place, tei_document
from flairsuite.markup.typemap import DEFAULT_TYPE_MAP, Element, load_type_map, parse_element
from flairsuite.markup.xmlsource import parse_xml

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "saved-models"
TEI = "{http://www.tei-c.org/ns/1.0}"
TRICKY = '  „Anna“   besuchte\tdie Stadt Köln & <Berlin> "heute".\r\nDer König   schwieg.\n\n\n\tOtto  verließ Wien.  \n'
XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    "<!DOCTYPE TEI [<!ENTITY both \"Anna &amp; Otto\">]>\n"
    '<TEI xmlns="http://www.tei-c.org/ns/1.0">\n'
    "  <teiHeader><fileDesc><titleStmt><title>Brief</title></titleStmt><publicationStmt><p>Anna in Berlin</p></publicationStmt>"
    "<sourceDesc><p>Archiv</p></sourceDesc></fileDesc></teiHeader>\n"
    '  <text><body>\n    <p n="1">Am  Montag besuchte Anna\r\ndie Stadt <!-- sic -->Berlin,<lb/>\n sagte Jo<lb break="no"/>hann &amp; Co.</p>\n'
    "    <p>Otto in <hi rend=\"i\">Wien</hi>.</p>\n"
    "    <ab>Marie\tliebte &both; in M&#252;nchen<pb n=\"2\"/>.</ab>\n"
    "    <div><s>Else   kam.</s><s/></div>\n"
    "  </body></text>\n</TEI>\n"
)


def spans_of(text: str, *found: tuple[str, str]) -> list[Span]:
    """A span for the first occurrence of each (surface, type) at or after the previous one's end, confidence 0.9."""
    spans, position = [], 0
    for surface, kind in found:
        start = text.index(surface, position)
        spans.append(Span(start, start + len(surface), kind, 0.9))
        position = start + len(surface)
    return spans


def without(document: str, *elements: str) -> str:
    """The document with the start and end tags of `elements` (any prefix, any attributes) removed."""
    names = "|".join(elements)
    return re.sub(rf"</?(?:\w+:)?(?:{names})(?:\s[^>]*)?>", "", document)


# plain text -> TEI


def test_tei_document_keeps_the_text_exactly() -> None:
    spans = spans_of(TRICKY, ("Anna", "PER"), ("Köln", "LOC"), ("Berlin", "place"), ("König", "ORG"), ("Otto", "pers"), ("Wien", "work"))
    marked = tei_document(TRICKY, spans, Path("briefe/brief 1.txt"))
    assert (marked.inserted, marked.skipped) == (6, 0)
    root = well_formed(marked.text)
    assert root.tag == f"{TEI}TEI" and root.findtext(f"{TEI}teiHeader/{TEI}fileDesc/{TEI}titleStmt/{TEI}title") == "brief 1"
    body = root.find(f"{TEI}text/{TEI}body")
    assert body.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
    assert "".join(body.itertext()) == TRICKY  # CR, tabs, runs of spaces, blank lines and quotes all kept
    paragraphs_found = body.findall(f"{TEI}p")
    assert len(paragraphs_found) == 2 and "".join(paragraphs_found[1].itertext()) == "Otto  verließ Wien."
    found = [(element.tag.removeprefix(TEI), element.text, element.get("type"), element.get("cert")) for element in body.iter() if element.get("cert")]
    assert found == [
        ("persName", "Anna", None, "0.90"),
        ("placeName", "Köln", None, "0.90"),
        ("placeName", "Berlin", None, "0.90"),
        ("orgName", "König", None, "0.90"),
        ("persName", "Otto", None, "0.90"),
        ("name", "Wien", "work", "0.90"),
    ]
    assert "&lt;<placeName" in marked.text and "&amp;" in marked.text and "&#13;\n" in marked.text


def test_paragraphs_are_blocks_between_blank_lines() -> None:
    text = "\n  Eins\nzwei \r\n \r\nDrei\n\n\n\nvier\n  \n"
    assert [text[start:end] for start, end in paragraphs(text)] == ["Eins\nzwei", "Drei", "vier"]
    assert paragraphs(" \n\n ") == []


def test_entity_across_a_paragraph_break_is_skipped() -> None:
    text = "Anna ging.\n\nNach Berlin."
    marked = tei_document(text, [Span(5, 17, "LOC", 0.5), Span(17, 23, "LOC", 0.6)], Path("t.txt"))
    assert (marked.inserted, marked.skipped) == (1, 1)
    assert "<p>Nach <placeName" in marked.text and "".join(well_formed(marked.text).find(f"{TEI}text/{TEI}body").itertext()) == text


def test_characters_xml_cannot_hold_are_an_error() -> None:
    with pytest.raises(InputError, match=r"t.txt:2: character U\+000C cannot be written in XML"):
        tei_document("Seite eins\n\x0cSeite zwei", [], Path("t.txt"))


def test_wraps_nest_at_shared_offsets() -> None:
    wraps = [Wrap(0, 2, "<p>", "</p>"), Wrap(2, 4, "<p>", "</p>"), Wrap(0, 2, "<a>", "</a>", 1), Wrap(2, 3, "<b>", "</b>", 1)]
    assert wrap_text("x<yz", wraps, html.escape) == "<p><a>x&lt;</a></p><p><b>y</b>z</p>"


# type map


def test_default_type_map() -> None:
    element = DEFAULT_TYPE_MAP.element
    assert [element(kind).name for kind in ("PER", "pers", "Person", "LOC", "place", "location", "ORG", "organization", "DATE", "date")] == [
        "persName", "persName", "persName", "placeName", "placeName", "placeName", "orgName", "orgName", "date", "date",
    ]  # fmt: skip
    assert element("LOCderiv").open("LOCderiv", 0.5) == '<name type="LOCderiv" cert="0.50">'
    assert element("a\"b<").open('a"b<') == '<name type="a&quot;b&lt;">'


def test_type_map_override(tmp_path: Path) -> None:
    path = write_file(tmp_path / "map.yaml", "work: title\nLOC: name[@type=place]\nper: rs[@type]\n'*': term\n")
    types = load_type_map(path)
    assert types.element("WORK").open("WORK") == "<title>"
    assert types.element("loc").open("loc") == '<name type="place">'
    assert types.element("PER").open("PER", prefix="tei:") == '<tei:rs type="PER">' and types.element("PER").close("tei:") == "</tei:rs>"
    assert types.element("date").name == "date" and types.element("other").open("other") == "<term>"
    marked = tei_document("Faust las Goethe.", [Span(0, 5, "work", 0.8), Span(10, 16, "per", 0.7)], Path("t.txt"), types)
    assert '<p><title cert="0.80">Faust</title> las <rs type="per" cert="0.70">Goethe</rs>.</p>' in marked.text
    assert parse_element('name[@type="a b"]') == Element("name", "a b")


@pytest.mark.parametrize(
    "content, message",
    [
        ("work: [title\n", ":2: not valid YAML"),
        ("- title\n", ":1: a markup map is a YAML mapping"),
        ("", "a markup map is a YAML mapping"),
        ("work: title\nplace: <placeName>\n", ":2: '<placeName>' is not an element name"),
        ("work: title\nperson:\n  - persName\n", ":3: the element of 'person' must be one name"),
        ("work: title\nWork: bibl\n", ":2: type 'Work' appears twice"),
        (b"work: t\xeftel\n", ":1: not valid utf-8: byte 0xef at column 8"),
        (None, "markup map file not found"),
    ],
)
def test_bad_type_map_is_an_input_error(tmp_path: Path, content: Optional[str], message: str) -> None:
    path = write_file(tmp_path / "map.yaml", content) if content is not None else tmp_path / "map.yaml"  # None: no file
    with pytest.raises(InputError) as caught:
        load_type_map(path)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value) and "\n" not in str(caught.value)


# TEI/XML in place


def test_taggable_elements_and_their_text() -> None:
    source = parse_xml(XML, Path("brief.xml"))
    texts = [segment.text for segment in source.segments]
    assert texts == [
        "Am  Montag besuchte Anna\ndie Stadt Berlin, \n sagte Johann & Co.",  # CRLF read as LF, comment as nothing, lb as a space
        "Otto in Wien.",  # read through <hi>
        "Marie\tliebte Anna & Otto in München .",
        "Else   kam.",
    ]  # the header's <p>s are not taggable, the empty <s/> has no text


def test_in_place_keeps_every_other_byte() -> None:
    source = parse_xml(XML, Path("brief.xml"))
    first, second, third, fourth = (segment.text for segment in source.segments)
    spans = [
        spans_of(first, ("Montag", "DATE"), ("Anna", "PER"), ("Berlin", "LOC"), ("Co", "ORG")),
        spans_of(second, ("Otto", "PER"), ("Wien", "LOC")),
        spans_of(third, ("Marie", "PER"), ("München", "LOC")),
        spans_of(fourth, ("Else", "PER")),
    ]
    marked = tag_in_place(source, spans)
    assert (marked.inserted, marked.skipped, marked.already_marked) == (9, 0, 0)
    assert without(marked.text, "persName", "placeName", "orgName", "date") == XML
    assert 'M<placeName cert="0.90">&#252;nchen</placeName>' not in marked.text and '<placeName cert="0.90">M&#252;nchen</placeName>' in marked.text
    assert '<placeName cert="0.90"><hi rend="i">Wien</hi></placeName>' in marked.text  # the entity holds the whole <hi>
    root = well_formed(marked.text)
    assert root.find(f"{TEI}teiHeader").find(f".//{TEI}persName") is None
    body = root.find(f"{TEI}text/{TEI}body")
    assert [(e.tag.removeprefix(TEI), "".join(e.itertext())) for e in body.iter() if e.get("cert")] == [
        ("date", "Montag"), ("persName", "Anna"), ("placeName", "Berlin"), ("orgName", "Co"),
        ("persName", "Otto"), ("placeName", "Wien"), ("persName", "Marie"), ("placeName", "München"), ("persName", "Else"),
    ]  # fmt: skip


def test_entities_hold_whole_elements_and_never_split_a_reference() -> None:
    source = parse_xml(XML, Path("brief.xml"))
    first, _, third, _ = (segment.text for segment in source.segments)
    holding = [
        spans_of(first, ("Stadt Berlin", "LOC"), (", \n sagte", "X"), ("Johann", "PER")),  # a comment, an lb, an lb break="no"
        [],
        spans_of(third, ("Anna", "PER")),
        [],
    ]
    marked = tag_in_place(source, holding)
    assert (marked.inserted, marked.skipped) == (3, 1)  # "Anna" lies inside the reference &both;: it cannot be split
    assert without(marked.text, "placeName", "persName", "name") == XML
    assert '<placeName cert="0.90">Stadt <!-- sic -->Berlin</placeName>' in marked.text
    assert '<name type="X" cert="0.90">,<lb/>\n sagte</name> <persName cert="0.90">Jo<lb break="no"/>hann</persName>' in marked.text
    whole = [[], [], [Span(third.index("Anna"), third.index("Otto") + 4, "PER", 0.5)], []]
    marked = tag_in_place(source, whole)
    assert marked.inserted == 1 and '<persName cert="0.50">&both;</persName>' in marked.text


def test_prefixed_and_unqualified_documents() -> None:
    prefixed = '<tei:TEI xmlns:tei="http://www.tei-c.org/ns/1.0"><tei:text><tei:body><tei:p>Anna kam.</tei:p></tei:body></tei:text></tei:TEI>'
    marked = tag_in_place(parse_xml(prefixed, Path("p.xml")), [[Span(0, 4, "PER", 1.0)]])
    assert '<tei:p><tei:persName cert="1.00">Anna</tei:persName> kam.</tei:p>' in marked.text
    assert well_formed(marked.text).find(f".//{TEI}p/{TEI}persName").text == "Anna"
    plain = "<doc><p>Anna</p><x:p xmlns:x='urn:other'>Otto</x:p></doc>"
    source = parse_xml(plain, Path("d.xml"))
    assert [segment.text for segment in source.segments] == ["Anna"]  # a p of another namespace is not TEI's


def test_a_paragraph_in_a_note_in_a_paragraph() -> None:
    text = "<r><p>Anna <note place='foot'><p>Otto <lb/>kam.</p></note> ging.</p></r>"
    source = parse_xml(text, Path("r.xml"))
    assert [segment.text for segment in source.segments] == ["Anna  ging.", "Otto  kam."]  # the note is a text of its own
    marked = tag_in_place(source, [[Span(0, 4, "PER", 0.5)], [Span(0, 4, "PER", 0.5)]])
    assert marked.text == text.replace("<p>Otto", '<p><persName cert="0.50">Otto</persName>').replace("<p>Anna", '<p><persName cert="0.50">Anna</persName>')


def test_milestone_with_content_and_cdata_are_read() -> None:
    text = "<r><p>a<lb>b</lb>c</p><p>d<![CDATA[<e>]]> f</p><p>f<pb/>g</p></r>"
    source = parse_xml(text, Path("r.xml"))
    assert [segment.text for segment in source.segments] == ["a bc", "d<e> f", "f g"]
    inside, whole = [Span(1, 3, "X", 0.5)], [Span(0, 4, "X", 0.5)]  # a CDATA section maps to the document only as a whole
    marked = tag_in_place(source, [[], inside, []])
    assert (marked.inserted, marked.skipped, marked.text) == (0, 1, text)
    marked = tag_in_place(source, [[], whole, []])
    assert '<p><name type="X" cert="0.50">d<![CDATA[<e>]]></name> f</p>' in marked.text


@pytest.mark.parametrize(
    "content, line",
    [("<TEI>\n<p>Anna</TEI>\n", 2), ("<p>Anna &nbsp; Otto</p>", 1), ("<p>\n\n</p>\n<p>", 4), ("<tei:p>x</tei:p>", 1)],
)
def test_malformed_xml_is_an_input_error(content: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        parse_xml(content, Path("bad.xml"))
    assert str(caught.value).startswith(f"bad.xml:{line}: not well-formed XML: ") and "\n" not in str(caught.value)


# HTML


class Marks(HTMLParser):
    """The text of an HTML page's `.doc` blocks (tags stripped, references resolved) and the attributes of its marks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.docs: list[str] = []
        self.marks: list[dict[str, str]] = []
        self.in_doc = False
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        if tag == "div" and attributes.get("class") == "doc":
            self.in_doc = True
            self.docs.append("")
        if tag == "mark":
            self.marks.append(attributes)
        self.external += [value for name, value in attrs if name in ("src", "href")]
        self.external += ["link"] if tag in ("link", "script", "img") else []

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self.in_doc = False

    def handle_data(self, data: str) -> None:
        if self.in_doc:
            self.docs[-1] += data


def parsed(page: str) -> Marks:
    parser = Marks()
    parser.feed(page)
    parser.close()
    return parser


def test_html_page() -> None:
    text = 'Anna & "Otto" <b>tanzten</b>\r\n\tin  Köln mit Anna.'
    other = "Berlin, 1890"
    spans = spans_of(text, ("Anna", "PER"), ("Otto", "PER"), ("Köln", "LOC<&>"), ("Anna", "PER"))
    page = render_html([(text, spans), (other, spans_of(other, ("Berlin", "LOC")))], "Brief <1>")
    found = parsed(page)
    assert found.docs == [text, other] and found.external == []
    assert [(mark["data-type"], mark["data-confidence"], mark["title"]) for mark in found.marks][:3] == [
        ("PER", "0.9", "PER 0.90"), ("PER", "0.9", "PER 0.90"), ("LOC<&>", "0.9", "LOC<&> 0.90"),
    ]  # fmt: skip
    assert found.marks[0]["class"] == "ent ent-PER" and found.marks[2]["class"] == "ent ent-LOC___"
    assert "&lt;b&gt;tanzten&lt;/b&gt;" in page and "&amp; &quot;<mark" in page and "<title>Brief &lt;1&gt;</title>" in page
    legend = re.search(r'<ul class="legend">(.*?)</ul>', page).group(1)
    assert re.findall(r'data-type="([^"]*)">[^<]*</span> <span class="count">(\d+)</span>', legend) == [("LOC", "1"), ("LOC&lt;&amp;&gt;", "1"), ("PER", "3")]
    assert CSS in page and "white-space: pre-wrap" in CSS
    assert page.count("background:") == 3  # one colour per type


def test_markup_does_not_import_flair() -> None:
    code = "import sys, flairsuite.markup.html, flairsuite.markup.tei; print(sorted(m for m in sys.modules if m.split('.')[0] in ('flair', 'torch')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


# the command line, with the saved taggers


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["predict", *args], catch_exceptions=False)


def json_spans(model: str, path: Path) -> list[tuple[str, str]]:
    """(surface, type) of every span `predict --format json` finds, in order."""
    result = run(str(FIXTURES / model), str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    text = path.read_bytes().decode("utf-8")  # not read_text: it would turn CRLF into LF
    return [(text[s["start_char"] : s["end_char"]], s["type"]) for line in result.stdout.splitlines() for s in json.loads(line)["spans"]]


PLAIN = "  Am Montag   besuchte\tAnna „die“ Stadt Berlin.\r\nOtto  verließ Wien, sagte der König.\n\n\n Anna & <Otto>   kam.\n"


@pytest.mark.parametrize("model", ["map.pt", "cse.pt"])
def test_cli_tei_of_plain_text(tmp_path: Path, model: str) -> None:
    path = write_file(tmp_path / "brief.txt", PLAIN)
    out = tmp_path / "brief.xml"
    result = run(str(FIXTURES / model), str(path), "--format", "tei", "--out", str(out))
    assert result.exit_code == 0, result.output
    expected = json_spans(model, path)
    assert len(expected) > 10
    assert f"inserted {len(expected)} entities, skipped 0 crossing markup" in result.stderr
    body = well_formed(out.read_text(encoding="utf-8")).find(f"{TEI}text/{TEI}body")
    assert "".join(body.itertext()) == PLAIN
    elements = {"pers": "persName", "place": "placeName", "date": "date"}
    assert [(e.text, e.tag.removeprefix(TEI)) for e in body.iter() if e.get("cert")] == [(surface, elements[kind]) for surface, kind in expected]


def test_cli_tei_in_place(tmp_path: Path) -> None:
    path = write_file(tmp_path / "brief.xml", "\ufeff" + XML)
    out = tmp_path / "tagged.xml"
    result = run(str(FIXTURES / "lcrf-ner.pt"), str(path), "--format", "tei", "--out", str(out))
    assert result.exit_code == 0, result.output
    tagged = out.read_bytes()
    assert tagged.startswith(b"\xef\xbb\xbf")
    assert without(tagged.decode("utf-8"), "persName", "placeName", "date").encode("utf-8") == path.read_bytes()
    inserted, skipped = map(int, re.search(r"inserted (\d+) entities, skipped (\d+) crossing markup", result.stderr).groups())
    assert inserted > 5 and inserted == len(re.findall(r"<(?:persName|placeName|date) ", tagged.decode("utf-8")))
    assert "already marked" in result.stderr and "left untagged" not in result.stderr
    well_formed(tagged.decode("utf-8"))


def test_cli_tei_with_a_markup_map(tmp_path: Path) -> None:
    path = write_file(tmp_path / "t.txt", "Am Montag besuchte Anna die Stadt Berlin.\n")
    types = write_file(tmp_path / "map.yaml", "pers: rs[@type=person]\nDATE: term\n")
    result = run(str(FIXTURES / "map.pt"), str(path), "--format", "tei", "--markup-map", str(types))
    assert result.exit_code == 0, result.output
    names = {e.tag.removeprefix(TEI) for e in well_formed(result.stdout).iter() if e.get("cert")}
    assert names == {"rs", "term"} and '<rs type="person" cert=' in result.stdout  # the model finds persons and dates here


def test_cli_html(tmp_path: Path) -> None:
    path = write_file(tmp_path / "brief.txt", PLAIN)
    result = run(str(FIXTURES / "cse.pt"), str(path), "--format", "html")
    assert result.exit_code == 0, result.output
    found = parsed(result.stdout)
    expected = json_spans("cse.pt", path)
    assert expected and found.docs == [PLAIN] and found.external == []  # spans to mark: the checks below are not vacuous
    assert [mark["data-type"] for mark in found.marks] == [kind for _, kind in expected]
    assert all(0.0 <= float(mark["data-confidence"]) <= 1.0 for mark in found.marks)
    for kind in {kind for _, kind in expected}:
        assert f'data-type="{kind}">{kind}</span> <span class="count">{sum(k == kind for _, k in expected)}</span>' in result.stdout
    xml = write_file(tmp_path / "brief.xml", XML)
    result = run(str(FIXTURES / "cse.pt"), str(xml), "--format", "html")
    assert result.exit_code == 0, result.output
    assert parsed(result.stdout).docs == [segment.text for segment in parse_xml(XML, xml).segments]


def test_cli_column_and_json_read_xml_as_text(tmp_path: Path) -> None:
    path = write_file(tmp_path / "brief.xml", "<p>Anna kam.</p>\n")
    result = run(str(FIXTURES / "map.pt"), str(path))
    assert result.exit_code == 0, result.output
    assert "Anna" in [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert "looks like TEI/XML and was read as plain text" in result.stderr


@pytest.mark.parametrize(
    "name, content, flags, message",
    [
        ("bad.xml", "<TEI>\n<p>Anna</TEI>\n", ["--format", "tei"], "bad.xml:2: not well-formed XML: mismatched tag"),
        ("bad.txt", "<p>Anna\n", ["--format", "html"], "bad.txt:2: not well-formed XML"),
        ("bad.txt", b"Anna\nC\xe4sar\n", ["--format", "tei"], "bad.txt:2: not valid utf-8"),
        ("bad.xml", b"<p>C\xe4sar</p>", ["--format", "tei"], "bad.xml:1: not valid utf-8"),
        ("bad.xml", "<TEI><teiHeader><p>x</p></teiHeader><text><p> <hi/> </p><del><p>a</p></del></text></TEI>", ["--format", "tei"], "bad.xml: no text to tag"),
        ("bad.txt", "Seite\n\x0cSeite", ["--format", "tei"], "bad.txt:2: character U+000C cannot be written in XML"),
        ("bad.txt", "Anna kam.", ["--format", "json", "--markup-map", "map.yaml"], "--markup-map applies to --format tei only"),
        ("bad.txt", "Anna kam.", ["--format", "tei", "--markup-map", "map.yaml"], "map.yaml:1: a markup map is a YAML mapping"),
        ("bad.txt", "Anna kam.", ["--format", "tei", "--markup-map", "none.yaml"], "none.yaml: markup map file not found"),
    ],
)
def test_cli_bad_input_is_one_error_line(tmp_path: Path, name: str, content, flags: list[str], message: str) -> None:
    path = write_file(tmp_path / name, content)
    write_file(tmp_path / "map.yaml", "[persName]\n")
    flags = [str(tmp_path / flag) if flag.endswith(".yaml") else flag for flag in flags]
    line = one_error_line(run(str(FIXTURES / "map.pt"), str(path), *flags))
    assert message in line, line


def test_predict_on_bad_input_says_one_line_on_stderr_in_a_subprocess(tmp_path: Path) -> None:
    """What a user sees: the installed command's stderr is the one `Error:` line (no Flair INFO line from loading the
    model before it), stdout empty, exit status 1."""
    path = write_file(tmp_path / "bad.txt", "Seite\n\x0cSeite")
    command = [str(Path(sys.executable).parent / "flairsuite"), "predict", str(FIXTURES / "map.pt"), str(path), "--format", "tei"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [f"Error: {path}:2: character U+000C cannot be written in XML: remove or replace it for --format tei"]
