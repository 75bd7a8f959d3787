"""What the emulated model answers: a request and its reply (``exchange``), the scripting
API (``script``), the default script (``default``, arguments from a declaration in
``arguments``) and the demo agent's phrases (``demo``)."""
