"""Offline check of an idea for the resident vector search (issue 8): would a first Hamming
stage over 128 of the 384 sign bits (a third of the memory a scan reads) keep the recall
of what runs? It nearly does, but the idea was dropped for its cost (BENCHMARKS.md,
"Offline: a first Hamming stage…"); the replay stays for checking recall of later ideas.

Replays the stages of `src/index/resident_vectors.rs` in numpy on an index's vectors:
Hamming over all 384 sign bits (around the mean of the first 20,000 rows) keeps 8,000 rows,
the query's centred floats against their signs keep 2,000, byte codes keep 30, exact scores
give the top 10; the variants first keep a share of the rows by Hamming over 128 bits.
Queries are rows of the index, left out of their own answers.

    $(scripts/lancedb-venv) scripts/two_stage_hamming.py /tmp/scale1m/indexes/scale 300
"""

import sys
import time

import lancedb
import numpy as np


def smallest(values, k):
    """Positions of the k smallest values (all of them when there are fewer)."""
    if k >= len(values):
        return np.arange(len(values))
    return np.argpartition(values, k)[:k]


def pack(bits):
    """Rows of bools -> rows of little-endian u64 words (bit i of word w: dimension 64w+i)."""
    packed = np.packbits(np.ascontiguousarray(bits), axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8")


def main(index_dir, queries):
    table = lancedb.connect(index_dir).open_table("chunks")
    column = table.search().select(["vector"]).limit(10**9).to_arrow().column("vector")
    column = column.combine_chunks()
    v = column.values.to_numpy().reshape(-1, column.type.list_size).astype(np.float32)
    n = v.shape[0]
    center = v[:20000].mean(axis=0)
    bits = v - center > 0
    signs = pack(bits)
    spread = np.sort(np.argsort(-(v - center).var(axis=0))[:128])
    heads = {"dims 0-127": np.arange(128), "128 highest-variance dims": spread}
    head_codes = {name: pack(bits[:, dims]) for name, dims in heads.items()}
    scale = np.abs(v).max(axis=1) / 127.0
    byte_codes = np.round(v / scale[:, None]).astype(np.int8)

    def search(q, row, head=None, head_keep=0):
        candidates = np.arange(n)
        if head is not None:
            codes, dims = head
            q_head = pack((q - center > 0)[None, dims])[0]
            distance = np.bitwise_count(codes ^ q_head).sum(axis=1)
            distance[row] = 10**6
            candidates = smallest(distance, head_keep)
        distance = np.bitwise_count(signs[candidates] ^ pack((q - center > 0)[None, :])[0]).sum(axis=1)
        distance[candidates == row] = 10**6
        keep = candidates[smallest(distance, 8000)]
        by_signs = np.where(bits[keep], 1.0, -1.0) @ (q - center)
        keep = keep[smallest(-by_signs, 2000)]
        by_bytes = (byte_codes[keep].astype(np.float32) @ q) * scale[keep]
        keep = keep[smallest(-by_bytes, 30)]
        return set(keep[np.argsort(-(v[keep] @ q))[:10]].tolist())

    rng = np.random.default_rng(7)
    found = {}
    started = time.time()
    for row in rng.choice(n, queries, replace=False):
        q = v[row]
        exact = v @ q
        exact[row] = -np.inf
        truth = set(smallest(-exact, 10).tolist())
        runs = [("one stage, 384 bits (what runs)", None, 0)]
        for name, dims in heads.items():
            for share in (0.05, 0.10, 0.20, 0.30):
                runs.append((f"{name}, keep {share:.0%}", (head_codes[name], dims), max(1, int(n * share))))
        for label, head, keep in runs:
            found[label] = found.get(label, 0) + len(truth & search(q, row, head, keep))
    for label, hits in found.items():
        print(f"{label:40s} recall@10 {hits / (10 * queries):.4f}")
    print(f"{n} rows, {queries} queries, {time.time() - started:.0f} s")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: two_stage_hamming.py INDEX_DIR QUERIES")
    main(sys.argv[1], int(sys.argv[2]))
