"""flairsuite: character LMs, word vectors and Flair sequence taggers, trained and compared on modest hardware."""

__version__ = "0.1.0"
