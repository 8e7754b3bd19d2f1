"""Fast inference for Flair SequenceTaggers on the CPU: the stacked embedding tensor computed straight from
the embeddings (no per-token storage), length-bucketed batches, int8 dynamic quantisation of the
character LMs' and the tagger's LSTMs and linear maps. `FastTagger` (tagger.py) is the entry point."""
