"""The formats `predict` writes, and the options each takes.

The markup formats (`flairsuite.markup`) write the spans at their character offsets in the input (Flair's sentence and
token start positions): `tei` a TEI P5 document of a plain text, or the TEI/XML input with entity elements inserted in
place; `html` one page. The annotation-tool formats write the spans on the tokens of the text: `webanno` (WebAnno TSV
3.3 for INCEpTION), `jsonl` (doccano), `labelstudio` (Label Studio's JSON with predictions), `conll` (CoNLL-2002 BIO).
`column` (token TAB tag) and `json` (a line per sentence) write the tags of any tagger, PoS ones included. `--markup-map`
(a YAML type map) is tei's only, `--tei-blocks` tei's and html's: given to another format, either is a one-line error.
"""

from pathlib import Path
from typing import Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS
from flairsuite.markup.typemap import DEFAULT_TYPE_MAP, TypeMap, load_type_map

MARKUP_FORMATS = ("tei", "html")
FORMATS = ("column", "json", *MARKUP_FORMATS, *ANNOTATION_FORMATS)
SPAN_FORMATS = (*MARKUP_FORMATS, *ANNOTATION_FORMATS)  # the formats that write entity spans: they need a span tagger


def checked_options(fmt: str, markup_map: Optional[Path], tei_blocks: Optional[frozenset[str]]) -> TypeMap:
    """The type map for `fmt` (the default, or `markup_map` read); an unknown format, or an option its format does not take, is a one-line error."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}': one of {', '.join(FORMATS)}")
    if markup_map is not None and fmt != "tei":
        raise FlairsuiteError(f"--markup-map applies to --format tei only, not {fmt}")
    if tei_blocks is not None and fmt not in MARKUP_FORMATS:
        raise FlairsuiteError(f"--tei-blocks applies to --format tei and html only, not {fmt}")
    return load_type_map(markup_map) if markup_map is not None else DEFAULT_TYPE_MAP
