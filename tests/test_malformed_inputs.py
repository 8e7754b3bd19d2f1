"""Malformed copies of annotation files, generated: each is refused with one line naming the file, or, where the change is
one the formats allow (a BOM, CRLF line ends, trailing blank lines), read into the very tokens and tags of the clean file.
No case may change tokens or spans without an error (issue 72).

The clean files are the shipped fixtures (WebAnno TSV 3.3 from INCEpTION, doccano JSONL in both export layouts, Label
Studio JSON, a HIPE-style column file with header and sentence-end flags) and two written here (a CoNLL column file, a
CoNLL-U file with a multiword range and an empty node). Every case goes the way `corpora check` and `tag` read an own
corpus: `own_corpus` (which scans every split) and `read_splits`, the mutated file as train, the clean one as dev and test.

Mutations, with a fixed seed: bad bytes (invalid UTF-8 at random places), truncation (the file cut inside a record: a row
missing its last columns, a JSON record cut before its end), wrong JSON types (each field the readers use given another
type), bad offsets (outside the text, reversed, shifted off their token), broken ids (WebAnno `[N]` unclosed, reused on
a distant row, changing value; CoNLL-U ids outside the grammar or out of sequence), header and row widths (a header one
name short or long, a declaration removed, a column added or dropped), and ill-formed tags.

A truncation inside the last cell of a column file's last line (`B-LOC` cut to `B-LO`) cannot be told from a file that
holds that value, so truncations cut at a column boundary.
"""

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import write_file

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import own_corpus
from flairsuite.errors import FlairsuiteError, InputError

FIXTURES = Path(__file__).parent / "fixtures" / "annotation"
SEED = 72
COLUMN_TEXT = """Lieber O
Herwarth B-PER
Walden I-PER
, O
ich O
fahre O
nach O
Berlin B-LOC
. O

Die O
Galerie O
Der B-ORG
Sturm I-ORG
zeigt O
Bilder O
von O
Franz B-PER
Marc I-PER
. O
"""
CONLLU_TEXT = """# sent_id = 1
# text = Im Sturm zeigt Franz Marc Bilder.
1-2\tIm\t_\t_\t_\t_\t_\t_\t_\t_
1\tin\tin\tADP\t_\t_\t3\tcase\t_\tNE=O
2\tdem\tder\tDET\t_\t_\t3\tdet\t_\tNE=O
3\tSturm\tSturm\tPROPN\t_\t_\t4\tobl\t_\tNE=B-ORG
4\tzeigt\tzeigen\tVERB\t_\t_\t0\troot\t_\tNE=O
5\tFranz\tFranz\tPROPN\t_\t_\t4\tnsubj\t_\tNE=B-PER
6\tMarc\tMarc\tPROPN\t_\t_\t5\tflat\t_\tNE=I-PER
7\tBilder\tBild\tNOUN\t_\t_\t4\tobj\t_\tSpaceAfter=No|NE=O
8\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\tNE=O

# sent_id = 2
# text = Walden schrieb aus Berlin.
1\tWalden\tWalden\tPROPN\t_\t_\t2\tnsubj\t_\tNE=B-PER
2\tschrieb\tschreiben\tVERB\t_\t_\t0\troot\t_\tNE=O
2.1\tihm\t_\t_\t_\t_\t_\t_\t_\t_
3\taus\taus\tADP\t_\t_\t4\tcase\t_\tNE=O
4\tBerlin\tBerlin\tPROPN\t_\t_\t2\tobl\t_\tSpaceAfter=No|NE=B-LOC
5\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\tNE=O
"""
HIPE_ENTRY = {"format": "column", "sep": "tab", "header": True, "text": "TOKEN", "label": "NE-COARSE-LIT",
              "sentence_end": "MISC:EndOfSentence", "comment": "# "}


@dataclass(frozen=True)
class Source:
    """A clean file of one format, and the own-corpus keys it is read with."""

    name: str
    suffix: str
    text: str
    entry: dict


SOURCES = {
    "webanno": Source("webanno", ".tsv", (FIXTURES / "inception-letter.tsv").read_text("utf-8"), {"format": "webanno"}),
    "doccano": Source("doccano", ".jsonl", (FIXTURES / "doccano.jsonl").read_text("utf-8"), {"format": "jsonl"}),
    "doccano-entities": Source("doccano-entities", ".jsonl", (FIXTURES / "doccano-entities.jsonl").read_text("utf-8"), {"format": "jsonl"}),
    "labelstudio": Source("labelstudio", ".json", (FIXTURES / "label-studio.json").read_text("utf-8"), {"format": "jsonl"}),
    "column-header": Source("column-header", ".tsv", (FIXTURES / "hipe-newspaper.tsv").read_text("utf-8"), HIPE_ENTRY),
    "column": Source("column", ".conll", COLUMN_TEXT, {"format": "column"}),
    "conllu": Source("conllu", ".conllu", CONLLU_TEXT, {"format": "conllu", "label": "misc:NE"}),
}
Case = tuple[str, bytes, bool]  # (mutation, file content, benign)


def read_train(folder: Path, source: Source, content: bytes) -> list[tuple[list[str], list[str]]]:
    """The train split's (tokens, tags) per sentence, `content` as train and the clean file as dev and test."""
    write_file(folder / f"train{source.suffix}", content)
    for split in ("dev", "test"):
        write_file(folder / f"{split}{source.suffix}", source.text)
    spec = own_corpus({"path": folder.name, **source.entry}, folder.parent)
    return [(s.tokens, s.tags) for s in read_splits(spec, folder, ["train"])["train"].sentences]


# --- mutations every format gets ----------------------------------------------------------------


def benign(text: str) -> Iterator[Case]:
    yield "bom", ("\ufeff" + text).encode(), True
    yield "crlf", text.replace("\n", "\r\n").encode(), True
    yield "trailing blank lines", (text.rstrip("\n") + "\n\n\n\n").encode(), True
    yield "bom and crlf", ("\ufeff" + text.replace("\n", "\r\n")).encode(), True


BAD_BYTES = (b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xfe\xfe")


def bad_bytes(text: str, rng: random.Random, count: int) -> Iterator[Case]:
    data = text.encode()
    for position in rng.sample(range(len(data)), min(count, len(data))):
        while position < len(data) and 0x80 <= data[position] < 0xC0:  # not inside a character: the rest stays valid
            position += 1
        for bad in BAD_BYTES:
            yield "bad bytes", data[:position] + bad + data[position:], False


# --- line formats: rows, columns, truncation ----------------------------------------------------


def data_rows(text: str, is_row: Callable[[str], bool]) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if is_row(line)]


def with_line(text: str, index: int, line: str) -> bytes:
    lines = text.split("\n")
    lines[index] = line
    return "\n".join(lines).encode()


def truncated_rows(text: str, rows: list[int], sep: str) -> Iterator[Case]:
    """The file cut after the k-th column of a row (k below the row's width): everything after is gone."""
    lines = text.split("\n")
    for index in rows:
        cells = lines[index].split(sep)
        for keep in range(1, len(cells)):
            yield "truncation", "\n".join(lines[:index] + [sep.join(cells[:keep])]).encode(), False


def column_counts(text: str, rows: list[int], sep: str, rng: random.Random) -> Iterator[Case]:
    """A row with a column dropped, or one added."""
    lines = text.split("\n")
    for index in rows:
        cells = lines[index].split(sep)
        drop = rng.randrange(1, len(cells))
        yield "row one column short", with_line(text, index, sep.join(cells[:drop] + cells[drop + 1 :])), False
        yield "row one column long", with_line(text, index, sep.join(cells[:drop] + ["_"] + cells[drop:])), False


def bad_tags(text: str, rows: list[int], sep: str, column: int) -> Iterator[Case]:
    for index in rows:
        cells = re.split(r"\s+", text.split("\n")[index]) if sep == " " else text.split("\n")[index].split(sep)
        for tag in ("B-", "Q-PER", "B_PER", "-PER"):
            cells_with = list(cells)
            cells_with[column] = tag
            yield "ill-formed tag", with_line(text, index, sep.join(cells_with)), False


# --- WebAnno TSV 3.3 -----------------------------------------------------------------------------

WEBANNO_ROW = re.compile(r"\d+-\d+(\.\d+)?\t")
VALUE = 4  # the NamedEntity value column of the fixture: id, offsets, token, identifier, value


def webanno_cases(text: str, rng: random.Random) -> Iterator[Case]:
    lines = text.split("\n")
    rows = data_rows(text, WEBANNO_ROW.match)
    yield from truncated_rows(text, rows, "\t")
    yield from column_counts(text, rows, "\t", rng)
    for index, line in enumerate(lines):
        if line.startswith(("#T_SP=", "#T_CH=", "#T_RL=")):
            yield "declaration removed", "\n".join(lines[:index] + lines[index + 1 :]).encode(), False
    yield from webanno_ids(lines, rows)
    yield from webanno_offsets(lines, rows)


def webanno_ids(lines: list[str], rows: list[int]) -> Iterator[Case]:
    """`[N]` unclosed or malformed, reused on a row not adjacent to its others, or changing value on one of its rows."""
    text = "\n".join(lines)
    holders: dict[str, list[int]] = {}
    for index in rows:
        cells = lines[index].split("\t")
        for match in re.finditer(r"([^|\[\]]*)\[(\d+)\]", cells[VALUE]):
            holders.setdefault(match.group(2), []).append(index)
            for broken in ("[{n}", "]{n}]", "[{n}]]", "[[{n}]", "[]", "[x{n}]"):
                cells_with = list(cells)
                cells_with[VALUE] = cells[VALUE].replace(f"[{match.group(2)}]", broken.format(n=match.group(2)), 1)
                yield "unclosed or malformed id", with_line(text, index, "\t".join(cells_with)), False
    tokens = [i for i in rows if not re.match(r"\d+-\d+\.", lines[i])]
    for ident, places in holders.items():
        cells = lines[places[0]].split("\t")
        value = re.search(rf"([^|\[\]]*)\[{ident}\]", cells[VALUE]).group(0)
        for index in tokens:
            between = [t for t in tokens if min(places) < t < index or index < t < min(places)]
            if lines[index].split("\t")[VALUE] == "_" and between and all(abs(t - index) > 1 for t in places):
                target = lines[index].split("\t")
                target[VALUE] = value
                yield "id reused on a distant row", with_line(text, index, "\t".join(target)), False
        if len(places) > 1:
            last = lines[places[-1]].split("\t")
            last[VALUE] = last[VALUE].replace(value, f"CHANGED[{ident}]", 1)
            yield "id changing value", with_line(text, places[-1], "\t".join(last)), False


def webanno_offsets(lines: list[str], rows: list[int]) -> Iterator[Case]:
    text = "\n".join(lines)
    for index in rows:
        cells = lines[index].split("\t")
        begin, end = map(int, cells[1].split("-"))
        for wrong in (f"{begin + 1}-{end + 1}", f"{begin}-{end + 1000}", f"{end}-{begin}" if end > begin else f"{begin}-{end - 1}",
                      f"{begin}-", f"-{end}", f"{begin}:{end}", "x-y"):
            yield "bad offsets", with_line(text, index, "\t".join([cells[0], wrong, *cells[2:]])), False
        for wrong_id in ("1", "1-", "a-1", "1-1.", "1--2"):
            yield "broken row id", with_line(text, index, "\t".join([wrong_id, *cells[1:]])), False


# --- doccano and Label Studio --------------------------------------------------------------------

WRONG_VALUES = (None, 5, 2.5, True, "x", [], {}, [1, 2])


def json_truncations(text: str, rng: random.Random, count: int) -> Iterator[Case]:
    """The file cut inside a JSON record (before the last closing brace of its line or of the list)."""
    last = text.rstrip().rfind("}")
    starts = [m.start() for m in re.finditer(r"\{", text)]
    positions = sorted(rng.sample(range(starts[0] + 1, last), min(count, last - starts[0] - 1)))
    for position in positions:
        line_start, line_end = text.rfind("\n", 0, position) + 1, text.find("\n", position)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if text.lstrip().startswith("[") or 0 < position - line_start < line.rfind("}"):
            yield "truncation", text[:position].encode(), False


def replaced(records: list, index: int, change: Callable[[dict], None]) -> list:
    copy = json.loads(json.dumps(records))
    change(copy[index])
    return copy


def doccano_cases(text: str) -> Iterator[Case]:
    records = [json.loads(line) for line in text.splitlines() if line.strip()]

    def dump(changed: list) -> bytes:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in changed).encode()

    for index, record in enumerate(records):
        for wrong in WRONG_VALUES:
            if not isinstance(wrong, str):
                yield "wrong type: text", dump(replaced(records, index, lambda r, w=wrong: r.__setitem__("text", w))), False
        key = "label" if "label" in record else "entities"
        for wrong in WRONG_VALUES:
            if not isinstance(wrong, list) and (key, wrong) != ("label", None):
                yield f"wrong type: {key}", dump(replaced(records, index, lambda r, w=wrong: r.__setitem__(key, w))), False
        for item in range(len(record[key])):
            yield from doccano_item_cases(records, index, key, item, dump)


def doccano_item_cases(records: list, index: int, key: str, item: int, dump: Callable[[list], bytes]) -> Iterator[Case]:
    text_length = len(records[index]["text"])
    fields = (0, 1, 2) if key == "label" else ("start_offset", "end_offset", "label")
    for field in fields:
        for wrong in WRONG_VALUES + ("7",):
            if field in (2, "label") and isinstance(wrong, str) and wrong != "":
                continue  # any string is a type
            if field not in (2, "label") and isinstance(wrong, int) and not isinstance(wrong, bool):
                continue  # another integer offset: a bad offset if any (below)
            yield f"wrong type: {key} item", dump(replaced(records, index, lambda r, f=field, w=wrong: r[key][item].__setitem__(f, w))), False
    start, end = fields[0], fields[1]
    for first, second in ((-1, None), (None, text_length + 1), ("end", "start"), (None, "start")):
        def change(r: dict, first=first, second=second) -> None:
            span = dict(enumerate(r[key][item])) if key == "label" else r[key][item]
            old = (span[start], span[end])
            new_start = old[1] if first == "end" else (old[0] if first is None else first)
            new_end = old[0] if second == "start" else (old[1] if second is None else second)
            r[key][item][start], r[key][item][end] = new_start, new_end
        yield "bad offsets", dump(replaced(records, index, change)), False
    yield "wrong type: label item", dump(replaced(records, index, lambda r: r[key].__setitem__(item, "PER 0 3"))), False


def labelstudio_cases(text: str) -> Iterator[Case]:
    tasks = json.loads(text)

    def dump(changed: list) -> bytes:
        return json.dumps(changed, ensure_ascii=False, indent=2).encode()

    for index, task in enumerate(tasks):
        for wrong in WRONG_VALUES:
            if wrong is not None and not isinstance(wrong, (dict, list)):
                yield "wrong type: annotations", dump(replaced(tasks, index, lambda t, w=wrong: t.__setitem__("annotations", w))), False
            if not isinstance(wrong, dict):
                yield "wrong type: data", dump(replaced(tasks, index, lambda t, w=wrong: t.__setitem__("data", w))), False
            if not isinstance(wrong, str):
                yield "wrong type: data.text", dump(replaced(tasks, index, lambda t, w=wrong: t["data"].__setitem__("text", w))), False
        for wrong in ("x", 5, {"id": 1}, [5]):
            yield "wrong type: annotations", dump(replaced(tasks, index, lambda t, w=wrong: t.__setitem__("annotations", w))), False
        if task.get("annotations"):
            yield from labelstudio_annotation_cases(tasks, index, dump)


def labelstudio_annotation_cases(tasks: list, index: int, dump: Callable[[list], bytes]) -> Iterator[Case]:
    """Mutations of the annotation the reader takes: the first one not cancelled."""
    read = next(i for i, a in enumerate(tasks[index]["annotations"]) if not a.get("was_cancelled"))
    annotation = tasks[index]["annotations"][read]
    for wrong in ("no", 1, [], {}):
        yield "wrong type: was_cancelled", dump(replaced(tasks, index, lambda t, w=wrong: t["annotations"][read].__setitem__("was_cancelled", w))), False
    for wrong in ({"value": {}}, "labels", 5, [5], ["r1"]):
        yield "wrong type: result", dump(replaced(tasks, index, lambda t, w=wrong: t["annotations"][read].__setitem__("result", w))), False
    text_length = len(tasks[index]["data"]["text"])
    for item, result in enumerate(annotation.get("result") or []):
        if result.get("type") != "labels":
            continue

        def set_in(path: tuple, wrong, item=item) -> Callable[[dict], None]:
            def change(t: dict) -> None:
                target = t["annotations"][read]["result"][item]
                for key in path[:-1]:
                    target = target[key]
                target[path[-1]] = wrong
            return change

        for wrong in WRONG_VALUES + ("7",):
            yield "wrong type: value.start", dump(replaced(tasks, index, set_in(("value", "start"), wrong))), False
            yield "wrong type: value.end", dump(replaced(tasks, index, set_in(("value", "end"), wrong))), False
            if not isinstance(wrong, list) or wrong == []:
                yield "wrong type: value.labels", dump(replaced(tasks, index, set_in(("value", "labels"), wrong))), False
            if not isinstance(wrong, dict):
                yield "wrong type: value", dump(replaced(tasks, index, set_in(("value",), wrong))), False
            if wrong is not None and not isinstance(wrong, str):
                yield "wrong type: value.text", dump(replaced(tasks, index, set_in(("value", "text"), wrong))), False
                yield "wrong type: type", dump(replaced(tasks, index, set_in(("type",), wrong))), False
        start, end = result["value"]["start"], result["value"]["end"]
        for new_start, new_end in ((-1, end), (start, text_length + 1), (end, start), (start, start), (start + 1, end + 1)):
            def change(t: dict, a=new_start, b=new_end, item=item) -> None:
                t["annotations"][read]["result"][item]["value"].update(start=a, end=b)
            yield "bad offsets", dump(replaced(tasks, index, change)), False


# --- column files and CoNLL-U --------------------------------------------------------------------


def column_header_cases(text: str, rng: random.Random) -> Iterator[Case]:
    lines = text.split("\n")
    header = lines[0].split("\t")
    for drop in range(len(header)):
        yield "header one name short", with_line(text, 0, "\t".join(header[:drop] + header[drop + 1 :])), False
    for insert in range(len(header) + 1):
        yield "header one name long", with_line(text, 0, "\t".join(header[:insert] + [f"EXTRA{insert}"] + header[insert:])), False
    rows = data_rows(text, lambda line: bool(line.strip()) and not line.startswith("#") and not line.startswith("TOKEN"))
    yield from truncated_rows(text, rows, "\t")
    yield from column_counts(text, rows, "\t", rng)
    yield from bad_tags(text, rows, "\t", 1)


def column_cases(text: str, rng: random.Random) -> Iterator[Case]:
    rows = data_rows(text, lambda line: bool(line.strip()))
    yield from truncated_rows(text, rows, " ")
    for index in rows:
        yield "row one column long", with_line(text, index, text.split("\n")[index] + " X O"), False
        yield "empty token", with_line(text, index, " " + text.split("\n")[index].split(" ")[1]), False
    yield from bad_tags(text, rows, " ", 1)


def conllu_cases(text: str, rng: random.Random) -> Iterator[Case]:
    lines = text.split("\n")
    rows = data_rows(text, lambda line: bool(line.strip()) and not line.startswith("#"))
    yield from truncated_rows(text, rows, "\t")
    yield from column_counts(text, rows, "\t", rng)
    for index in rows:
        cells = lines[index].split("\t")
        for wrong in ("-1", "4-", "1.5.2", "abc", "0", "", " 1", "1-1", "3-2", "1..1", "1.", ".1", "01", "+1", "1.0", "99", "9-10", "7.1"):
            if wrong != cells[0]:
                yield "broken id", with_line(text, index, "\t".join([wrong, *cells[1:]])), False
        if "-" not in cells[0] and "." not in cells[0]:
            yield "empty form", with_line(text, index, "\t".join([cells[0], "", *cells[2:]])), False
            misc = cells[9].replace("NE=", "NE=Q-")
            if misc != cells[9]:
                yield "ill-formed tag", with_line(text, index, "\t".join([*cells[:9], misc])), False
    yield "word duplicated", "\n".join(lines[: rows[2]] + [lines[rows[2]]] + lines[rows[2] :]).encode(), False
    yield "word missing", "\n".join(lines[: rows[3]] + lines[rows[3] + 1 :]).encode(), False


def cases(source: Source) -> list[Case]:
    """Every mutated copy of `source`, the same on every run (seeded)."""
    rng = random.Random(f"{SEED}-{source.name}")
    found = [*benign(source.text), *bad_bytes(source.text, rng, 12)]
    if source.name == "webanno":
        found += webanno_cases(source.text, rng)
    elif source.name.startswith("doccano"):
        found += [*json_truncations(source.text, rng, 40), *doccano_cases(source.text)]
    elif source.name == "labelstudio":
        found += [*json_truncations(source.text, rng, 60), *labelstudio_cases(source.text)]
    elif source.name == "column-header":
        found += column_header_cases(source.text, rng)
    elif source.name == "column":
        found += column_cases(source.text, rng)
    else:
        found += conllu_cases(source.text, rng)
    return found


def outcome(folder: Path, source: Source, clean: list, case: Case) -> str:
    """'' where the case went as it must; otherwise what went wrong."""
    kind, content, is_benign = case
    try:
        got = read_train(folder, source, content)
    except InputError as err:
        message = str(err)
        if is_benign:
            return f"{kind} (allowed by the format) refused: {message}"
        if "\n" in message or str(folder / f"train{source.suffix}") not in message:
            return f"{kind}: the error is not one line naming the file: {message!r}"
        return ""
    except FlairsuiteError as err:
        return f"{kind}: an error that names no file: {err}"
    if is_benign:
        return "" if got == clean else f"{kind} (allowed by the format) read into other tokens or tags"
    return f"{kind}: read without an error" + (" into other tokens or tags" if got != clean else " (the same tokens and tags)")


@pytest.mark.parametrize("name", SOURCES)
def test_every_malformed_copy_is_refused_by_one_line_or_read_unchanged(name, tmp_path):
    source = SOURCES[name]
    clean = read_train(tmp_path / "clean", source, source.text.encode())
    assert clean and any(tag != "O" for _, tags in clean for tag in tags)
    found = cases(source)
    failures = Counter()
    for number, case in enumerate(found):
        problem = outcome(tmp_path / f"case{number}", source, clean, case)
        if problem:
            failures[problem.split(": ")[0] + ": " + problem.split(": ")[1][:60] if ": " in problem else problem] += 1
    assert not failures, f"{sum(failures.values())} of {len(found)} cases of {name}: {dict(failures)}"


def test_the_suite_covers_a_thousand_cases_of_every_mutation_the_issue_names():
    counted = Counter()
    kinds: dict[str, set[str]] = {}
    for source in SOURCES.values():
        for kind, _, _ in cases(source):
            counted[source.name] += 1
            kinds.setdefault(source.name, set()).add(kind.split(":")[0])
    assert sum(counted.values()) >= 1000, counted
    assert {"bom", "crlf", "trailing blank lines", "bad bytes", "truncation"} <= set.intersection(*kinds.values())
    assert {"unclosed or malformed id", "id reused on a distant row", "id changing value", "bad offsets",
            "declaration removed", "row one column long"} <= kinds["webanno"]
    assert {"wrong type", "bad offsets"} <= kinds["doccano"] & kinds["doccano-entities"] & kinds["labelstudio"]
    assert {"header one name short", "header one name long", "row one column short"} <= kinds["column-header"]
    assert {"broken id", "word duplicated", "word missing"} <= kinds["conllu"]


def test_corpora_check_refuses_an_unclosed_id_and_a_result_object_with_one_line(tmp_path):
    """As a user sees it: the installed command, one `Error:` line naming the file and line on stderr, exit status 1."""
    import shutil
    import subprocess

    letter = SOURCES["webanno"].text.replace("PER[1]\t", "PER[1\t", 1)
    tasks = json.loads(SOURCES["labelstudio"].text)
    tasks[0]["annotations"][0]["result"] = tasks[0]["annotations"][0]["result"][0]
    exports = {"webanno": (letter, ".tsv"), "jsonl": (json.dumps(tasks), ".json")}
    for fmt, (content, suffix) in exports.items():
        folder = tmp_path / fmt
        write_file(folder / f"train{suffix}", content)
        for split in ("dev", "test"):
            write_file(folder / f"{split}{suffix}", SOURCES["webanno" if fmt == "webanno" else "labelstudio"].text)
        done = subprocess.run([shutil.which("flairsuite"), "corpora", "check", str(folder), "--input-format", fmt],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
        lines = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith(f"Error: {folder / ('train' + suffix)}:")
        assert ("no annotation value" in lines[0]) if fmt == "webanno" else ("'result' is a JSON object" in lines[0])
