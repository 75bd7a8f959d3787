"""The HTTP side: ``ChatEndpoint`` (``endpoint``: ``POST`` a turn, resume and stop its
stream), routed by ``routes``; a turn's pipeline in ``turn/``; the chat's resource routes
(``history``, ``chats``, ``artifacts``), the completion of long-running calls
(``completion``), the OAuth2 callback (``oauth``) and the probes (``health``). Internal."""
