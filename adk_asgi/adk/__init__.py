"""The ADK side: the runner and its services (``runtime``, ``services``, ``sessions`` with
the hardened ``sqlite`` and bounded in-memory services), the bridge's ADK plugin
(``plugin``), the artifacts an agent saves (``artifacts``), memory (``remember``) and the
start-up warm-up (``warmup``). Internal."""
