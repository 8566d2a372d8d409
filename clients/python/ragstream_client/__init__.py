"""A Python client of the ragstream daemon's HTTP API (standard library only).

    from ragstream_client import RagstreamClient, Document

    client = RagstreamClient("http://127.0.0.1:8080", token=None)
    accepted = client.ingest("kb", [Document(id="doc-1", title="Pump", text="...")])
    client.wait_until_indexed("kb", accepted)
    for r in client.retrieve("kb", "bearing lubrication", search_method="hybrid").results:
        print(r.score, r.metadata.document_id, r.text)

See README.md for every method.
"""

__version__ = "0.1.0"

from .client import RagstreamClient, Response  # noqa: E402
from .errors import (  # noqa: E402
    ApiError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RagstreamError,
    ResponseError,
    ServerError,
    TransportError,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
    VersionUnavailable,
    WaitTimeout,
)
from .models import *  # noqa: E402,F401,F403
from . import models as _models  # noqa: E402

__all__ = [
    "__version__",
    "RagstreamClient",
    "Response",
    "RagstreamError",
    "ApiError",
    "TransportError",
    "ResponseError",
    "WaitTimeout",
    "InvalidRequest",
    "Unauthenticated",
    "Forbidden",
    "NotFound",
    "Conflict",
    "VersionUnavailable",
    "PayloadTooLarge",
    "UnsupportedMediaType",
    "ServerError",
    "Unavailable",
] + list(_models.__all__)
