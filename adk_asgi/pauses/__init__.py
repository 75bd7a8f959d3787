"""The calls an ADK run pauses on until someone answers: tool confirmations (``approvals``,
the rules every answer is checked by), browser tools (``tools``), requests for input
(``inputs``), credentials and OAuth2 sign-ins (``credentials``, ``signin``), and how each is
recognised (``kinds``); what a live gate says about them (``notices``). Internal."""
