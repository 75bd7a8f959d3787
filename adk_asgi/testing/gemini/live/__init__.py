"""The emulator's Live API (``BidiGenerateContent``): the endpoint and a connection's
setup, session and lifetime (``endpoint``, ``setup``, ``state``, ``sessions``), its frames
(``socket``), what the client sends (``input``, ``images``, ``audio``), and the model's turns
(``speaker``, ``voice``)."""
