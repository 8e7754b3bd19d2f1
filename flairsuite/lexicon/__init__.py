"""Entity knowledge mined from raw text without labels: new-word discovery, lexicon files, matching, coverage.

`ngrams.py` counts n-grams with numpy, `discover.py` scores them (Jia et al. 2020, Appendix A),
`store.py` reads and writes lexicon TSVs, `hashing.py` finds word tokens and hashes units and windows with
numpy, `match.py` finds entries in text (Algorithm 1 maximum
matching, the DaLUKE auto-annotation rule), `coverage.py` compares a lexicon with gold entities,
`command.py` is the glue of `flairsuite discover-words` and `match-lexicon`. The `lexicon:NAME`
embedding (`flairsuite/embeddings/lexicon.py`) stacks the matches with the other embeddings.
"""
