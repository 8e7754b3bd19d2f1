"""The experiment runner: the grid of runs, the embed-once cache, batches gathered from it, the tagger
training loop (`TaggerTraining`), scoring and run locks. The tagger models themselves live in
`flairsuite.models`; `inference` and `predict` never import this package."""
