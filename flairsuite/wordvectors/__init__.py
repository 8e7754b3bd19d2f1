"""fastText word vectors trained on a language's prepared raw text, saved for plain Flair `WordEmbeddings`."""
