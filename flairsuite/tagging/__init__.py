"""The tagger's training loop over cached embeddings (`tagger_training`), its batches (`features`, `data`), the
embed-once cache (`cache`) and scoring. The runner that drives it is `flairsuite.experiments`; the tagger models live
in `flairsuite.models`; `inference` and `predict` never import this package."""
