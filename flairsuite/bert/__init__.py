"""Small BERTs pre-trained from scratch.

Importing this package registers the model type "flairsuite_bert" with transformers' Auto classes, so Flair and
transformers load relative/WWA models without trust_remote_code.
"""

from flairsuite.bert.registration import register

register()
