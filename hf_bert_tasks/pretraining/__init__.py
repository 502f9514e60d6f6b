"""BERT pretraining (paper §3.1, Appendix A.2), by role: :mod:`.data` (documents and google's instances: NSP pairs
or MLM-only blocks), :mod:`.collators` (``DataCollatorForBertPretraining``: masking, padding), :mod:`.config` (the
recipe's argument dataclasses), :mod:`.trainer` (``PretrainingTrainer``, the masked-positions-only head) and
:mod:`.recipe` (``run_pretrain``, top to bottom). Importing this package imports none of them."""
