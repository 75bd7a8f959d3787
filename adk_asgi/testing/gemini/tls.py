"""TLS for the emulator: a throwaway certificate authority and what clients must trust.

google-genai always opens the Live API over ``wss://``: it replaces the base URL's scheme
with ``wss`` even for an ``http://`` base URL (``BaseApiClient._websocket_base_url``). So
the emulator serves HTTPS and WSS on one port with a certificate from a CA made for this
run (the ``trustme`` package). google-genai builds its SSL contexts from
``SSL_CERT_FILE`` when set (``_ensure_httpx_ssl_ctx``, ``_ensure_aiohttp_ssl_ctx``,
``_ensure_websocket_ssl_ctx``: ``cafile=os.environ.get('SSL_CERT_FILE', certifi.where())``),
so a process only needs ``SSL_CERT_FILE`` to point at a bundle that holds the CA. The
bundle also holds certifi's roots, so other TLS clients of that process keep working.
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ("TlsMaterial",)

# The names a client may use to reach a loopback emulator.
_HOSTS = ("127.0.0.1", "localhost", "::1")


class TlsMaterial:
    """A CA, a server certificate for the loopback names, and the files that hold them."""

    def __init__(self, directory: Path, hosts: tuple[str, ...] = ()) -> None:
        try:
            import trustme
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "The Gemini emulator serves TLS with a throwaway CA and needs the "
                "'trustme' package: pip install 'adk-asgi[testing]'"
            ) from exc
        directory.mkdir(parents=True, exist_ok=True)
        self._ca = trustme.CA(organization_name="adk-asgi Gemini emulator")
        names = tuple(dict.fromkeys((*_HOSTS, *hosts)))
        server = self._ca.issue_cert(*names)
        self.ca_file = directory / "ca.pem"
        """The CA certificate alone (PEM)."""
        self.cert_file = directory / "server.pem"
        """The server's key and certificate chain (PEM)."""
        self.bundle_file = directory / "ca-bundle.pem"
        """certifi's roots plus the CA: the file ``SSL_CERT_FILE`` points at."""
        self._ca.cert_pem.write_to_path(str(self.ca_file))
        server.private_key_and_cert_chain_pem.write_to_path(str(self.cert_file))
        self.bundle_file.write_bytes(_public_roots() + b"\n" + self._ca.cert_pem.bytes())

    def client_context(self) -> ssl.SSLContext:
        """An SSL context that trusts the emulator (and nothing else)."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        return context


def _public_roots() -> bytes:
    try:
        import certifi
    except ImportError:  # pragma: no cover - google-genai depends on certifi
        return b""
    return Path(certifi.where()).read_bytes()
