"""One TLS handshake with a server, made the way its client library makes it.

kazoo and kombu retry a failed handshake for ever and log it on every
attempt (kazoo's ``start`` ends in a bare "Connection time-out"): whatever
the certificate problem was, the operator reads it from a wall of
reconnection logs. :func:`handshake_problem` makes the same handshake once
and says what failed.
"""

import socket
import ssl


def client_context(ca=None, certfile=None, keyfile=None, keyfile_password=None,
                   verify=True, check_hostname=False):
    """An SSL context configured as kazoo's ``create_tcp_connection`` and
    kombu's ``ssl`` dict configure theirs: the system CAs plus ``ca``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    context.check_hostname = bool(check_hostname and verify)
    context.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    if ca:
        context.load_verify_locations(ca)
    if certfile:
        context.load_cert_chain(certfile=certfile, keyfile=keyfile or None,
                                password=keyfile_password or None)
    return context


def _reason(error):
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {error.verify_message}"
    return getattr(error, "reason", None) or str(error) or type(error).__name__


def handshake_problem(host, port, context, timeout=5.0):
    """Why a TLS handshake with ``host:port`` fails (None: it succeeds, or
    the server cannot be reached at all -- not a TLS problem)."""
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError:
        return None
    try:
        with context.wrap_socket(sock, server_hostname=host) as tls:
            tls.do_handshake()
    except ssl.SSLError as error:
        return f"TLS handshake failed: {_reason(error)}"
    except OSError as error:
        # The server hung up during the handshake: it wants TLS settings we
        # do not have (a client certificate), or speaks no TLS on this port.
        return f"TLS handshake failed: {error.strerror or type(error).__name__}"
    finally:
        sock.close()
    return None


def split_hosts(hosts, default_port):
    """``h1:p1,h2,[::1]:p3`` as [(host, port)]."""
    result = []
    for item in hosts.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest.lstrip(":") or default_port
        else:
            host, _, port = item.partition(":")
        result.append((host, int(port or default_port)))
    return result
