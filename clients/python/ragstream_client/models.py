"""Typed models of what the daemon sends and accepts.

Response models mirror the component schemas of the daemon's ``GET /openapi.json`` (the
schema each class follows is named in its docstring) and what the daemon actually returns.
Each is a dataclass built by :meth:`Model.from_dict`, which checks that every required field
is present and of the declared type. A field the model does not know is kept, never an
error: open objects (chunk metadata, which carries a document's custom keys) collect such
keys in ``extra``; every other model lists them in ``unknown_fields()``. ``raw`` is the
decoded JSON the model was built from.

Request models (:class:`Document`, :class:`Page`, :class:`Triple`, :class:`Entity`,
:class:`HybridParameters`) turn into JSON with :func:`to_json`, leaving out fields that are
``None``. Plain dicts are accepted wherever a request model is.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from .errors import ResponseError

__all__ = [
    "Model",
    "to_json",
    # shared
    "Offsets",
    "ChunkMetadata",
    # requests
    "Page",
    "Triple",
    "Entity",
    "Document",
    "HybridParameters",
    # 000
    "RelevanceComponents",
    "RetrievalResult",
    "RetrievalCall",
    "RetrievalCallsResponse",
    # 001
    "RagResultMetadata",
    "RagResult",
    "KgTriple",
    "RagQueryResponse",
    # 002
    "ScoreDetail",
    "Passage",
    "DocumentGroup",
    "Relation",
    "QueryResponse",
    "ChunkBrief",
    "ChunkContext",
    "HydratedChunk",
    "HydratedSection",
    "HydrateResponse",
    "AutoCalibration",
    "IndexSettings",
    "IndexSettingsResponse",
    "KafkaOffset",
    "IngestAccepted",
    "RebuildResponse",
    "IndexStats",
    "PartitionLag",
    "IndexingLag",
    "IndexStatus",
    # 003
    "MatchParent",
    "MatchMeta",
    "RetrieveMatch",
    "RetrieveRouting",
    "RetrieveMeta",
    "RetrieveOutput",
    # 004
    "RetrievedDocument",
    # operations
    "Problem",
    "PipelineHealth",
    "Health",
    "Ready",
]

M = TypeVar("M", bound="Model")

_NoneType = type(None)


# ---------------------------------------------------------------------------------------------
# Parsing


class Model:
    """Base of the response models: parsing from decoded JSON, and what was left over."""

    #: Names of the JSON keys a model reads (the dataclass fields, minus ``extra``).
    @classmethod
    def json_fields(cls) -> Tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls: Type[M], data: Any, path: str = "") -> M:
        """Builds the model from decoded JSON; :class:`ResponseError` names the first field
        that is missing or of the wrong type (as a path such as ``results[0].score``)."""
        return _parse_model(cls, data, path or cls.__name__)

    @property
    def raw(self) -> Any:
        """The decoded JSON this model was built from."""
        return self.__dict__.get("_raw")

    def unknown_fields(self) -> List[str]:
        """Keys the server sent that this model (and the models inside it) do not declare,
        as paths. Open objects (``extra``) do not count."""
        return list(self.__dict__.get("_unknown", ()))


def _hints(cls: type) -> Dict[str, Any]:
    cache = cls.__dict__.get("_hints_cache")
    if cache is None:
        module = sys.modules[cls.__module__]
        cache = typing.get_type_hints(cls, vars(module))
        setattr(cls, "_hints_cache", cache)
    return cache


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _parse_model(cls: Type[M], data: Any, path: str) -> M:
    if not isinstance(data, dict):
        raise ResponseError(f"{path}: expected an object ({cls.__name__}), got {_json_kind(data)}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    has_extra = "extra" in fields
    kwargs: Dict[str, Any] = {}
    unknown: List[str] = []
    extra: Dict[str, Any] = {}
    for name, f in fields.items():
        if name == "extra":
            continue
        if name in data:
            kwargs[name] = _parse_value(hints[name], data[name], f"{path}.{name}", unknown)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            if _is_optional(hints[name]):
                kwargs[name] = None
            else:
                raise ResponseError(f"{path}: the required field {name!r} is missing")
    for key, value in data.items():
        if key not in fields or key == "extra":
            if has_extra:
                extra[key] = value
            else:
                unknown.append(f"{path}.{key}")
    if has_extra:
        kwargs["extra"] = extra
    obj = cls(**kwargs)
    obj.__dict__["_raw"] = data
    obj.__dict__["_unknown"] = unknown
    return obj


def _is_optional(tp: Any) -> bool:
    return typing.get_origin(tp) is Union and _NoneType in typing.get_args(tp)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _parse_value(tp: Any, value: Any, path: str, unknown: List[str]) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is Union:
        args = typing.get_args(tp)
        if value is None:
            if _NoneType in args:
                return None
            raise ResponseError(f"{path}: expected {_type_name(tp)}, got null")
        last: Optional[ResponseError] = None
        for arg in args:
            if arg is _NoneType:
                continue
            try:
                return _parse_value(arg, value, path, unknown)
            except ResponseError as e:
                last = e
        assert last is not None
        raise last
    if origin in (list, List):
        if not isinstance(value, list):
            raise ResponseError(f"{path}: expected a list, got {_json_kind(value)}")
        (item,) = typing.get_args(tp) or (Any,)
        return [_parse_value(item, v, f"{path}[{i}]", unknown) for i, v in enumerate(value)]
    if origin in (dict, Dict):
        if not isinstance(value, dict):
            raise ResponseError(f"{path}: expected an object, got {_json_kind(value)}")
        _, item = typing.get_args(tp) or (str, Any)
        return {k: _parse_value(item, v, f"{path}.{k}", unknown) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Model):
        obj = _parse_model(tp, value, path)
        unknown.extend(obj.unknown_fields())
        return obj
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ResponseError(f"{path}: expected a number, got {_json_kind(value)}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ResponseError(f"{path}: expected an integer, got {_json_kind(value)}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ResponseError(f"{path}: expected a boolean, got {_json_kind(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ResponseError(f"{path}: expected a string, got {_json_kind(value)}")
        return value
    return value


# ---------------------------------------------------------------------------------------------
# Requests


def to_json(value: Any) -> Any:
    """A request value as JSON-ready data: dataclasses become dicts without their ``None``
    fields (recursively), datetimes become RFC 3339 strings, tuples become lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is None:
                continue
            out[f.name] = to_json(v)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("a datetime sent to ragstream needs a timezone (RFC 3339)")
        return value.isoformat()
    return value


@dataclass
class Page:
    """A page of a paged document (schema ``Page``)."""

    page_number: int
    text: str


@dataclass
class Triple:
    """A knowledge-graph fact a document states (``Document.triples``)."""

    subject: str
    relation: str
    object: str
    #: The chunk (0-based) the fact was read from.
    chunk: Optional[int] = None


@dataclass
class Entity:
    """Aliases of an entity the triples name (``Document.entities``)."""

    name: str
    aliases: Optional[List[str]] = None


@dataclass
class Document:
    """A document to ingest (schema ``Document``). Give exactly one of ``text`` and
    ``pages``. ``updated_at`` is an RFC 3339 string or an aware ``datetime``."""

    id: str
    text: Optional[str] = None
    title: Optional[str] = None
    pages: Optional[List[Page]] = None
    uri: Optional[str] = None
    source_type: Optional[str] = None
    source_name: Optional[str] = None
    source_id: Optional[str] = None
    source_path: Optional[str] = None
    managed_by_source: Optional[bool] = None
    project_id: Optional[str] = None
    tags: Optional[List[str]] = None
    updated_at: Optional[Union[str, _dt.datetime]] = None
    metadata: Optional[Dict[str, Any]] = None
    triples: Optional[List[Triple]] = None
    entities: Optional[List[Entity]] = None


@dataclass
class HybridParameters:
    """Contract 003's ``hybrid`` object (schema ``HybridParameters``). ``None`` leaves a
    parameter to the server's default; the server clamps every number."""

    alpha: Optional[float] = None
    min_sim: Optional[float] = None
    top_k: Optional[int] = None
    vec_limit: Optional[int] = None
    lex_limit: Optional[int] = None
    max_candidates: Optional[int] = None
    diversify_strength: Optional[float] = None
    trgm_limit: Optional[float] = None


# ---------------------------------------------------------------------------------------------
# Shared


@dataclass
class Offsets(Model):
    """Character offsets ``[start, end)`` of a chunk in its document (or page)."""

    start: int
    end: int


@dataclass
class ChunkMetadata(Model):
    """A chunk's metadata (schema ``ChunkMetadata``): the built-in fields, then the
    document's custom ``metadata`` keys in ``extra``."""

    knowledge_base_id: str
    document_id: str
    chunk_index: int
    title: Optional[str]
    source_type: Optional[str]
    source_name: Optional[str]
    uri: Optional[str]
    source_id: Optional[str]
    source_path: Optional[str]
    managed_by_source: Optional[bool]
    section_path: List[str]
    offsets: Offsets
    project_id: Optional[str]
    tags: List[str]
    updated_at: Optional[str]
    #: Paged documents only.
    page_number: Optional[int] = None
    #: The document's custom metadata keys.
    extra: Dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Contract 000: POST /v1/retrieve


@dataclass
class RelevanceComponents(Model):
    """The branch scores behind a hybrid score."""

    semantic_score: Optional[float] = None
    keyword_score: Optional[float] = None


@dataclass
class RetrievalResult(Model):
    """One result of a retrieval call (schema ``RetrievalResult``)."""

    id: str
    text: str
    metadata: ChunkMetadata
    score: float
    score_kind: str
    relevance_score: float
    relevance_kind: str
    relevance_components: Optional[RelevanceComponents] = None


@dataclass
class RetrievalCall(Model):
    """One retrieval call (schema ``RetrievalCall``)."""

    index: str
    query: str
    top_k: int
    search_method: str
    query_preprocessing: str
    result_count: int
    results: List[RetrievalResult]
    index_version: int
    query_id: str
    latency_ms: float
    #: Hybrid only.
    hybrid_alpha: Optional[float] = None


@dataclass
class RetrievalCallsResponse(Model):
    """Contract 000's answer (schema ``RetrievalCallsResponse``): exactly one call."""

    retrieval_calls: List[RetrievalCall]

    @property
    def call(self) -> RetrievalCall:
        """The one call."""
        return self.retrieval_calls[0]

    @property
    def results(self) -> List[RetrievalResult]:
        return self.call.results

    @property
    def index_version(self) -> int:
        return self.call.index_version


# ---------------------------------------------------------------------------------------------
# Contract 001: POST /v1/rag/query, POST /v1/indexes/{index}/rag/query


@dataclass
class RagResultMetadata(Model):
    """A hit's metadata; fields without a value are left out by the server."""

    language: Optional[str] = None
    title: Optional[str] = None
    url: Optional[str] = None
    timestamp: Optional[str] = None
    #: Comma-joined.
    tags: Optional[str] = None
    #: The index.
    collection: Optional[str] = None


@dataclass
class RagResult(Model):
    """A chunk hit (``content``) or, in graph mode, a relation hit (``component_type``
    ``"relation"`` with ``subject``, ``relation``, ``object``). Schema ``RagResult``."""

    metadata: RagResultMetadata
    content: Optional[str] = None
    component_type: Optional[str] = None
    subject: Optional[str] = None
    relation: Optional[str] = None
    object: Optional[str] = None

    @property
    def is_relation(self) -> bool:
        return self.component_type == "relation"


@dataclass
class KgTriple(Model):
    subject: str
    relation: str
    object: str


@dataclass
class RagQueryResponse(Model):
    """Contract 001's answer (schema ``RagQueryResponse``). ``index_version`` is not in the
    body: the client fills it from the ``x-ragstream-index-version`` header (``None`` when
    the index has never been written)."""

    results: List[RagResult]
    kg: List[KgTriple]
    rewrite_terms: List[str]
    index_version: Optional[int] = None


# ---------------------------------------------------------------------------------------------
# Contract 002: /v1/indexes/{index}/...


@dataclass
class ScoreDetail(Model):
    semantic: Optional[float]
    lexical: Optional[float]
    final: float
    rerank: Optional[float] = None


@dataclass
class Passage(Model):
    """A passage of a contract 002 answer (schema ``Passage``)."""

    chunk_id: str
    document_id: str
    source_uri: Optional[str]
    title: Optional[str]
    section_path: List[str]
    text: str
    score: float
    score_detail: ScoreDetail
    offsets: Offsets


@dataclass
class DocumentGroup(Model):
    """The passages of one document (schema ``DocumentGroup``)."""

    document_id: str
    title: Optional[str]
    source_uri: Optional[str]
    score: float
    passages: List[str]


@dataclass
class Relation(Model):
    """A knowledge-graph relation (``QueryResponse.relations``, with ``graph_depth``)."""

    subject: str
    relation: str
    object: str
    document_id: Optional[str] = None
    chunk_id: Optional[str] = None
    depth: Optional[int] = None
    score: Optional[float] = None
    score_detail: Optional[Dict[str, Any]] = None


@dataclass
class QueryResponse(Model):
    """Contract 002's query answer (schema ``QueryResponse``). The debug fields are set only
    for ``debug=True``; ``relations`` and ``rewrite_terms`` only with ``graph_depth``."""

    query_id: str
    index_version: int
    latency_ms: float
    results: List[Passage]
    documents: List[DocumentGroup]
    relations: Optional[List[Relation]] = None
    rewrite_terms: Optional[List[str]] = None
    retrieval_profile_effective: Optional[str] = None
    semantic_weight_effective: Optional[float] = None
    #: How the branches were scaled: ``contract``, ``min_max``, ``z_score`` or ``rrf``.
    fusion_effective: Optional[str] = None
    auto_signals_detected: Optional[List[str]] = None
    lexical_candidates: Optional[int] = None
    semantic_candidates: Optional[int] = None
    reranker_applied: Optional[bool] = None
    keyword_terms_dropped: Optional[List[str]] = None
    #: How the semantic branch searched: ``exact`` or ``approximate`` (the vector index).
    vector_search_effective: Optional[str] = None
    filters_applied: Optional[Dict[str, Any]] = None


@dataclass
class ChunkBrief(Model):
    """A neighbour of a hydrated chunk."""

    chunk_id: str
    chunk_index: int
    text: str


@dataclass
class ChunkContext(Model):
    before: List[ChunkBrief]
    after: List[ChunkBrief]
    #: The run of chunks joined with their overlap removed.
    stitched_text: str


@dataclass
class HydratedChunk(Model):
    """A chunk in full (schema ``HydratedChunk``)."""

    chunk_id: str
    document_id: str
    chunk_index: int
    title: Optional[str]
    section_path: List[str]
    breadcrumb: str
    source_uri: Optional[str]
    text: str
    offsets: Offsets
    metadata: ChunkMetadata
    context: ChunkContext


@dataclass
class HydratedSection(Model):
    """A section of hydrated chunks (schema ``HydratedSection``)."""

    document_id: str
    section_path: List[str]
    breadcrumb: str
    chunk_ids: List[str]
    section_chunk_ids: List[str]
    stitched_text: str


@dataclass
class HydrateResponse(Model):
    """The answer of hydrate (schema ``HydrateResponse``). Unknown or deleted ids are in
    ``not_found``; ``sections`` only with ``sections=True``."""

    index_version: int
    chunks: List[HydratedChunk]
    not_found: List[str]
    sections: Optional[List[HydratedSection]] = None


@dataclass
class AutoCalibration(Model):
    """How ``auto_semantic_center``, ``auto_passage_weight`` and ``fusion`` were measured
    (read-only)."""

    source: str
    rows: int


@dataclass
class IndexSettings(Model):
    """An index's query defaults (schema ``IndexSettings``)."""

    default_retrieval_profile: Optional[str] = None
    default_semantic_weight: Optional[float] = None
    auto_semantic_center: Optional[float] = None
    #: The weight ``auto`` gives a passage (41 words or more); ``None`` is 0.5.
    auto_passage_weight: Optional[float] = None
    #: How hybrid scales its branches on this index; ``None`` is ``contract``.
    fusion: Optional[str] = None
    auto_calibration: Optional[AutoCalibration] = None


@dataclass
class IndexSettingsResponse(Model):
    index: str
    settings: IndexSettings
    #: Where ``auto`` starts now: the settings' centre, else the model's measured one, else 0.5.
    auto_center_in_force: Optional[float] = None
    #: The fusion of queries that name none, now.
    fusion_in_force: Optional[str] = None


@dataclass
class KafkaOffset(Model):
    """Where a document event landed on the documents topic."""

    partition: int
    offset: int


@dataclass
class IngestAccepted(Model):
    """The 202 of ingestion and deletes (schema ``IngestAccepted``): the events are in
    Kafka, not yet searchable (see ``RagstreamClient.wait_until_indexed``)."""

    accepted: int
    topic: str
    offsets: List[KafkaOffset]


@dataclass
class RebuildResponse(Model):
    index: str
    index_version: int
    rebuilt_chunks: int


@dataclass
class IndexStats(Model):
    """``GET /v1/indexes/{index}/stats`` (schema ``IndexStats``)."""

    index: str
    embedder: str
    dimensions: int
    index_version: int
    oldest_version: int
    retained_versions: int
    documents: int
    chunks: int
    deleted_documents: int
    deleted_chunks: int
    keyword_chunks: int
    created_at: str
    #: Version tags and the versions they keep from pruning. Sent by the server but not in
    #: its OpenAPI schema.
    tags: Dict[str, int] = field(default_factory=dict)


@dataclass
class PartitionLag(Model):
    topic: str
    partition: int
    end_offset: int
    committed_offset: Optional[int]
    index_checkpoint: Optional[int]
    lag: int


@dataclass
class IndexingLag(Model):
    """``{"messages", "partitions"}``, or ``{"error"}`` when Kafka did not answer."""

    messages: Optional[int] = None
    partitions: Optional[List[PartitionLag]] = None
    error: Optional[str] = None


@dataclass
class IndexStatus(Model):
    """``GET /v1/indexes/{index}/status`` (schema ``IndexStatus``)."""

    index: str
    index_version: int
    last_commit_at: Optional[str]
    indexing_lag: IndexingLag


# ---------------------------------------------------------------------------------------------
# Contract 003: POST /v1/ai/rag/query/, POST /v1/indexes/{index}/ai/rag/query


@dataclass
class MatchParent(Model):
    """An enclosing section of a match."""

    id: str
    heading: str
    #: The section's stitched text, cut at 4,000 characters.
    content: str


@dataclass
class MatchMeta(ChunkMetadata):
    """A match's metadata (schema ``MatchMeta``): chunk metadata plus the chunk's id and its
    enclosing sections, outermost first."""

    chunk_id: str = ""
    parent_ids: List[str] = field(default_factory=list)
    parents: List[MatchParent] = field(default_factory=list)


@dataclass
class RetrieveMatch(Model):
    """One match (schema ``RetrieveMatch``). ``id`` is the document's id; the chunk's is
    ``meta.chunk_id``."""

    id: str
    text: str
    score: float
    #: ``vector``, ``lexical`` or ``hybrid``.
    source: str
    #: SHA-256 of ``text``, hex.
    hash: str
    citation: str
    meta: MatchMeta


@dataclass
class RetrieveRouting(Model):
    profile: str
    vector_space_id: str
    process: Optional[str]
    doc_class: Optional[str]
    collection_id: Optional[str]
    workflow_id: Optional[str]


@dataclass
class RetrieveMeta(Model):
    """Schema ``RetrieveMeta``: the parameters applied, after clamping."""

    routing: RetrieveRouting
    took_ms: int
    alpha: float
    min_sim: float
    top_k_effective: int
    matches_returned: int
    max_candidates_effective: int
    vector_candidates: int
    lexical_candidates: int
    deleted_matches_blocked: int
    visibility_effective: str
    diversify_strength: float


@dataclass
class RetrieveOutput(Model):
    """Contract 003's answer (schema ``RetrieveOutput``). ``index_version`` comes from the
    ``x-ragstream-index-version`` header."""

    matches: List[RetrieveMatch]
    meta: RetrieveMeta
    index_version: Optional[int] = None


# ---------------------------------------------------------------------------------------------
# Contract 004: POST /v1/retrievers/{name}/retrieve


@dataclass
class RetrievedDocument(Model):
    """One result of a named retriever (schema ``RetrievedDocument``)."""

    id: str
    content: str
    score: float
    metadata: ChunkMetadata
    #: The document's uri, else its source_path; ``None`` when neither is known.
    source: Optional[str] = None


# ---------------------------------------------------------------------------------------------
# Operations: /healthz, /readyz


@dataclass
class Problem(Model):
    part: str
    impact: str
    reason: str
    since: str


@dataclass
class PipelineHealth(Model):
    restarts: int
    last_failure: Optional[str]


@dataclass
class Health(Model):
    """``GET /healthz`` (schema ``Health``); ``status`` is ``ok`` or ``unhealthy``."""

    status: str
    problems: List[Problem]
    pipeline: PipelineHealth
    #: Its shape depends on the embedder.
    embedding: Any = None


@dataclass
class Ready(Model):
    """``GET /readyz`` when ready (schema ``Ready``)."""

    status: str
    problems: List[Problem]
