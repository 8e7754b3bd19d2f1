"""Running the application: check the optional packages, load the model, bind the socket, then hand it to uvicorn.

The socket is bound here, before uvicorn starts, so that a port in use is a one-line error and
`--port 0` picks a free port whose URL is printed (tests and `benchmarks/serve_load.py` use that).
"""

import importlib.util
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flairsuite.errors import FlairsuiteError

EXTRA = ("fastapi", "uvicorn")


def require_extra() -> None:
    """A one-line error unless FastAPI and uvicorn (the `serve` extra) are installed."""
    missing = [name for name in EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise FlairsuiteError(f"flairsuite serve needs {' and '.join(missing)}: pip install 'flairsuite[serve]'")


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on host:port (port 0: a free one); an address that cannot be used is a one-line error."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as err:
        raise FlairsuiteError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        sock.close()
        raise FlairsuiteError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    return sock


def url(sock: socket.socket) -> str:
    """The http URL of a listening socket (an IPv6 address in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(model_path: Path, host: str, port: int, announce: Callable[[str], None], access_log: bool = True, **options: Any) -> None:
    """Load the model (`create_app`'s options), listen on host:port, say where (`announce`), and serve until stopped."""
    require_extra()
    import uvicorn

    from flairsuite.runtime.allocator import keep_freed_memory
    from flairsuite.serve.app import create_app

    keep_freed_memory()  # every batch allocates the LMs' state buffers anew: kept, not returned to the system and faulted in again
    app = create_app(model_path, **options)
    sock = listen(host, port)
    announce(f"serving {model_path.name} on {url(sock)} (POST /tag; INCEpTION recommender: POST /predict, POST /train; Ctrl+C stops)")
    config = uvicorn.Config(app, log_level="info", access_log=access_log, timeout_graceful_shutdown=5)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
