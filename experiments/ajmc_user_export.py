"""Build `corpora/ajmc-user/`: AjMC German as a user of `train-tagger --texts` brings a project, from the HIPE-2022 files.

    python experiments/ajmc_user_export.py
    flairsuite train-tagger corpora/ajmc-user/export/ --texts corpora/ajmc-user/plain/ --out ajmc-user-tagger

- `export/`: a quarter of AjMC's train pages (19 of 76, drawn with seed 1) as `ajmc-user-train-de.tsv` in HIPE TSV, and
  the dev and test files as they are (`ajmc-user-dev-de.tsv`, `ajmc-user-test-de.tsv`): an annotated export whose file
  names name its splits.
- `plain/`: the other 57 train pages as plain text, one file a page, as OCR gives it: tokens joined by a space unless
  MISC says `NoSpaceAfter`; where it says so between two words (AjMC marks no line ends, and no word is glued to the
  next on a printed page), a line end.

Not committed (derived from the shared corpus, which is not ours to ship). `FLAIRSUITE_CORPORA` names the corpora folder.
"""

import os
import random
import shutil
from pathlib import Path

from flairsuite.files.atomic import write_text

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(os.environ.get("FLAIRSUITE_CORPORA", ROOT.parent / "shared" / "corpora")) / "hipe2022_ajmc_de"
OUT = ROOT / "corpora" / "ajmc-user"
NAME = "HIPE-2022-v2.1-ajmc-{split}-de.tsv"
PAGE_START = "# hipe2022:original_source"
PAGE_ID = "# hipe2022:document_id"
LABELLED_SHARE, SEED = 4, 1  # one page in four annotated


def pages(lines: list[str]) -> list[list[str]]:
    """The lines of each page (from its first `# hipe2022:` comment to the next page's)."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith(PAGE_START):
            found.append([])
        if found:
            found[-1].append(line)
    return found


def plain_text(page: list[str]) -> tuple[str, str]:
    """The page's id and its text as OCR gives it (module docstring)."""
    name, parts = "", []
    for line in page:
        if line.startswith(PAGE_ID):
            name = line.split("=", 1)[1].strip()
        if not line or line.startswith("# "):
            continue
        token, misc = line.split("\t")[0], line.split("\t")[-1].split("|")
        if parts and parts[-1] == "" and parts[-2][-1:].isalnum() and token[:1].isalnum():
            parts[-1] = "\n"
        parts += [token, "" if "NoSpaceAfter" in misc else " "]
    return name, "".join(parts).strip() + "\n"


def main() -> None:
    header, *body = (SOURCE / NAME.format(split="train")).read_text(encoding="utf-8").split("\n")
    train = pages(body)
    labelled = set(random.Random(SEED).sample(range(len(train)), len(train) // LABELLED_SHARE))
    shutil.rmtree(OUT, ignore_errors=True)
    kept = [line for index, page in enumerate(train) if index in labelled for line in page]
    write_text(OUT / "export" / "ajmc-user-train-de.tsv", "\n".join([header, *kept]) + "\n")
    for split in ("dev", "test"):
        write_text(OUT / "export" / f"ajmc-user-{split}-de.tsv", (SOURCE / NAME.format(split=split)).read_text(encoding="utf-8"))
    for index, page in enumerate(train):
        if index not in labelled:
            name, text = plain_text(page)
            write_text(OUT / "plain" / f"{name}.txt", text)
    print(f"{OUT}: export/ holds {len(labelled)} of {len(train)} train pages with dev and test; plain/ the other {len(train) - len(labelled)}")


if __name__ == "__main__":
    main()
