"""Register the flairsuite small-BERT classes with transformers' Auto classes (no trust_remote_code needed)."""

from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM, AutoModelForPreTraining

from flairsuite.bert.modeling_flairsuite_bert import FlairsuiteBertConfig, FlairsuiteBertForMaskedLM, FlairsuiteBertForPreTraining, FlairsuiteBertModel

_registered = False


def register() -> None:
    """Map model_type "flairsuite_bert" to our config and model classes; calling it again does nothing."""
    global _registered
    if _registered:
        return
    AutoConfig.register(FlairsuiteBertConfig.model_type, FlairsuiteBertConfig, exist_ok=True)
    AutoModel.register(FlairsuiteBertConfig, FlairsuiteBertModel, exist_ok=True)
    AutoModelForMaskedLM.register(FlairsuiteBertConfig, FlairsuiteBertForMaskedLM, exist_ok=True)
    AutoModelForPreTraining.register(FlairsuiteBertConfig, FlairsuiteBertForPreTraining, exist_ok=True)
    _registered = True
