"""Which TEI elements hold the running text that `predict --format tei|html` tags, and how their text is read.

Blocks: every element named in the block list (TEI namespace or none, outside `teiHeader`) is a text of its own, and the
innermost one is the unit: an `opener` holding a `dateline` and a `salute` gives two texts (and a third of the text directly
in `opener`, outside them, where there is any). A block inside another is left out of the outer one's text. The default
list is DEFAULT_BLOCKS; `--tei-blocks` replaces it (`p,head,l`) or changes it (`+quote,-note`).

Reading through: any other TEI element inside a block is read through, so that a sentence is one text however it is marked
up (`hi`, `persName`, `add`, `seg`, `unclear`, `supplied`, ...), except

- milestones (`lb`, `pb`, `cb`, `milestone`) read as a space; with `break="no"` as nothing, and the word is joined: the
  whitespace around the milestone and a line-end hyphen (`-`, `¬`, `⸗`, `=`) right before it (and before that whitespace)
  are left out of the text, so `Ber-<lb break="no"/>lin` and `Ber<lb break="no"/>\\n  lin` both read `Berlin`. The hyphen
  stays where the word goes on with a capital letter (`Lasker-<lb break="no"/>Schüler` reads `Lasker-Schüler`);
- NOT_READ elements (`del`, `surplus`, `fw`, `figDesc`, `note`) are left out of the text they stand in (a `note` is a
  text of its own when it is a block, as by default), and so is an element of another namespace;
- `choice` and `app` read one child: the first of their PREFERRED children (`expan`, `reg`, `corr`; `lem`), else their
  first child; the others (`abbr`, `orig`, `sic`; `rdg`) and the whitespace between them are left out.

`teiHeader` and everything in a left-out element are never tagged.
"""

import re
from typing import Optional

DEFAULT_BLOCKS = frozenset(
    {
        "p", "ab", "s", "head", "l", "item", "cell", "label", "note", "trailer", "speaker", "stage",
        "opener", "closer", "dateline", "salute", "signed", "byline", "docAuthor", "docDate", "titlePart",
        "address", "addrLine", "postscript",
    }
)  # fmt: skip
MILESTONES = frozenset({"lb", "pb", "cb", "milestone"})
NOT_READ = frozenset({"del", "surplus", "fw", "figDesc", "note"})
PREFERRED = {"choice": ("expan", "reg", "corr"), "app": ("lem",)}
HYPHENS = frozenset("-¬⸗=")
HEADER = "teiHeader"
NAME = re.compile(r"[A-Za-z_][\w.-]*")


def parse_blocks(value: str, base: frozenset[str] = DEFAULT_BLOCKS) -> frozenset[str]:
    """The block list of `--tei-blocks`: comma-separated element names replace `base`; `+name` adds to it, `-name` takes from it.

    A bad name, an empty list, a mix of plain and +/- names or `teiHeader` raises ValueError."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise ValueError("give element names separated by commas, e.g. p,head,opener or +quote,-note")
    changes = [name[0] in "+-" for name in names]
    if any(changes) and not all(changes):
        raise ValueError(f"'{value}': either a list of element names or changes to the default list (+name, -name), not both")
    blocks = set(base) if all(changes) else set()
    for name in names:
        sign, bare = (name[0], name[1:]) if name[0] in "+-" else ("+", name)
        if not NAME.fullmatch(bare):
            raise ValueError(f"'{bare}' is not an element name")
        if bare == HEADER:
            raise ValueError("teiHeader is never tagged")
        blocks.discard(bare) if sign == "-" else blocks.add(bare)
    if not blocks:
        raise ValueError(f"'{value}' leaves no element to tag")
    return frozenset(blocks)


def chosen_child(parent: str, children: list[str]) -> Optional[int]:
    """The index of the child that a `choice` or `app` reads (by PREFERRED, else the first), None if it has no child element."""
    for index, name in enumerate(children):
        if name in PREFERRED.get(parent, ()):
            return index
    return 0 if children else None
