"""Tagging experiments: cached embeddings, the training loop over them, decoding and scoring, the grid runner."""
