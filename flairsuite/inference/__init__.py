"""Fast inference on the CPU for the suite's taggers: the stacked embedding tensor computed straight
from the embeddings (each kind's fast featurizer from `flairsuite.embeddings`), length-bucketed
batches, int8 dynamic quantisation of the character LMs' LSTMs (the tagger's own layers stay float32). `FastTagger` (tagger.py) is the
entry point; CSE models run through their `features_decode`. `saved_tagger.py` loads a saved suite tagger
(a foreign or damaged file is a one-line error) and `raw_tags.py` splits texts and tags sentences by the fast path or by
the model's own Flair `predict` (Entity-Fix on request): what `predict`, `serve`, `evaluate` and `suggest` share.
`stream.py` and `textfile.py` read a text of any size in parts (words broken at line ends joined:
`flairsuite.corpora.line_ends`); `reader_spans.py` holds the rules that trim and drop the tagged spans a reader would
not accept."""
