"""Recipe mains (one per ``hf-bert-tasks`` subcommand); ``recipes/*.py`` are thin launchers of these."""
