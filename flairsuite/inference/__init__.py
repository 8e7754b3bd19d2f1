"""Fast inference on the CPU for the suite's taggers: the stacked embedding tensor computed straight
from the embeddings (each kind's fast featurizer from `flairsuite.embeddings`), length-bucketed
batches, int8 dynamic quantisation of the LSTMs and linear maps. `FastTagger` (tagger.py) is the
entry point; CSE models run through their `features_decode`."""
