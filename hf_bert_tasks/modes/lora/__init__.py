"""``--mode lora``: peft LoRA adapters on the frozen encoder plus the trained task head (Hu et al., 2021). Its flags,
:class:`~.arguments.LoraArguments`, are light (no torch); the mode, :class:`~.mode.LoraMode`, is imported only when
the mode is used (the registry imports :mod:`.mode`)."""

from .arguments import LoraArguments

__all__ = ["LoraArguments"]
