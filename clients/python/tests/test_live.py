#!/usr/bin/env python3
"""The Python client against a live daemon: every method, and the models against the
daemon's own OpenAPI document.

    python3 clients/python/tests/test_live.py --url http://127.0.0.1:PORT \\
        [--token TOKEN] [--read-token TOKEN] [--index NAME] [--retriever NAME] [--timeout SECONDS] [-v]

- ``--token``: the daemon has ``[[auth.tokens]]``; the token needs read, write and admin on
  the index (and on ``contracts.default_index`` for the default routes). The test then also
  checks that no token and a wrong token are refused (401).
- ``--read-token``: a token with only the read scope on the index; writes with it are
  refused (403).
- ``--index``: the index to write (default: a new ``pyclient_<random>``). Documents get ids
  unique to the run, so an index in use is not disturbed beyond them.
- ``--retriever``: a contract 004 retriever configured on that index. Without it, contract
  004 is exercised through its error (an unknown retriever's 404) only.
- ``--timeout``: the deadline of each wait (ready, ingestion committed), default 60.

Only the standard library is used (unittest). The exit status is 0 when every test passed,
1 otherwise. ``clients/python/run-live-test BINARY`` starts a daemon and runs this file.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import socket
import sys
import time
import unittest
import uuid
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ragstream_client import (  # noqa: E402
    ApiError,
    Document,
    Entity,
    Forbidden,
    HybridParameters,
    IndexStats,
    InvalidRequest,
    Model,
    NotFound,
    Page,
    RagstreamClient,
    TransportError,
    Triple,
    Unauthenticated,
    Unavailable,
    VersionUnavailable,
    WaitTimeout,
)
from ragstream_client import models  # noqa: E402

ARGS: argparse.Namespace

# Each response model and the OpenAPI component schema it follows.
SCHEMAS = {
    "Offsets": models.Offsets,
    "ChunkMetadata": models.ChunkMetadata,
    "RetrievalCallsResponse": models.RetrievalCallsResponse,
    "RetrievalCall": models.RetrievalCall,
    "RetrievalResult": models.RetrievalResult,
    "RagQueryResponse": models.RagQueryResponse,
    "RagResult": models.RagResult,
    "KgTriple": models.KgTriple,
    "QueryResponse": models.QueryResponse,
    "Passage": models.Passage,
    "DocumentGroup": models.DocumentGroup,
    "HydrateResponse": models.HydrateResponse,
    "HydratedChunk": models.HydratedChunk,
    "ChunkBrief": models.ChunkBrief,
    "HydratedSection": models.HydratedSection,
    "IndexSettings": models.IndexSettings,
    "IndexSettingsResponse": models.IndexSettingsResponse,
    "IngestAccepted": models.IngestAccepted,
    "RebuildResponse": models.RebuildResponse,
    "IndexStats": models.IndexStats,
    "IndexStatus": models.IndexStatus,
    "RetrieveOutput": models.RetrieveOutput,
    "RetrieveMatch": models.RetrieveMatch,
    "MatchMeta": models.MatchMeta,
    "RetrieveMeta": models.RetrieveMeta,
    "RetrieveRouting": models.RetrieveRouting,
    "RetrievedDocument": models.RetrievedDocument,
    "Health": models.Health,
    "Ready": models.Ready,
    # request models
    "Document": models.Document,
    "Page": models.Page,
    "HybridParameters": models.HybridParameters,
}
# The routes the client calls (method, OpenAPI path).
CLIENT_ROUTES = {
    ("POST", "/v1/retrieve"),
    ("POST", "/v1/rag/query"),
    ("POST", "/v1/indexes/{index}/rag/query"),
    ("POST", "/v1/indexes/{index}/query"),
    ("POST", "/v1/indexes/{index}/hydrate"),
    ("PUT", "/v1/indexes/{index}/settings"),
    ("POST", "/v1/indexes/{index}/documents"),
    ("DELETE", "/v1/indexes/{index}/documents/{id}"),
    ("POST", "/v1/indexes/{index}/rebuild"),
    ("GET", "/v1/indexes/{index}/stats"),
    ("GET", "/v1/indexes/{index}/status"),
    ("POST", "/v1/ai/rag/query/"),
    ("POST", "/v1/indexes/{index}/ai/rag/query"),
    ("POST", "/v1/retrievers/{name}/retrieve"),
    ("GET", "/openapi.json"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
}
# Fields a model has that its schema does not: filled from a header, or sent by the server
# without being in its schema (reported as an inconsistency of the server).
NOT_IN_SCHEMA = {
    ("RagQueryResponse", "index_version"),
    ("RetrieveOutput", "index_version"),
}


class LiveTest(unittest.TestCase):
    client: RagstreamClient
    index: str
    tag: str
    pump_id: str
    valve_id: str
    stats0: IndexStats

    # ----------------------------------------------------------------------------------------
    # Set-up: wait for the daemon, ingest, wait (deadline) until searchable

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = RagstreamClient(ARGS.url, token=ARGS.token, timeout=30)
        cls.index = ARGS.index or f"pyclient_{uuid.uuid4().hex[:8]}"
        cls.tag = uuid.uuid4().hex[:8]
        cls.pump_id = f"pump-manual-{cls.tag}"
        # A "/" and a space: the id goes into a URL path for deletes.
        cls.valve_id = f"valves/guide {cls.tag}"
        wait_ready(cls.client, ARGS.timeout)

        try:
            before = cls.client.stats(cls.index)
            base_docs = before.documents
        except NotFound:
            base_docs = 0

        docs = [
            Document(
                id=cls.pump_id,
                title="P-200 Pump Manual",
                text=(
                    "# Maintenance\n\nLubricate the bearings every 500 operating hours. "
                    "Check the mechanical seal for leaks weekly.\n\n## Seals\n\n"
                    "Replace the mechanical seal when it leaks more than ten drops per "
                    "minute. Keep a spare seal kit on site.\n"
                ),
                uri="https://example.com/manuals/p200.pdf",
                project_id=f"plant-{cls.tag}",
                tags=["pumps", "maintenance"],
                updated_at="2026-03-01T09:00:00Z",
                metadata={"language": "en", "run": cls.tag},
                triples=[Triple("P-200", "requires", "bearing lubrication", chunk=0)],
                entities=[Entity("P-200", aliases=["P200 pump"])],
            ),
            {
                "id": cls.valve_id,
                "title": "Valve Guide",
                "pages": [
                    dataclasses.asdict(Page(1, "Gate valves must be fully open or closed.")),
                    {"page_number": 2, "text": "Butterfly valves regulate flow in pipes."},
                ],
                "source_path": "docs/valves.md",
                "project_id": f"plant-{cls.tag}",
                "metadata": {"run": cls.tag},
            },
        ]
        accepted = cls.client.ingest(cls.index, docs)
        assert accepted.accepted == 2, accepted
        assert len(accepted.offsets) == 2, accepted
        # Searchable: poll stats (deadline), then the commit of these very events (status).
        cls.stats0 = cls.client.wait_for_stats(
            cls.index, lambda s: s.documents >= base_docs + 2, timeout=ARGS.timeout
        )
        cls.client.wait_until_indexed(cls.index, accepted, timeout=ARGS.timeout)

    # ----------------------------------------------------------------------------------------
    # Helpers

    def typed(self, model: Model) -> Any:
        """A model whose JSON held nothing the model does not declare."""
        self.assertIsInstance(model, Model)
        self.assertEqual(
            model.unknown_fields(),
            [],
            "the server sent fields the client's models do not declare "
            "(add them to clients/python/ragstream_client/models.py)",
        )
        return model

    def assert_api_error(self, ctx: Any, cls: type, status: int, code: str) -> ApiError:
        e = ctx.exception
        self.assertIsInstance(e, cls)
        self.assertEqual((e.status, e.code), (status, code), repr(e))
        self.assertTrue(e.message, "an error carries the server's message")
        return e

    def filters(self) -> Dict[str, Any]:
        return {"project_id": f"plant-{self.tag}"}

    # ----------------------------------------------------------------------------------------
    # The models against /openapi.json

    def test_00_models_follow_openapi(self) -> None:
        doc = self.client.openapi()
        self.assertTrue(doc.get("openapi", "").startswith("3."), doc.get("openapi"))
        schemas = doc["components"]["schemas"]
        problems: List[str] = []
        for name, cls in SCHEMAS.items():
            if name not in schemas:
                problems.append(f"schema {name} is gone from /openapi.json")
                continue
            props, required = schema_properties(schemas[name], schemas)
            fields = {f.name: f for f in dataclasses.fields(cls)}
            open_model = "extra" in fields
            for p in props:
                if p not in fields and not open_model:
                    problems.append(f"{cls.__name__} lacks {name}.{p}")
            for p in required:
                if p not in fields and not open_model:
                    problems.append(f"{cls.__name__} lacks required {name}.{p}")
            for f in fields:
                if f != "extra" and f not in props and (name, f) not in NOT_IN_SCHEMA:
                    problems.append(f"{cls.__name__}.{f} is not in schema {name}")
        served = {
            (method.upper(), path)
            for path, ops in doc.get("paths", {}).items()
            for method in ops
            if method.lower() in ("get", "post", "put", "delete", "patch")
        }
        for method, path in sorted(CLIENT_ROUTES - served):
            problems.append(f"the client calls {method} {path}, which /openapi.json lacks")
        self.assertEqual(problems, [], "models and /openapi.json disagree")
        # Routes the client has no method for are a note, not a failure.
        extra = sorted(served - CLIENT_ROUTES)
        if extra:
            print(
                "\nnote: routes without a client method (use client.request): "
                + ", ".join(f"{m} {p}" for m, p in extra),
                file=sys.stderr,
            )

    # ----------------------------------------------------------------------------------------
    # Operations, stats, status

    def test_01_health_and_ready(self) -> None:
        h = self.typed(self.client.health())
        self.assertEqual(h.status, "ok", h.problems)
        self.assertGreaterEqual(h.pipeline.restarts, 0)
        r = self.typed(self.client.ready())
        self.assertEqual(r.status, "ready")

    def test_02_stats(self) -> None:
        s = self.typed(self.client.stats(self.index))
        self.assertEqual(s.index, self.index)
        self.assertGreaterEqual(s.documents, 2)
        self.assertGreaterEqual(s.chunks, 3)  # two sections, two pages
        self.assertGreaterEqual(s.index_version, s.oldest_version)
        self.assertGreaterEqual(s.dimensions, 1)
        self.assertTrue(s.embedder)
        self.assertIsInstance(s.tags, dict)
        self.assertTrue(s.created_at)

    def test_03_status(self) -> None:
        st = self.typed(self.client.status(self.index))
        self.assertEqual(st.index, self.index)
        self.assertGreaterEqual(st.index_version, self.stats0.index_version)
        self.assertTrue(st.last_commit_at)
        lag = st.indexing_lag
        if lag.error is None:
            self.assertIsNotNone(lag.partitions)
            self.assertGreaterEqual(lag.messages, 0)
            for p in lag.partitions or []:
                self.assertGreaterEqual(p.end_offset, 0)

    # ----------------------------------------------------------------------------------------
    # Contract 000

    def test_10_retrieve(self) -> None:
        for method in ("semantic", "keyword", "hybrid"):
            with self.subTest(search_method=method):
                resp = self.typed(
                    self.client.retrieve(
                        self.index,
                        "How often are the bearings lubricated?",
                        top_k=3,
                        search_method=method,
                        query_preprocessing="normalize",
                        filters={"project_id": f"plant-{self.tag}"},
                    )
                )
                self.assertEqual(len(resp.retrieval_calls), 1)
                call = resp.call
                self.assertEqual(call.index, self.index)
                self.assertEqual(call.search_method, method)
                self.assertEqual(call.top_k, 3)
                self.assertEqual(call.result_count, len(call.results))
                self.assertGreaterEqual(call.result_count, 1)
                self.assertEqual(call.hybrid_alpha is not None, method == "hybrid")
                for r in call.results:
                    self.assertEqual(r.metadata.project_id, f"plant-{self.tag}")
                    self.assertEqual(r.score, r.relevance_score)
                if method != "semantic":
                    top = call.results[0]
                    self.assertEqual(top.metadata.document_id, self.pump_id)
                    self.assertIn("Lubricate the bearings", top.text)
                    self.assertEqual(top.metadata.extra.get("run"), self.tag)
                    self.assertEqual(top.metadata.tags, ["pumps", "maintenance"])
                    self.assertEqual(top.metadata.section_path, ["Maintenance"])
                if method == "hybrid":
                    self.assertIsNotNone(call.results[0].relevance_components)

        # A version sent back answers again from it.
        first = self.client.retrieve(self.index, "valves", search_method="keyword")
        again = self.typed(
            self.client.retrieve(
                self.index, "valves", search_method="keyword", index_version=first.index_version
            )
        )
        self.assertEqual(again.index_version, first.index_version)
        self.assertEqual([r.id for r in again.results], [r.id for r in first.results])
        self.assertTrue(any(r.metadata.page_number == 2 for r in again.results))

    def test_11_retrieve_errors(self) -> None:
        with self.assertRaises(InvalidRequest) as ctx:
            self.client.retrieve(self.index, "pump", top_k=0)
        e = self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")
        self.assertEqual(e.field, "retrieval.top_k")

        with self.assertRaises(VersionUnavailable) as ctx:
            self.client.retrieve(self.index, "pump", index_version=10**9)
        e = self.assert_api_error(ctx, VersionUnavailable, 410, "version_unavailable")
        self.assertIsInstance(e.latest_version, int)
        self.assertIsInstance(e.oldest_available_version, int)

        with self.assertRaises(NotFound) as ctx:
            self.client.retrieve(f"pyclient_missing_{self.tag}", "pump")
        self.assert_api_error(ctx, NotFound, 404, "index_not_found")

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.retrieve("Not An Index", "pump")
        self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")

    # ----------------------------------------------------------------------------------------
    # Contract 001

    def test_20_rag_query(self) -> None:
        resp = self.typed(
            self.client.rag_query("bearing lubrication", index=self.index, top_k=3, fast_mode=True)
        )
        self.assertGreaterEqual(len(resp.results), 1)
        self.assertLessEqual(len(resp.results), 3)
        self.assertIsInstance(resp.index_version, int, "x-ragstream-index-version")
        for r in resp.results:
            self.assertFalse(r.is_relation)
            self.assertTrue(r.content)
            self.assertEqual(r.metadata.collection, self.index)
        self.assertEqual(resp.kg, [])
        self.assertEqual(resp.rewrite_terms, [])

        # The default index's route answers the same shape.
        default = self.typed(self.client.rag_query("bearing lubrication"))
        self.assertIsInstance(default.results, list)

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.rag_query("pump", index=self.index, top_k=51)
        e = self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")
        self.assertEqual(e.field, "top_k")

    # ----------------------------------------------------------------------------------------
    # Contract 002

    def test_30_query(self) -> None:
        resp = self.typed(
            self.client.query(
                self.index,
                "How often are the bearings lubricated?",
                top_k=5,
                retrieval_profile="exact",
                filters={"project_id": f"plant-{self.tag}", "tags": ["pumps"]},
                debug=True,
                rerank=False,
            )
        )
        self.assertGreaterEqual(len(resp.results), 1)
        self.assertTrue(all(p.document_id == self.pump_id for p in resp.results))
        top = resp.results[0]
        self.assertEqual(top.score, top.score_detail.final)
        self.assertEqual(top.source_uri, "https://example.com/manuals/p200.pdf")
        self.assertEqual(top.title, "P-200 Pump Manual")
        self.assertLessEqual(top.offsets.start, top.offsets.end)
        self.assertEqual([d.document_id for d in resp.documents], [self.pump_id])
        self.assertEqual(set(resp.documents[0].passages), {p.chunk_id for p in resp.results})
        # debug fields
        self.assertEqual(resp.retrieval_profile_effective, "exact")
        self.assertAlmostEqual(resp.semantic_weight_effective or 0.0, 0.2)
        self.assertIsInstance(resp.auto_signals_detected, list)
        self.assertIs(resp.reranker_applied, False)
        self.assertEqual(resp.filters_applied, {"project_id": f"plant-{self.tag}", "tags": ["pumps"]})

        plain = self.typed(self.client.query(self.index, "valves", filters={"path_prefix": "docs/"}))
        self.assertIsNone(plain.retrieval_profile_effective, "debug fields only with debug")
        self.assertTrue(all(p.document_id == self.valve_id for p in plain.results))

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.query(self.index, "pump", filters={"tags": []})
        e = self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")
        self.assertEqual(e.field, "filters.tags")

    def test_31_hydrate(self) -> None:
        q = self.client.query(self.index, "mechanical seal", filters={"project_id": f"plant-{self.tag}"})
        pump_chunks = [p.chunk_id for p in q.results if p.document_id == self.pump_id]
        self.assertTrue(pump_chunks, "the query found the pump manual")
        missing = f"no-such-chunk-{self.tag}"
        resp = self.typed(
            self.client.hydrate(self.index, pump_chunks[:1] + [missing], window=1, sections=True)
        )
        self.assertEqual(resp.not_found, [missing])
        self.assertEqual([c.chunk_id for c in resp.chunks], pump_chunks[:1])
        c = resp.chunks[0]
        self.assertEqual(c.document_id, self.pump_id)
        self.assertEqual(c.metadata.document_id, self.pump_id)
        self.assertTrue(c.breadcrumb.startswith("P-200 Pump Manual"))
        self.assertIn(c.text.strip()[:20], c.context.stitched_text)
        neighbours = c.context.before + c.context.after
        self.assertGreaterEqual(len(neighbours), 1, "window=1 brings the other section's chunk")
        self.assertIsNotNone(resp.sections)
        self.assertGreaterEqual(len(resp.sections or []), 1)
        self.assertIn(c.chunk_id, (resp.sections or [])[0].section_chunk_ids)
        self.assertGreaterEqual(resp.index_version, 1)

        bare = self.typed(self.client.hydrate(self.index, pump_chunks[:1], window=0))
        self.assertIsNone(bare.sections)
        self.assertEqual(bare.chunks[0].context.before + bare.chunks[0].context.after, [])

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.hydrate(self.index, [])
        self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")

    def test_32_settings(self) -> None:
        try:
            resp = self.typed(
                self.client.put_settings(self.index, default_retrieval_profile="semantic")
            )
            self.assertEqual(resp.index, self.index)
            self.assertEqual(resp.settings.default_retrieval_profile, "semantic")
            self.assertIsNone(resp.settings.default_semantic_weight)
            center = resp.auto_center_in_force
            self.assertIsNotNone(center)
            self.assertTrue(0.2 <= (center or 0.0) <= 0.8, center)
            self.assertEqual(resp.fusion_in_force, "contract")
            q = self.client.query(self.index, "valves", debug=True)
            self.assertEqual(q.retrieval_profile_effective, "semantic")
            self.assertAlmostEqual(q.semantic_weight_effective or 0.0, 0.8)
            self.assertEqual(q.fusion_effective, "contract")
            scaled = self.typed(self.client.put_settings(self.index, fusion="min_max"))
            self.assertEqual(scaled.settings.fusion, "min_max")
            self.assertEqual(scaled.fusion_in_force, "min_max")
            q = self.client.query(self.index, "valves", debug=True)
            self.assertEqual(q.fusion_effective, "min_max")
            q = self.client.query(self.index, "valves", debug=True, fusion="rrf")
            self.assertEqual(q.fusion_effective, "rrf", "the query's own beats the index's")
        finally:
            cleared = self.typed(self.client.put_settings(self.index))
        self.assertIsNone(cleared.settings.default_retrieval_profile)

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.put_settings(self.index, default_semantic_weight=2.0)
        self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")

    def test_33_rebuild(self) -> None:
        before = self.client.stats(self.index)
        resp = self.typed(self.client.rebuild(self.index))
        self.assertEqual(resp.index, self.index)
        self.assertEqual(resp.rebuilt_chunks, before.keyword_chunks)
        self.assertEqual(resp.index_version, before.index_version)

    def test_34_ingest_errors(self) -> None:
        with self.assertRaises(InvalidRequest) as ctx:
            self.client.ingest(self.index, [{"id": f"empty-{self.tag}"}])
        e = self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")
        self.assertTrue((e.field or "").startswith("documents[0]"), e.field)

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.ingest(self.index, [{"id": "x", "text": "t", "bogus": 1}])
        e = self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")
        self.assertEqual(e.field, "documents[0]")
        self.assertIn("bogus", e.message)

        with self.assertRaises(ValueError):
            self.client.ingest(self.index, [])

    # ----------------------------------------------------------------------------------------
    # Contract 003

    def test_40_ai_rag_query(self) -> None:
        resp = self.typed(
            self.client.ai_rag_query(
                "How often are the bearings lubricated?",
                index=self.index,
                hybrid=HybridParameters(alpha=0.5, min_sim=0.0, top_k=3, diversify_strength=0.0),
                filters=self.filters(),
                process=" Maintenance ",
            )
        )
        self.assertGreaterEqual(len(resp.matches), 1)
        self.assertIsInstance(resp.index_version, int, "x-ragstream-index-version")
        meta = resp.meta
        self.assertEqual(meta.top_k_effective, 3)
        self.assertEqual(meta.alpha, 0.5)
        self.assertEqual(meta.matches_returned, len(resp.matches))
        self.assertEqual(meta.visibility_effective, "active")
        self.assertEqual(meta.routing.vector_space_id, f"rag/{self.index}")
        self.assertEqual(meta.routing.process, "maintenance")
        top = resp.matches[0]
        self.assertEqual(top.id, self.pump_id)
        self.assertEqual(top.meta.document_id, self.pump_id)
        self.assertTrue(top.meta.chunk_id)
        self.assertEqual(top.hash, hashlib.sha256(top.text.encode("utf-8")).hexdigest())
        self.assertIn("P-200 Pump Manual", top.citation)
        self.assertIn(top.source, ("vector", "lexical", "hybrid"))
        self.assertEqual(top.meta.parent_ids, [p.id for p in top.meta.parents])

        # Clamped, not refused.
        clamped = self.typed(
            self.client.ai_rag_query(
                "valves", index=self.index, hybrid={"min_sim": 0.0}, top_k=99, filters=self.filters()
            )
        )
        self.assertEqual(clamped.meta.top_k_effective, 10)

        with self.assertRaises(InvalidRequest) as ctx:
            self.client.ai_rag_query("pump", index=self.index, hybrid={"bogus": 1})
        e = self.assert_api_error(ctx, InvalidRequest, 400, "InputError")
        self.assertIn("bogus", e.message)

        # No matches: NotFoundError, unless the server is tenant-scoped.
        try:
            empty = self.client.ai_rag_query(
                "pump", index=self.index, filters={"project_id": f"nowhere-{self.tag}"}
            )
            self.assertEqual(empty.matches, [])
        except NotFound as e:
            self.assertEqual((e.status, e.code), (404, "NotFoundError"))

    # ----------------------------------------------------------------------------------------
    # Contract 004

    def test_50_retriever(self) -> None:
        with self.assertRaises(NotFound) as ctx:
            self.client.retriever_retrieve(f"no_such_retriever_{self.tag}", "pump")
        e = self.assert_api_error(ctx, NotFound, 404, "retriever_not_found")
        self.assertEqual(e.field, "name")
        if not ARGS.retriever:
            self.skipTest("no --retriever: contract 004's answer not exercised")
        docs = self.client.retriever_retrieve(
            ARGS.retriever, "How often are the bearings lubricated?", messages=[]
        )
        self.assertGreaterEqual(len(docs), 1)
        for d in docs:
            self.typed(d)
        scores = [d.score for d in docs]
        self.assertEqual(scores, sorted(scores, reverse=True))
        ours = [d for d in docs if d.metadata.extra.get("run") == self.tag]
        self.assertTrue(ours, "the retriever's index holds this run's documents")
        pump = [d for d in ours if d.metadata.document_id == self.pump_id]
        if pump:
            self.assertEqual(pump[0].source, "https://example.com/manuals/p200.pdf")
        self.assertEqual(self.client.retriever_retrieve(ARGS.retriever, "   "), [])
        with self.assertRaises(InvalidRequest) as ctx:
            self.client.request(
                "POST", f"/v1/retrievers/{ARGS.retriever}/retrieve", {"query": "x", "top_k": 3}
            )
        self.assert_api_error(ctx, InvalidRequest, 400, "invalid_request")

    # ----------------------------------------------------------------------------------------
    # Authentication and transport

    def test_60_auth(self) -> None:
        if not ARGS.token:
            self.skipTest("no --token: the daemon has no tokens configured")
        for token in (None, "not-the-token"):
            with self.subTest(token=token):
                c = RagstreamClient(ARGS.url, token=token)
                with self.assertRaises(Unauthenticated) as ctx:
                    c.stats(self.index)
                self.assert_api_error(ctx, Unauthenticated, 401, "unauthenticated")
        # Routes without a token requirement.
        self.assertEqual(RagstreamClient(ARGS.url).health().status, "ok")
        if ARGS.read_token:
            reader = RagstreamClient(ARGS.url, token=ARGS.read_token)
            self.typed(reader.stats(self.index))
            with self.assertRaises(Forbidden) as ctx:
                reader.ingest(self.index, [Document(id=f"forbidden-{self.tag}", text="x")])
            self.assert_api_error(ctx, Forbidden, 403, "forbidden")
            with self.assertRaises(Forbidden) as ctx:
                reader.rebuild(self.index)
            self.assert_api_error(ctx, Forbidden, 403, "forbidden")

    def test_61_transport_error(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        with self.assertRaises(TransportError):
            RagstreamClient(f"http://127.0.0.1:{port}", timeout=5).health()

    # ----------------------------------------------------------------------------------------
    # Deletes (last: they change the index)

    def test_90_delete(self) -> None:
        accepted = self.typed(self.client.delete_document(self.index, self.valve_id))
        self.assertEqual(accepted.accepted, 1)
        self.client.wait_until_indexed(self.index, accepted, timeout=ARGS.timeout)
        st = self.client.stats(self.index)
        self.assertGreaterEqual(st.deleted_documents, 1)

        gone = self.client.retrieve(
            self.index, "valves", search_method="keyword", filters={"document_id": self.valve_id}
        )
        self.assertEqual(gone.results, [], "a deleted document is not searched")

        # Deletes through ingest: a delete of an id never indexed is accepted too.
        acc = self.client.ingest(self.index, deletes=[f"never-indexed-{self.tag}"])
        self.assertEqual(acc.accepted, 1)
        self.client.wait_until_indexed(self.index, acc, timeout=ARGS.timeout)

        # The pump manual is still there.
        still = self.client.retrieve(
            self.index, "bearings", search_method="keyword", filters={"document_id": self.pump_id}
        )
        self.assertGreaterEqual(still.call.result_count, 1)


# ---------------------------------------------------------------------------------------------


def schema_properties(schema: Dict[str, Any], schemas: Dict[str, Any]) -> Any:
    """The properties and required names of an object schema (``allOf`` and ``$ref``
    followed; a ``$ref`` beside ``properties`` applies both, as in JSON Schema 2020-12).
    A union (``anyOf``, ``oneOf``) has the properties of any branch, and requires what
    every branch requires."""
    props: Dict[str, Any] = {}
    required: List[str] = []
    if "$ref" in schema:
        p, r = schema_properties(schemas[schema["$ref"].rsplit("/", 1)[-1]], schemas)
        props.update(p)
        required += r
    for part in schema.get("allOf", []):
        p, r = schema_properties(part, schemas)
        props.update(p)
        required += r
    branches = [schema_properties(b, schemas) for b in schema.get("anyOf", schema.get("oneOf", []))]
    for p, _ in branches:
        props.update(p)
    if branches:
        required += [n for n in branches[0][1] if all(n in r for _, r in branches)]
    props.update(schema.get("properties", {}))
    required += schema.get("required", [])
    return props, required


def wait_ready(client: RagstreamClient, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Optional[Exception] = None
    while True:
        try:
            client.ready()
            return
        except (TransportError, Unavailable) as e:
            last = e
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    raise WaitTimeout(f"the daemon at {client.base_url} was not ready within {timeout:g}s: {last}")


def main() -> int:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the daemon, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", default=None, help="a bearer token (read, write, admin)")
    parser.add_argument(
        "--read-token", default=None, help="a token with only the read scope on --index"
    )
    parser.add_argument("--index", default=None, help="the index to write (default: a new one)")
    parser.add_argument("--retriever", default=None, help="a contract 004 retriever on --index")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per wait")
    ARGS, rest = parser.parse_known_args()
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    result = program.result
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
