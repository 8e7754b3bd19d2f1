"""The names of the labeled file formats, without their readers: what `corpora --input-format` offers on `--help`
without importing the readers (`flairsuite.corpora.formats.READERS` holds a reader under each name, in this order).

A preset (`PRESETS`) names the settings of a labeled format that one kind of file always has: `format: hipe` reads a
file as `column` with the preset's keys; any key an own-corpus entry (or a registry `format:`) gives itself wins, e.g.
`label: NE-FINE-LIT`. The one declaration of each preset is here; `with_preset` expands it wherever a format is named.
"""

from collections.abc import Mapping
from typing import Any

LABELED_FORMATS = ("column", "conllu", "spans_json", "webanno", "jsonl")

# HIPE-2020/2022 TSV (CLEF HIPE shared tasks): a header row TOKEN NE-COARSE-LIT ... MISC, tab-separated, `# key = value`
# comment lines, each document after a `# hipe2022:document_id = ...` line, `|`-separated flags in MISC (a sentence ends
# at EndOfSentence; NoSpaceAfter: no whitespace after the token; a hyphen token flagged EndOfLine between two pieces of a
# word is a line-end break, flairsuite.corpora.break_marks), IOB2 tags
PRESETS: dict[str, dict[str, Any]] = {
    "hipe": {"format": "column", "sep": "tab", "header": True, "text": "TOKEN", "label": "NE-COARSE-LIT",
             "sentence_end": "MISC:EndOfSentence", "comment": "# ", "document_comment": "# hipe2022:document_id", "scheme": "bio",
             "line_break": "MISC:EndOfLine"},
}
INPUT_FORMATS = (*LABELED_FORMATS, *PRESETS)  # what a user may name: the readers' formats and the presets


def with_preset(settings: Mapping[str, Any], key: str = "format") -> dict[str, Any]:
    """`settings` (an own-corpus entry, or with `key="kind"` a registry `format:` mapping) with the preset its `key`
    names expanded: the preset's settings, its format under `key`, then the entry's own other keys; no preset: as it is."""
    preset = PRESETS.get(settings.get(key)) if isinstance(settings.get(key), str) else None
    if preset is None:
        return dict(settings)
    expanded = {(key if name == "format" else name): value for name, value in preset.items()}
    return {**expanded, **{name: value for name, value in settings.items() if name != key}}
