"""Flags for every subcommand, parsed once before transformers is imported: the one light parser built from dataclass
fields (:mod:`.parser`), the static table of ``TrainingArguments``' fields (:mod:`.trainer_fields`) and the flags the
recipes refuse or that depend on the transformers version (:mod:`.trainer_flags`), ``--config file.yaml|json``
(:mod:`.config_file`), the fast ``--help`` (:mod:`.help`) and the ``TrainingArguments`` built from a parsed command line
(:mod:`.training`). Imports nothing itself."""
