"""The names of the labeled file formats, without their readers: what `corpora --input-format` offers on `--help`
without importing the readers (`flairsuite.corpora.formats.READERS` holds a reader under each name, in this order)."""

LABELED_FORMATS = ("column", "conllu", "spans_json", "webanno", "jsonl")
