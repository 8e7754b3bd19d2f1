"""`flairsuite suggest`: the sentences a saved tagger is least sure of, pre-annotated with their context, to annotate next.

TEXTS (one file or a folder of files, a file a letter) is read into units (`units`, `texts`), scored by the model's
uncertainty batch by batch (`scoring`), grouped into candidates (`candidates`) of which only a bounded pool is kept, the
top N chosen with near-duplicates kept apart (`pool`), and the chosen ones written with the model's tags in an
annotation tool's import format (`output`); `suggestion` holds the entry point (`suggest`) and what it returns.

Candidates are ranked by the model's uncertainty (`flairsuite.models.uncertainty`: for a CRF tagger 1 - p(best
path)^(1/n), for a softmax head the mean token entropy; `--measure entropy`: the mean entropy of the tag marginals),
near-duplicates kept apart (`flairsuite.models.selection`'s rule: word-set Jaccard >= 0.8 with one already chosen;
used only to fill up N), and the top N are written with the model's tags (the Viterbi / arg-max tags, as `predict`
gives them) in an annotation tool's import format. Ranking reads the model's own tags; the written tags go through the
reader rules (`output`).
"""
