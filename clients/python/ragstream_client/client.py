"""The HTTP client: one method per route of the daemon, standard library only."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from . import __version__
from .errors import (
    ApiError,
    NotFound,
    ResponseError,
    TransportError,
    WaitTimeout,
    error_from_response,
)
from .models import (
    Document,
    Health,
    HybridParameters,
    HydrateResponse,
    IndexSettingsResponse,
    IndexStats,
    IndexStatus,
    IngestAccepted,
    Model,
    QueryResponse,
    RagQueryResponse,
    Ready,
    RebuildResponse,
    RetrievalCallsResponse,
    RetrievedDocument,
    RetrieveOutput,
    to_json,
)

__all__ = ["RagstreamClient", "Response"]

M = TypeVar("M", bound=Model)

INDEX_VERSION_HEADER = "x-ragstream-index-version"


class Response:
    """A decoded answer: its status, headers (lower-cased names) and JSON body."""

    def __init__(self, status: int, headers: Dict[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def index_version(self) -> Optional[int]:
        """The ``x-ragstream-index-version`` header, when the answer has one."""
        v = self.headers.get(INDEX_VERSION_HEADER)
        try:
            return int(v) if v is not None else None
        except ValueError:
            return None


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string")
    return urllib.parse.quote(value, safe="")


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class RagstreamClient:
    """A client of one ragstream daemon.

    Args:
        base_url: where the daemon listens, e.g. ``http://127.0.0.1:8080``.
        token: a bearer token, sent as ``Authorization: Bearer <token>`` on every request
            (needed when the daemon has ``[[auth.tokens]]``).
        timeout: seconds to wait for each answer.
        headers: extra headers for every request.

    Every method returns a typed model (see :mod:`ragstream_client.models`) or raises:
    :class:`~ragstream_client.errors.ApiError` (a subclass per status, carrying the
    server's ``code``, ``message`` and ``field``) when the daemon answers an error,
    :class:`~ragstream_client.errors.TransportError` when it cannot be reached, and
    :class:`~ragstream_client.errors.ResponseError` when its answer is not the promised
    shape.
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.headers: Dict[str, str] = dict(headers or {})

    def __repr__(self) -> str:
        auth = ", token=***" if self.token else ""
        return f"RagstreamClient({self.base_url!r}{auth})"

    # -----------------------------------------------------------------------------------------
    # Transport

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        ok: Sequence[int] = (),
    ) -> Response:
        """Sends one request; ``body`` (if not ``None``) as JSON. A 2xx answer, or one whose
        status is in ``ok``, is returned decoded; any other raises an :class:`ApiError`."""
        url = self.base_url + path
        data = None
        headers = {
            "Accept": "application/json",
            "User-Agent": f"ragstream-client-python/{__version__}",
        }
        headers.update(self.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            data = json.dumps(to_json(body), ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                status = resp.status
                resp_headers = {k.lower(): v for k, v in resp.headers.items()}
                text = resp.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as e:
            status = e.code
            resp_headers = {k.lower(): v for k, v in (e.headers or {}).items()}
            try:
                text = e.read().decode("utf-8", errors="replace")
            except (OSError, AttributeError):
                text = ""
            finally:
                e.close()
            if status not in ok:
                raise error_from_response(status, text) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise TransportError(f"{method} {url}: {reason}") from e
        if not 200 <= status < 300 and status not in ok:
            raise error_from_response(status, text)
        try:
            decoded = json.loads(text) if text else None
        except ValueError:
            ctype = resp_headers.get("content-type", "")
            raise ResponseError(
                f"{method} {path}: {status} answer is not JSON ({ctype}): {text[:200]!r}"
            ) from None
        return Response(status, resp_headers, decoded)

    def _model(self, cls: Type[M], method: str, path: str, body: Any = None) -> M:
        resp = self.request(method, path, body)
        return cls.from_dict(resp.body, f"{cls.__name__}")

    def _with_version(self, cls: Type[M], method: str, path: str, body: Any) -> M:
        resp = self.request(method, path, body)
        model = cls.from_dict(resp.body, cls.__name__)
        model.index_version = resp.index_version  # type: ignore[attr-defined]
        return model

    @staticmethod
    def _index(index: str) -> str:
        return "/v1/indexes/" + _segment(index, "index")

    # -----------------------------------------------------------------------------------------
    # Contract 000

    def retrieve(
        self,
        index: str,
        query: str,
        *,
        top_k: Optional[int] = None,
        search_method: Optional[str] = None,
        query_preprocessing: Optional[str] = None,
        hybrid_alpha: Optional[float] = None,
        filters: Optional[Mapping[str, Any]] = None,
        index_version: Optional[int] = None,
    ) -> RetrievalCallsResponse:
        """Contract 000, ``POST /v1/retrieve``: one retrieval call.

        ``search_method``: ``semantic`` (server default), ``keyword`` or ``hybrid``;
        ``query_preprocessing``: ``none`` or ``normalize``; ``filters``: the exact-match
        bag (a list value matches any element)."""
        spec = _drop_none(
            {
                "index": index,
                "query": query,
                "top_k": top_k,
                "search_method": search_method,
                "query_preprocessing": query_preprocessing,
                "hybrid_alpha": hybrid_alpha,
                "filters": filters,
                "index_version": index_version,
            }
        )
        return self._model(RetrievalCallsResponse, "POST", "/v1/retrieve", {"retrieval": spec})

    # -----------------------------------------------------------------------------------------
    # Contract 001

    def rag_query(
        self,
        query: str,
        *,
        index: Optional[str] = None,
        top_k: Optional[int] = None,
        fast_mode: Optional[bool] = None,
        structural_depth: Optional[int] = None,
    ) -> RagQueryResponse:
        """Contract 001: ``POST /v1/indexes/{index}/rag/query``, or ``POST /v1/rag/query``
        (the server's ``contracts.default_index``) when ``index`` is ``None``."""
        path = self._index(index) + "/rag/query" if index is not None else "/v1/rag/query"
        body = _drop_none(
            {
                "query": query,
                "top_k": top_k,
                "fast_mode": fast_mode,
                "structural_depth": structural_depth,
            }
        )
        return self._with_version(RagQueryResponse, "POST", path, body)

    # -----------------------------------------------------------------------------------------
    # Contract 002

    def query(
        self,
        index: str,
        query: str,
        *,
        top_k: Optional[int] = None,
        retrieval_profile: Optional[str] = None,
        semantic_weight: Optional[float] = None,
        filters: Optional[Mapping[str, Any]] = None,
        debug: Optional[bool] = None,
        rerank: Optional[bool] = None,
        index_version: Optional[int] = None,
        graph_depth: Optional[int] = None,
        fusion: Optional[str] = None,
    ) -> QueryResponse:
        """Contract 002, ``POST /v1/indexes/{index}/query``.

        ``retrieval_profile``: ``auto``, ``exact``, ``balanced`` or ``semantic``;
        ``filters`` keys: ``project_id``, ``path_prefix``, ``tags`` (a list),
        ``updated_after`` (RFC 3339); ``fusion``: ``contract``, ``min_max``, ``z_score``
        or ``rrf`` (absent: the index's)."""
        body = _drop_none(
            {
                "query": query,
                "top_k": top_k,
                "retrieval_profile": retrieval_profile,
                "semantic_weight": semantic_weight,
                "filters": filters,
                "debug": debug,
                "rerank": rerank,
                "index_version": index_version,
                "graph_depth": graph_depth,
                "fusion": fusion,
            }
        )
        return self._model(QueryResponse, "POST", self._index(index) + "/query", body)

    def hydrate(
        self,
        index: str,
        chunk_ids: Iterable[str],
        *,
        window: Optional[int] = None,
        sections: Optional[bool] = None,
        index_version: Optional[int] = None,
    ) -> HydrateResponse:
        """Contract 002, ``POST /v1/indexes/{index}/hydrate``: chunks in full with
        ``window`` neighbours on each side (server default 1); unknown ids are listed in
        ``not_found``, not an error."""
        if isinstance(chunk_ids, str):
            raise TypeError("chunk_ids must be a list of ids, not one string")
        body = _drop_none(
            {
                "chunk_ids": list(chunk_ids),
                "window": window,
                "sections": sections,
                "index_version": index_version,
            }
        )
        return self._model(HydrateResponse, "POST", self._index(index) + "/hydrate", body)

    def put_settings(
        self,
        index: str,
        *,
        default_retrieval_profile: Optional[str] = None,
        default_semantic_weight: Optional[float] = None,
        auto_semantic_center: Optional[float] = None,
        auto_passage_weight: Optional[float] = None,
        fusion: Optional[str] = None,
    ) -> IndexSettingsResponse:
        """Contract 002, ``PUT /v1/indexes/{index}/settings`` (admin scope). It replaces all
        settings: one left ``None`` is cleared. The index must exist."""
        body = {
            "default_retrieval_profile": default_retrieval_profile,
            "default_semantic_weight": default_semantic_weight,
            "auto_semantic_center": auto_semantic_center,
            "auto_passage_weight": auto_passage_weight,
            "fusion": fusion,
        }
        return self._model(IndexSettingsResponse, "PUT", self._index(index) + "/settings", body)

    # -----------------------------------------------------------------------------------------
    # Ingestion and index administration

    def ingest(
        self,
        index: str,
        documents: Iterable[Union[Document, Mapping[str, Any]]] = (),
        *,
        deletes: Iterable[str] = (),
    ) -> IngestAccepted:
        """``POST /v1/indexes/{index}/documents`` (write scope): upserts and deletes,
        produced to the documents topic. The answer (202) means the events are in Kafka, not
        yet searchable: see :meth:`wait_until_indexed` and :meth:`wait_for_stats`."""
        if isinstance(deletes, str):
            raise TypeError("deletes must be a list of ids, not one string")
        docs = list(documents)
        dels = list(deletes)
        body: Dict[str, Any] = {}
        if docs:
            body["documents"] = docs
        if dels:
            body["deletes"] = dels
        if not body:
            raise ValueError("give at least one document or delete")
        return self._model(IngestAccepted, "POST", self._index(index) + "/documents", body)

    def delete_document(self, index: str, document_id: str) -> IngestAccepted:
        """``DELETE /v1/indexes/{index}/documents/{id}`` (write scope): one (soft) delete,
        produced to the documents topic (202)."""
        path = self._index(index) + "/documents/" + _segment(document_id, "document_id")
        return self._model(IngestAccepted, "DELETE", path)

    def stats(self, index: str) -> IndexStats:
        """``GET /v1/indexes/{index}/stats``: versions, documents and chunks."""
        return self._model(IndexStats, "GET", self._index(index) + "/stats")

    def status(self, index: str) -> IndexStatus:
        """``GET /v1/indexes/{index}/status``: the newest version, its commit time and how
        far the index trails the documents topic."""
        return self._model(IndexStatus, "GET", self._index(index) + "/status")

    def rebuild(self, index: str) -> RebuildResponse:
        """``POST /v1/indexes/{index}/rebuild`` (admin scope): the keyword store re-derived
        from the newest version's rows."""
        return self._model(RebuildResponse, "POST", self._index(index) + "/rebuild")

    # -----------------------------------------------------------------------------------------
    # Contract 003

    def ai_rag_query(
        self,
        query: str,
        *,
        index: Optional[str] = None,
        hybrid: Union[HybridParameters, Mapping[str, Any], None] = None,
        filters: Optional[Mapping[str, Any]] = None,
        top_k: Optional[int] = None,
        visibility: Optional[str] = None,
        visibility_override_allowed: Optional[bool] = None,
        collection_id: Optional[str] = None,
        process: Optional[str] = None,
        doc_class: Optional[str] = None,
        workflow_id: Optional[str] = None,
    ) -> RetrieveOutput:
        """Contract 003: ``POST /v1/indexes/{index}/ai/rag/query``, or
        ``POST /v1/ai/rag/query/`` (the server's default index) when ``index`` is ``None``.

        ``hybrid`` defaults to ``{}`` (every parameter at the server's default).
        ``visibility``: ``active``, ``all`` or ``deleted``. No matches is an error:
        :class:`~ragstream_client.errors.NotFound` with code ``NotFoundError`` (unless the
        server is tenant-scoped)."""
        path = (
            self._index(index) + "/ai/rag/query" if index is not None else "/v1/ai/rag/query/"
        )
        body = _drop_none(
            {
                "query": query,
                "hybrid": hybrid if hybrid is not None else {},
                "filters": filters,
                "top_k": top_k,
                "visibility": visibility,
                "visibility_override_allowed": visibility_override_allowed,
                "collection_id": collection_id,
                "process": process,
                "doc_class": doc_class,
                "workflow_id": workflow_id,
            }
        )
        return self._with_version(RetrieveOutput, "POST", path, body)

    # -----------------------------------------------------------------------------------------
    # Contract 004

    def retriever_retrieve(
        self,
        name: str,
        query: str,
        *,
        messages: Optional[List[Any]] = None,
    ) -> List[RetrievedDocument]:
        """Contract 004, ``POST /v1/retrievers/{name}/retrieve``: a retriever configured in
        the daemon's ``[retrievers.<name>]``. ``[]`` is a success; an unknown name raises
        :class:`~ragstream_client.errors.NotFound` (``retriever_not_found``)."""
        path = "/v1/retrievers/" + _segment(name, "name") + "/retrieve"
        body = _drop_none({"query": query, "messages": messages})
        resp = self.request("POST", path, body)
        if not isinstance(resp.body, list):
            raise ResponseError(f"POST {path}: expected a list, got {type(resp.body).__name__}")
        return [
            RetrievedDocument.from_dict(d, f"RetrieverResponse[{i}]")
            for i, d in enumerate(resp.body)
        ]

    # -----------------------------------------------------------------------------------------
    # Operations

    def health(self) -> Health:
        """``GET /healthz``. An unhealthy daemon answers 503 with the same body: it is
        returned (``status == "unhealthy"``), not raised."""
        resp = self.request("GET", "/healthz", ok=(503,))
        return Health.from_dict(resp.body, "Health")

    def ready(self) -> Ready:
        """``GET /readyz``. Not ready raises :class:`~ragstream_client.errors.Unavailable`
        with code ``not_ready`` and the reasons in its message."""
        return self._model(Ready, "GET", "/readyz")

    def openapi(self) -> Dict[str, Any]:
        """``GET /openapi.json``: the OpenAPI document of every route."""
        body = self.request("GET", "/openapi.json").body
        if not isinstance(body, dict):
            raise ResponseError("GET /openapi.json: expected an object")
        return body

    # -----------------------------------------------------------------------------------------
    # Waiting for ingestion

    def wait_for_stats(
        self,
        index: str,
        predicate: Callable[[IndexStats], bool],
        *,
        timeout: float = 60.0,
        interval: float = 0.1,
    ) -> IndexStats:
        """Polls :meth:`stats` until ``predicate(stats)`` holds; returns those stats. An index
        that does not exist yet (404 ``index_not_found``) counts as not yet. Raises
        :class:`~ragstream_client.errors.WaitTimeout` when ``timeout`` seconds pass first."""

        def probe() -> Tuple[bool, Any]:
            try:
                s = self.stats(index)
            except NotFound as e:
                if e.code != "index_not_found":
                    raise
                return False, e
            return bool(predicate(s)), s

        stats: IndexStats = self._poll(probe, timeout, interval, f"stats of index {index!r}")
        return stats

    def wait_until_indexed(
        self,
        index: str,
        accepted: IngestAccepted,
        *,
        timeout: float = 60.0,
        interval: float = 0.1,
    ) -> IndexStatus:
        """Polls :meth:`status` until the pipeline is done with every event of ``accepted``
        (an :meth:`ingest` or :meth:`delete_document` answer): on each partition, the
        index's checkpoint or the pipeline group's committed offset is past the event's
        offset. The checkpoint is stored in the same commit as the rows, and the group
        offset is committed after it, so the events' changes are searchable then. (An
        event that changes nothing, such as an unchanged upsert or the delete of an unknown
        id, creates no version and leaves the index's checkpoint behind; the group offset
        covers it.) Raises :class:`~ragstream_client.errors.WaitTimeout` when ``timeout``
        seconds pass first, or when Kafka cannot be asked (``indexing_lag.error``)."""
        needed: Dict[int, int] = {}
        for o in accepted.offsets:
            needed[o.partition] = max(needed.get(o.partition, -1), o.offset)

        def probe() -> Tuple[bool, Any]:
            try:
                st = self.status(index)
            except NotFound as e:
                if e.code != "index_not_found":
                    raise
                return False, e
            if st.indexing_lag.partitions is None:
                return False, st
            done_to: Dict[int, int] = {}
            for p in st.indexing_lag.partitions:
                if p.topic != accepted.topic:
                    continue
                marks = [m for m in (p.index_checkpoint, p.committed_offset) if m is not None]
                if marks:
                    done_to[p.partition] = max(marks)
            for partition, offset in needed.items():
                if done_to.get(partition, -1) <= offset:
                    return False, st
            return True, st

        status: IndexStatus = self._poll(
            probe, timeout, interval, f"events of index {index!r} to commit"
        )
        return status

    @staticmethod
    def _poll(
        probe: Callable[[], Tuple[bool, Any]], timeout: float, interval: float, what: str
    ) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            try:
                done, last = probe()
            except (TransportError, ApiError) as e:
                if isinstance(e, ApiError) and e.status < 500:
                    raise
                done, last = False, e
            if done:
                return last
            now = time.monotonic()
            if now >= deadline:
                raise WaitTimeout(
                    f"timed out after {timeout:g}s waiting for {what}; last seen: {last!r}",
                    last,
                )
            time.sleep(min(interval, max(0.0, deadline - now)))

