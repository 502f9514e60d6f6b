"""Feature-based mode (paper §5.3, Table 7): a frozen BERT encoder, chosen layers, and a small trained head.

The BERT paper compares fine-tuning with an ELMo-style *feature-based* approach on CoNLL-2003 NER: the pretrained
encoder is frozen, the activations of one or more layers are extracted, and only a task head (a randomly initialised
two-layer BiLSTM before the classifier) is trained. The code, by role:

* :mod:`.strategies` — the Table 7 layer strategies (``--feature_strategy``) and ELMo's learned scalar mix; the
  paper's numbers are in :mod:`hf_bert_tasks.paper`;
* :mod:`.heads` — the task heads, a registry keyed by problem type; each head owns its pooling and its loss;
* :mod:`.modeling` — :class:`BertFeatureBasedModel` (frozen encoder + head; ``Auto``-registered on import, so
  ``pipeline()`` and ``AutoModelFor...from_pretrained`` serve a saved one); its ``forward`` takes token inputs or
  cached features;
* :mod:`.cache` — the feature cache, a memory-mapped ``datasets.Dataset`` written once by ``Dataset.map`` over the
  frozen encoder, and the collator through which ``Trainer`` trains the head on it.

Training uses the recipe's ``Trainer`` in every case (no loop of its own): with the cache (the default) the training
and in-training evaluation splits are replaced by their caches; the model ``Trainer`` trains and saves is the whole
:class:`BertFeatureBasedModel`, so checkpoints, the best model and the final model are what ``pipeline()`` loads.
"""

from .. import paper
from .cache import (
    FeatureCacheCollator,
    build_feature_cache,
    data_fingerprint,
    encoder_fingerprint,
    find_feature_cache,
    prepare_feature_cache,
)
from .heads import (
    HEAD_REGISTRY,
    HEADS,
    POOLINGS,
    ChoiceHead,
    FeatureHead,
    SequenceHead,
    SpanHead,
    TokenBiLSTMHead,
    TokenLinearHead,
    head_class,
    register_head,
)
from .modeling import BertFeatureBasedConfig, BertFeatureBasedModel, build_feature_based_model
from .strategies import STRATEGIES, LayerCombiner, ScalarMix, Strategy, get_strategy

#: Table 7's fine-tuning rows (CoNLL-2003 dev F1, x100); kept here for importers, the numbers live in ``paper``.
PAPER_FINETUNE_F1 = paper.TABLE7_FINETUNE_DEV_F1

__all__ = [
    "HEADS",
    "HEAD_REGISTRY",
    "PAPER_FINETUNE_F1",
    "POOLINGS",
    "STRATEGIES",
    "BertFeatureBasedConfig",
    "BertFeatureBasedModel",
    "ChoiceHead",
    "FeatureCacheCollator",
    "FeatureHead",
    "LayerCombiner",
    "ScalarMix",
    "SequenceHead",
    "SpanHead",
    "Strategy",
    "TokenBiLSTMHead",
    "TokenLinearHead",
    "build_feature_based_model",
    "build_feature_cache",
    "data_fingerprint",
    "encoder_fingerprint",
    "find_feature_cache",
    "get_strategy",
    "head_class",
    "prepare_feature_cache",
    "register_head",
]
