"""Tagger models and their registry: CRF math, LCRF-NER, Class-Start-End, the feature-tagger protocol, Entity-Fix.

Nothing here knows about experiment grids, caches or result folders (that is `flairsuite.tagging`):
`inference` and `predict` use these models without the runner.
"""
