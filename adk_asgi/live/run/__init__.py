"""The ``Runner.run_live`` side of a connection: the run and its restarts (``run``), the
live models and runner (``models``), the model connections kept as one conversation
(``link``) and memory preloaded per message (``preload``). Internal."""
