"""Padding-free batches (``--padding_free``, pretraining and fine-tuning): a collator that flattens any padded batch
into one row of real tokens (:mod:`.collator`), a variable-length attention function registered with transformers
(:mod:`.attention`) and the model wrapper that runs the encoder on the row and re-pads before the heads
(:mod:`.model`). Why: docs/design.md, "padding_free: batches without padding"."""

from .collator import PaddingFreeCollator, flatten_padded_batch
from .model import enable_padding_free


def apply_padding_free(model, collator):
    """``--padding_free`` in a recipe: ``model`` (or the transformers model in its peft wrapper) takes padding-free
    batches (:func:`enable_padding_free`, in place) and ``collator`` is wrapped (:class:`PaddingFreeCollator`, the
    wrapper returned). Raises ``ValueError`` as :func:`enable_padding_free`."""
    enable_padding_free(model)
    return PaddingFreeCollator(collator)


__all__ = ["PaddingFreeCollator", "apply_padding_free", "enable_padding_free", "flatten_padded_batch"]
