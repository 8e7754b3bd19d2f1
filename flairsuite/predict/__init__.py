"""`flairsuite predict`: tag a raw text file with a saved suite tagger, as token/tag columns, JSON spans, TEI or HTML.

The model is loaded (`flairsuite.inference.saved_tagger`) and its sentences tagged (`flairsuite.inference.raw_tags`)
by the inference package; this package turns the tags into what `predict` writes, a module per job: `formats` (the
formats and the options each takes), `loading` (the model checked for the format, loaded once for many inputs),
`tagged_text` (a tagged text's spans and tokens at character offsets of the file), `outputs` and `annotation_outputs`
(the writers, part by part), `plain_text` (a plain text streamed in parts), `xml_input` (a TEI/XML input tagged in
place), `prediction` (what a prediction did: its summary line) and `inputs` (an input file or stdin predicted:
`predict_to`, the entry point). `flairsuite predict` on many files is `flairsuite.cli.predict_files`.
"""
