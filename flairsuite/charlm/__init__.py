"""Character language models: corpus preparation, training, reports."""
