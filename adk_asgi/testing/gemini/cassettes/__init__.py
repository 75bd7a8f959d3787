"""Record and replay: the cassette file and how a request matches its recording
(``cassette``), the proxy that records the real API (``recorder``) and the server that
answers from a cassette (``replayer``)."""
