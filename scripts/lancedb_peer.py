#!/usr/bin/env python3
"""The LanceDB side of scripts/compare-lancedb.

Indexes the chunks and vectors `ragstream-bench export` wrote (the same rows ragstream
indexed, with the same vectors) into a LanceDB table, in batches of the size ragstream's
ingest commits, builds the same kind of vector index (IVF_HNSW_SQ, cosine) and its native
full-text index (lancedb 0.40 removed the tantivy-based one), then runs hybrid top-10 queries with the exported query vectors at
concurrency 1, after a warm-up pass. Prints and writes a JSON report.
"""

import argparse
import json
import shutil
import time
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa


def percentile(sorted_ms, p):
    # The same rank rule as ragstream's benches (nearest rank, ceil).
    if not sorted_ms:
        return 0.0
    rank = max(1, min(len(sorted_ms), int(np.ceil(p / 100.0 * len(sorted_ms)))))
    return sorted_ms[rank - 1]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("export", type=Path, help="directory written by ragstream-bench export")
    parser.add_argument("--work", type=Path, required=True, help="LanceDB database directory")
    parser.add_argument("--batch", type=int, default=512, help="rows per add() call")
    # By default the approximate search uses the settings ragstream's index searched with
    # (the export's meta.json), so that both sides walk their graphs equally far.
    parser.add_argument("--nprobes", type=int)
    parser.add_argument("--refine-factor", type=int)
    parser.add_argument("--ef", type=int)
    parser.add_argument(
        "--recall-queries",
        type=int,
        default=200,
        help="queries whose approximate vector top 10 is compared with an exact scan",
    )
    parser.add_argument("--out", type=Path, help="write the report here as JSON")
    args = parser.parse_args()

    meta = json.loads((args.export / "meta.json").read_text())
    search = meta["vector_search"]
    nprobes = args.nprobes or search["nprobes"]
    refine_factor = args.refine_factor or search["refine_factor"]
    ef = args.ef or search["ef"]
    dims = meta["dimensions"]
    chunks = read_lines(args.export / "chunks.jsonl")
    # The partitions ragstream's default builds: one per 100,000 rows (IVF_HNSW_SQ); its
    # nprobes 0 probes every one.
    partitions = max(1, len(chunks) // 100_000)
    nprobes = nprobes or partitions
    vectors = np.fromfile(args.export / "vectors.f32", dtype="<f4").reshape(-1, dims)
    queries = [q["text"] for q in read_lines(args.export / "queries.jsonl")]
    query_vectors = np.fromfile(args.export / "query_vectors.f32", dtype="<f4").reshape(-1, dims)
    assert len(chunks) == len(vectors) and len(queries) == len(query_vectors)

    shutil.rmtree(args.work, ignore_errors=True)
    db = lancedb.connect(str(args.work))
    vector_type = pa.list_(pa.float32(), dims)

    def batch(start, end):
        return pa.table(
            {
                "chunk_id": [c["chunk_id"] for c in chunks[start:end]],
                "text": [c["text"] for c in chunks[start:end]],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors[start:end].reshape(-1), type=pa.float32()), dims
                ).cast(vector_type),
            }
        )

    started = time.perf_counter()
    table = None
    for start in range(0, len(chunks), args.batch):
        rows = batch(start, min(start + args.batch, len(chunks)))
        if table is None:
            table = db.create_table("chunks", rows)
        else:
            table.add(rows)
    ingest_seconds = time.perf_counter() - started

    started = time.perf_counter()
    table.create_index(
        metric="cosine",
        vector_column_name="vector",
        index_type="IVF_HNSW_SQ",
        num_partitions=partitions,
    )
    # lancedb 0.40 removed its tantivy-based index ("Tantivy-based FTS has been removed"):
    # its native full-text index (Lance's own BM25 inverted index) is what it offers now.
    table.create_fts_index("text", replace=True)
    index_seconds = time.perf_counter() - started

    def hybrid(text, vector):
        return (
            table.search(query_type="hybrid")
            .vector(vector)
            .text(text)
            .nprobes(nprobes)
            .refine_factor(refine_factor)
            .ef(ef)
            .limit(10)
            .to_list()
        )

    def vector_ids(vector, exact):
        q = table.search(vector).limit(10)
        if exact:
            q = q.bypass_vector_index()
        else:
            q = q.nprobes(nprobes).refine_factor(refine_factor).ef(ef)
        return [r["chunk_id"] for r in q.to_list()]

    # Recall@10 of the approximate vector search against an exact scan, as ragstream's
    # bench reports it: the same operating point is what makes the latencies comparable.
    found = wanted = 0
    for vector in query_vectors[: args.recall_queries]:
        exact = vector_ids(vector, True)
        approx = set(vector_ids(vector, False))
        wanted += len(exact)
        found += sum(1 for i in exact if i in approx)
    recall = found / max(1, wanted)

    for text, vector in list(zip(queries, query_vectors))[: max(1, len(queries) // 10)]:
        hybrid(text, vector)
    times = []
    wall = time.perf_counter()
    for text, vector in zip(queries, query_vectors):
        t = time.perf_counter()
        hits = hybrid(text, vector)
        times.append((time.perf_counter() - t) * 1000.0)
        assert len(hits) > 0, f"no hits for {text!r}"
    wall = time.perf_counter() - wall
    times.sort()
    report = {
        "peer": f"lancedb {lancedb.__version__}",
        "chunks": len(chunks),
        "ingest_seconds": ingest_seconds,
        "chunks_per_second": len(chunks) / ingest_seconds,
        "index_build_seconds": index_seconds,
        "vector_search": {"nprobes": nprobes, "refine_factor": refine_factor, "ef": ef},
        "ann_recall_at_10": recall,
        "recall_queries": min(args.recall_queries, len(query_vectors)),
        "hybrid": {
            "queries": len(times),
            "p50_ms": percentile(times, 50),
            "p99_ms": percentile(times, 99),
            "p999_ms": percentile(times, 99.9),
            "queries_per_second": len(times) / wall,
        },
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
