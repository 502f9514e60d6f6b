"""``--mode feature_based`` (paper §5.3, Table 7): a frozen encoder, chosen layers and a trained head. Its flags,
:class:`~.arguments.FeatureBasedArguments`, are light (no torch); the mode and its model live in :mod:`.mode`
(strategies, heads, model, feature cache in their own modules), imported only when the mode is used."""

from .arguments import FeatureBasedArguments

__all__ = ["FeatureBasedArguments"]
