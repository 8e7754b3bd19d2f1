"""Low-level file helpers: atomic writes, YAML, summary records, locks, checkpoints, paths."""
