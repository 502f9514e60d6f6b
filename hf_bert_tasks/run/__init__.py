"""The recipes' shared run machinery: arguments and flags (:mod:`.arguments`, :mod:`.flags`, :mod:`.trainer_flags`,
:mod:`.config_file`), the fine-tune ``Trainer`` (:mod:`.batching`), checkpoints and resuming (:mod:`.checkpoints`), the
lr grid (:mod:`.lr_grid`), the run record and its card (:mod:`.run_record`, :mod:`.model_card`), the Hub
(:mod:`.hub`, :mod:`.credentials`), plots, tokenizer and cache helpers. Imports nothing itself."""
