"""A weather desk whose tools declare every shape ``adk-asgi types`` types (see ``agent``)."""
