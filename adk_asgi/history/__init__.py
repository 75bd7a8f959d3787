"""A chat as a resource: its history rebuilt from the ADK session (``messages``, with the
page's own answers read back in ``answers``) and a user's chats as a list (``chats``, one
page from the session store in ``chat_index``). Internal."""
