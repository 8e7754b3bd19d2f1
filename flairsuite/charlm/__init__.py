"""Character language models: the recipes (hyper-parameter presets), the trainer around Flair's
`LanguageModel` (`CharLMTrainer`, a `flairsuite.training.TrainingLoop`) and the `train-charlm`
command. The raw text it trains on is prepared by `flairsuite.rawtext`."""
