"""The WebSocket (live) side: the handshake (``endpoint``), one ``Connection`` per socket
with its upstream (``upstream``: frames -> commands -> inbox or the model's queue) and
protocol B's resume (``resume``); frames in ``protocol/``, the turn layer in ``turns/``, the
``run_live`` side in ``run/``, what runs wait for in ``gate/``. Internal."""
