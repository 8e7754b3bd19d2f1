"""Corpus registry, validating loaders, raw-text streams, statistics and downloads."""
