"""The turn layer of a live connection: which assistant message is open and how it ends
(``conversation``), one turn's state (``turn``) and where its chunks go (``output``).
Internal."""
