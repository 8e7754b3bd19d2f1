"""Markup from character-offset entity spans: TEI P5 (a new document, or in place in a TEI/XML file) and one HTML page.

Nothing here knows Flair or the models: `flairsuite.predict.tagged_text` turns a tagger's output into `Span`s
(character offsets in the text the tagger saw) and these modules write them as markup:
`spans` (the span model and tag insertion), `typemap` (entity type -> TEI element, YAML override),
`tei_blocks` (which TEI elements are texts, which are read through or left out), `tei_reading` (a block's reading
text and where an entity can be inserted), `xmlsource` (the taggable texts of a TEI/XML file and their offsets in the
file), `tei`, `html`.
"""
