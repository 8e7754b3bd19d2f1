"""Fast inference on the CPU for the suite's taggers: the stacked embedding tensor computed straight
from the embeddings (each kind's fast featurizer from `flairsuite.embeddings`), length-bucketed
batches, int8 dynamic quantisation of the LSTMs and linear maps. `FastTagger` (tagger.py) is the
entry point; CSE models run through their `features_decode`. `stream.py` and `textfile.py` read a text of any size in
parts (words broken at line ends joined: `flairsuite.corpora.line_ends`); `reader_spans.py` holds the rules that trim
and drop the tagged spans a reader would not accept."""
