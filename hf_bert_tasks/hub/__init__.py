"""The Hugging Face Hub: model cards shared by both recipes (:mod:`.cards`), pushing a finished run with its card and
loading a pushed one (:mod:`.push`), and keeping tokens out of everything written (:mod:`.credentials`). Imports nothing
itself."""
