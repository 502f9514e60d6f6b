"""What both recipes share and is not a role of either: checkpoints and resuming (:mod:`.checkpoints`), randomly
initialised BERTs of preset sizes (:mod:`.modeling`), WordPiece tokenizers (:mod:`.tokenizers`), curve plotting
(:mod:`.plots`), the package's sample files (:mod:`.resources`) and torch threads (:mod:`.threads`). Imports nothing
itself."""
