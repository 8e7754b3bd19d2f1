#!/usr/bin/env bash
# The German BERTs behind Tables 6 and 9 (experiments/table6-de.yaml, table9-de.yaml): the `cpu`
# preset (4 x 256) pre-trained with masked LM on the same token budget, varying one thing at a time:
#
#   bert/de-mlm-abs          absolute positions, token masking
#   bert/de-mlm-abs-wwm      absolute positions, whole-word masking
#   bert/de-mlm-rel          relative positions, token masking
#   bert/de-mlm-rel-wwm      relative positions, whole-word masking (the paper's winner)
#   bert/de-mlm-rel-wwm-wwa  the same with Whole-Word Attention (Table 9)
#
# Each run stops after TOKENS tokens (default 10,000,000: about 75 minutes a model on one thread of a Zen 4 in
# bfloat16; the learning rate decays to its floor over exactly that budget) and resumes exactly after a kill:
# run the script again. One thread per model by default, so two can train side by side:
#   THREADS=1 ONLY=de-mlm-abs experiments/bert_variants_de.sh &
#   THREADS=1 ONLY=de-mlm-rel experiments/bert_variants_de.sh &
#
# PRECISION (default bfloat16): the training steps' arithmetic, the same for all five so that their hours compare;
# bfloat16 gives twice the tokens/s of float32 at the same validation loss on a CPU with avx512_bf16
# (benchmarks/README.md, bert_speed.py part 3). On a CPU without bfloat16 units train-bert refuses it with one
# line: PRECISION=float32 there (a resumed model may change it, but then it is not bit-exact and its summary.json
# says `mixed`).
set -euo pipefail
# The budget: the released bert:de-cpu saw 3.37 M tokens and ended at 16.3 % valid MLM accuracy, still rising by
# 0.6-1.4 points per 300 k tokens (bert/de-cpu/summary.json), so 3 M compares models that have learned little
# beyond token frequencies. bfloat16 doubles the tokens an hour buys (benchmarks/README.md, bert_speed part 3).
TOKENS=${TOKENS:-10000000}
PRECISION=${PRECISION:-bfloat16}
THREADS=${THREADS:-1}
ONLY=${ONLY:-}
declare -A FLAGS=(
  [de-mlm-abs]="--positions absolute --no-wwm"
  [de-mlm-abs-wwm]="--positions absolute --wwm"
  [de-mlm-rel]="--positions relative --no-wwm"
  [de-mlm-rel-wwm]="--positions relative --wwm"
  [de-mlm-rel-wwm-wwa]="--positions relative --wwm --attention wwa"
)
for name in de-mlm-abs de-mlm-abs-wwm de-mlm-rel de-mlm-rel-wwm de-mlm-rel-wwm-wwa; do
  [ -n "$ONLY" ] && [ "$ONLY" != "$name" ] && continue
  # done once its summary has seen the budget (train-bert keeps checkpoint.pt, so that alone says nothing); the
  # learning rate's decay horizon is --max-tokens, so keep TOKENS the same across reruns or the budgets differ
  if [ -f "bert/$name/summary.json" ] && python -c "import json, sys; sys.exit(json.load(open(sys.argv[1])).get('tokens_seen', 0) < int(sys.argv[2]))" "bert/$name/summary.json" "$TOKENS"; then
    echo "bert/$name: trained ($TOKENS tokens)"; continue
  fi
  resume=""; [ -f "bert/$name/checkpoint.pt" ] && resume="--resume"
  # shellcheck disable=SC2086
  flairsuite train-bert --lang de --name "$name" --objective mlm ${FLAGS[$name]} --max-tokens "$TOKENS" --threads "$THREADS" --precision "$PRECISION" $resume
done
