"""The recipes' shared run machinery: arguments and flags (:mod:`.arguments`, :mod:`.flags`, :mod:`.trainer_flags`,
:mod:`.config_file`), the fine-tune ``Trainer`` (:mod:`.batching`), checkpoints and resuming (:mod:`.checkpoints`), the
lr grid (:mod:`.lr_grid`), the run record and its card (:mod:`.run_record`, :mod:`.model_card`), the Hub
(:mod:`.hub`, :mod:`.credentials`), plots, tokenizer and cache helpers. Imports nothing itself; :func:`moved_function`
keeps the old spelling of a function that moved to another module working."""


def moved_function(module: str, name: str, new_module: str):
    """A stand-in for the function ``name`` that left ``module`` for ``new_module`` (relative to the package; the
    route pass of issue 41, 2026-12-05): calling it warns ``DeprecationWarning`` naming the new home and returns what
    the function there returns. A plain attribute of the old module, not a module ``__getattr__`` (which every
    ``from module import x`` would call: a hop on each run's route)."""
    new = f"hf_bert_tasks.{new_module}"

    def moved(*args, **kwargs):
        import importlib
        import warnings

        warnings.warn(f"{module}.{name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(new), name)(*args, **kwargs)

    moved.__name__ = moved.__qualname__ = name
    moved.__doc__ = f"Deprecated: moved to :func:`{new}.{name}`."
    return moved
