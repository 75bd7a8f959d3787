"""The REST side of the emulator: ``generateContent`` and ``streamGenerateContent``
(``generate``) and how a reply is cut into streamed chunks (``chunks``)."""
