"""Exceptions raised by the client.

Every error the daemon answers has the body ``{"error": {"code", "message", "field"?}}``
(contract 003 uses its own codes, ``InputError`` and ``NotFoundError``, in the same
envelope). The client turns such an answer into an :class:`ApiError` subclass chosen by the
HTTP status, carrying the server's ``code``, ``message`` and ``field``::

    try:
        client.retrieve("kb", "pump", top_k=0)
    except InvalidRequest as e:
        print(e.status, e.code, e.field, e.message)   # 400 invalid_request retrieval.top_k ...

Failures that are not an answer from the daemon (it cannot be reached, or its answer is not
the JSON the contract promises) are :class:`TransportError` and :class:`ResponseError`.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "RagstreamError",
    "TransportError",
    "ResponseError",
    "WaitTimeout",
    "ApiError",
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
    "error_from_response",
]


class RagstreamError(Exception):
    """The base of every exception the client raises."""


class TransportError(RagstreamError):
    """The request did not get an HTTP answer: connection refused, reset, timed out."""


class ResponseError(RagstreamError):
    """The daemon answered, but not with the shape the contract promises (not JSON, a
    required field missing, a field of the wrong type)."""


class WaitTimeout(RagstreamError, TimeoutError):
    """A ``wait_*`` helper's deadline passed before its condition held. ``last`` is the last
    value polled (or the last error), for the message and for debugging."""

    def __init__(self, message: str, last: Any = None) -> None:
        super().__init__(message)
        self.last = last


class ApiError(RagstreamError):
    """An error answered by the daemon.

    Attributes:
        status: the HTTP status (400, 401, ...).
        code: the server's stable error code (``invalid_request``, ``index_not_found``,
            ``InputError``, ...).
        message: the server's message, for people.
        field: the field at fault as a dotted path (``retrieval.top_k``), when there is one.
        body: the whole decoded error body (a dict), or the raw text when it was not JSON.
        oldest_available_version, latest_version: ``version_unavailable`` only.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: Optional[str] = None,
        body: Any = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.body = body
        err = body.get("error") if isinstance(body, dict) else None
        err = err if isinstance(err, dict) else {}
        self.oldest_available_version: Optional[int] = err.get("oldest_available_version")
        self.latest_version: Optional[int] = err.get("latest_version")
        where = f" (field {field})" if field else ""
        super().__init__(f"{status} {code}: {message}{where}")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"message={self.message!r}, field={self.field!r})"
        )


class InvalidRequest(ApiError):
    """400: ``invalid_request`` (or contract 003's ``InputError``)."""


class Unauthenticated(ApiError):
    """401: no token, or an unknown one (``unauthenticated``)."""


class Forbidden(ApiError):
    """403: the token may not do this on this index (``forbidden``)."""


class NotFound(ApiError):
    """404: ``index_not_found``, ``retriever_not_found``, ``not_found``, or contract 003's
    ``NotFoundError`` (no matches)."""


class Conflict(ApiError):
    """409: ``embedder_mismatch``."""


class VersionUnavailable(ApiError):
    """410: the pinned ``index_version`` was pruned. See ``oldest_available_version`` and
    ``latest_version``."""


class PayloadTooLarge(ApiError):
    """413: ``body_too_large``."""


class UnsupportedMediaType(ApiError):
    """415: ``unsupported_media_type``."""


class ServerError(ApiError):
    """500 and other 5xx but 503: ``internal``, ``index_damaged``."""


class Unavailable(ApiError):
    """503: ``query_timeout``, ``embedder_unavailable``, ``bus_unavailable``, ``not_ready``."""


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: VersionUnavailable,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    503: Unavailable,
}


def error_from_response(status: int, text: str) -> ApiError:
    """The exception for an error answer: its status and its body as text."""
    import json

    body: Any = text
    code, message, field = f"http_{status}", text.strip() or f"HTTP {status}", None
    try:
        body = json.loads(text) if text else None
    except ValueError:
        pass
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        code = str(err.get("code", code))
        message = str(err.get("message", message))
        f = err.get("field")
        field = str(f) if f is not None else None
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ApiError
    return cls(status, code, message, field, body)
