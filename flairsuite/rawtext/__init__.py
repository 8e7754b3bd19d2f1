"""Raw text prepared once for the suite's pre-training (character LMs, fastText, ...): documents from
the registry's raw-text sets or the user's files, NER and PoS dev/test sentences cut out, split into
train/valid/test and encoded into memory-mapped character arrays."""
