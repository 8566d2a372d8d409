//! Top-k BM25 over a bare disjunction of terms with block-max MaxScore (Turtle & Flood 1995,
//! with the per-block bounds of Ding & Suel 2011; what Lucene runs its long disjunctions
//! with) instead of tantivy's block-max WAND.
//!
//! A long query — every term of a 20-word claim, or of a whole abstract — holds terms that a
//! third of all chunks contain ("cell", "protein"). Block-max WAND walks their postings in
//! step with the rare terms' and re-sorts every term at every step, so at a million chunks
//! such queries were the keyword branch's tail. MaxScore orders the terms by the most each
//! can add: once the k-th best score exceeds what the weakest terms could add together, those
//! terms stop proposing documents and are only looked up (a skip-list seek) for documents a
//! stronger term proposes — and not even then when the document cannot reach the k-th score
//! with them.
//!
//! The most a term can add is taken per window of documents, not once per term: a window ends
//! where the postings block of a term that proposes documents ends, and within it each term
//! adds at most its block's bound (from the skip list, without decoding the block) when one
//! block covers the window. A window whose bounds cannot reach the k-th score together is
//! skipped whole; within the others, terms are split again by their window bounds.
//!
//! Segments are searched side by side, and each skips what cannot reach the highest k-th
//! score any of them has kept so far ([`SharedFloor`]): at a million chunks in ten segments,
//! most segments start with a floor near the answer's k-th score instead of from nothing.
//!
//! Same scores as tantivy's `TopDocs` (each term scored by tantivy's own term scorer), summed
//! in query order whatever path found the document, so the answer depends on the snapshot
//! only. Ties go to the lower document address, as `TopDocs`'s do. Every bound is an upper
//! bound, so the answer is exact: see [`BlockBound`] for the one place where tantivy's own
//! block bound is not.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight, Scorer, TermScorer};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, DocSet, Score, Searcher, SegmentReader, Term, TERMINATED};

/// The best `k` documents of `searcher` for the disjunction of `terms` (each with the boost
/// it is scored with), by BM25 score, ties to the lower document address.
pub fn top_k(
    searcher: &Searcher,
    terms: &[(Term, Score)],
    k: usize,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let segments = searcher.segment_readers();
    if k == 0 || terms.is_empty() || segments.is_empty() {
        return Ok(Vec::new());
    }
    let clauses = clauses(searcher, terms)?;
    let floor = SharedFloor::default();
    let per_segment = searcher.index().search_executor().map(
        |(ordinal, reader)| search_segment(&clauses, ordinal as u32, reader, k, &floor),
        segments.iter().enumerate(),
    )?;
    let mut found: Vec<(Score, DocAddress)> = per_segment.into_iter().flatten().collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.truncate(k);
    Ok(found)
}

/// The terms with what scores them on `searcher`'s segments.
fn clauses(searcher: &Searcher, terms: &[(Term, Score)]) -> tantivy::Result<Vec<Clause>> {
    let documents = searcher.total_num_docs()?;
    terms
        .iter()
        .map(|(term, boost)| {
            // What `TermQuery` scores a term with: the searcher's statistics, then the boost.
            let weight =
                Bm25Weight::for_terms(searcher, std::slice::from_ref(term))?.boost_by(*boost);
            let tokens = searcher.total_num_tokens(term.field())?;
            Ok(Clause {
                term: term.clone(),
                boost: *boost,
                // A term's BM25 part is its weight times tf / (tf + norm) < 1: at the shortest
                // length and the largest frequency the ratio rounds to 1, the weight itself.
                // (`Bm25Weight::max_score` takes the longest length, which a chunk repeating
                // one word can pass.)
                max: weight.score(0, u32::MAX),
                weight,
                doc_freq: searcher.doc_freq(term)?,
                documents,
                average_length: tokens as Score / documents.max(1) as Score,
            })
        })
        .collect()
}

/// One term of the query: what scores it, and the most it can add to a document's score.
struct Clause {
    term: Term,
    boost: Score,
    /// The boosted weight `TermQuery` would score the term with.
    weight: Bm25Weight,
    max: Score,
    /// The searcher's statistics behind `weight`, for the per-segment block bounds.
    doc_freq: u64,
    documents: u64,
    average_length: Score,
}

/// Slack on every "cannot reach the k-th score" test: the bounds are sums of floats, and a
/// rounding must never drop a document that ties into the top k.
const SLACK: Score = 1e-4;

/// What a term adds at most to any document of one of a segment's postings blocks.
///
/// tantivy writes into each full block's skip entry the (length, frequency) pair with the
/// highest BM25 part, chosen with the *segment's* average length; `TermScorer::block_max_score`
/// scores that pair with the searcher's average. Where the two averages differ, another
/// document of the block can score higher than that, so tantivy's bound can be short (its
/// documentation says so). This bound holds:
///
/// - Scored with the segment's average (`weight`), the pair's tf part tf/(tf + K) is the
///   block's highest, m. So every document of the block has K ≥ tf·(1 − m)/m there.
/// - K = k1·(1 − b) + k1·b·length/average. At the searcher's average, K shrinks at most
///   by r = min(1, segment average / searcher average), so K ≥ r·tf·(1 − m)/m.
/// - So every document's tf part at the searcher's average is at most m / (m + r·(1 − m)):
///   m itself where the segment's documents are no shorter than the index's.
struct BlockBound {
    weight: Bm25Weight,
    /// r above.
    length_ratio: Score,
    fieldnorms: FieldNormReader,
}

/// One term's postings in one segment, scored as `TermQuery` scores them.
struct Cursor {
    scorer: TermScorer,
    /// Where in the query the term is: its part of a score is summed in query order.
    clause: usize,
    max: Score,
    /// `None` where the segment keeps no per-block bound the rule above can use (no lengths
    /// or no frequencies indexed): the term's `max` stands for every block.
    block: Option<BlockBound>,
}

impl Cursor {
    /// The term's postings in `reader`, or `None` where the segment does not hold it.
    fn open(
        clauses: &[Clause],
        clause: usize,
        reader: &SegmentReader,
    ) -> tantivy::Result<Option<Cursor>> {
        let c = &clauses[clause];
        let field = c.term.field();
        let inverted = reader.inverted_index(field)?;
        let Some(info) = inverted.get_term_info(&c.term)? else {
            return Ok(None);
        };
        let postings = inverted.read_postings_from_terminfo(&info, IndexRecordOption::WithFreqs)?;
        let fieldnorms = reader.fieldnorms_readers().get_field(field)?;
        let has_freqs = reader
            .schema()
            .get_field_entry(field)
            .field_type()
            .get_index_record_option()
            .is_some_and(IndexRecordOption::has_freq);
        let block = match &fieldnorms {
            Some(fieldnorms) if has_freqs => {
                // The average the segment's block bounds were chosen with, as tantivy's
                // postings serializer computes it.
                let average =
                    inverted.total_num_tokens() as Score / fieldnorms.num_docs().max(1) as Score;
                (average > 0.0 && average.is_finite() && c.max > 0.0).then(|| BlockBound {
                    weight: Bm25Weight::for_one_term_without_explain(
                        c.doc_freq,
                        c.documents,
                        average,
                    )
                    .boost_by(c.boost),
                    length_ratio: (average / c.average_length).min(1.0),
                    fieldnorms: fieldnorms.clone(),
                })
            }
            _ => None,
        };
        // Without lengths, `TermQuery` scores every document as of length 1.
        let fieldnorms =
            fieldnorms.unwrap_or_else(|| FieldNormReader::constant(reader.max_doc(), 1));
        Ok(Some(Cursor {
            scorer: TermScorer::new(postings, fieldnorms, c.weight.clone()),
            clause,
            max: c.max,
            block,
        }))
    }

    fn doc(&self) -> DocId {
        self.scorer.doc()
    }

    /// Moves to the first document at or after `target` (never back).
    fn seek(&mut self, target: DocId) {
        if self.scorer.doc() < target {
            self.scorer.seek(target);
        }
    }

    /// The last document of the postings block that holds `target`'s place, and the most the
    /// term adds to any document of that block. Moves only the skip list (no block is
    /// decoded): until `seek` is called with a target at least this one, the cursor must not
    /// be advanced.
    fn block_bound(&mut self, target: DocId) -> (DocId, Score) {
        self.scorer.seek_block(target);
        let last = self.scorer.last_doc_in_block();
        // The last block of a term is not full, and its skip entry holds no bound.
        let bound = match &self.block {
            Some(b) if last != TERMINATED => {
                // The pair's score is the term's weight (`max`) times m.
                let pair = self
                    .scorer
                    .block_cursor()
                    .block_max_score(&b.fieldnorms, &b.weight);
                let m = pair / self.max;
                (pair / (m + b.length_ratio * (1.0 - m))).min(self.max)
            }
            _ => self.max,
        };
        (last, bound)
    }
}

/// The highest k-th score any segment has kept so far: a floor under the k-th score of the
/// whole answer (those k documents are in it or beaten), so every segment may skip what
/// cannot reach it — as Lucene shares its minimum competitive score between slices. A
/// segment searched after others starts with their floor instead of from nothing. Skipping
/// stops strictly below the floor (a document of a lower segment wins a tie), so the answer
/// is the same whichever segments finish first.
#[derive(Default)]
struct SharedFloor(AtomicU32);

impl SharedFloor {
    fn get(&self) -> Option<Score> {
        // BM25 scores are never negative, so their bits order as the scores do; 0: none yet.
        match self.0.load(AtomicOrdering::Relaxed) {
            0 => None,
            bits => Some(Score::from_bits(bits)),
        }
    }

    fn raise(&self, score: Score) {
        // Written only when it rises: a read-modify-write takes the cache line from the
        // threads that read the floor for every document, even when the value stays.
        if score > 0.0 && self.get().is_none_or(|floor| score > floor) {
            self.0.fetch_max(score.to_bits(), AtomicOrdering::Relaxed);
        }
    }
}

/// Whether terms adding at most `bound` together leave a document below `threshold`.
fn cannot_reach(bound: Score, threshold: Option<Score>) -> bool {
    threshold.is_some_and(|t| bound + SLACK * t <= t)
}

fn search_segment(
    clauses: &[Clause],
    ordinal: u32,
    reader: &SegmentReader,
    k: usize,
    floor: &SharedFloor,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let mut cursors = Vec::with_capacity(clauses.len());
    for clause in 0..clauses.len() {
        cursors.extend(Cursor::open(clauses, clause, reader)?);
    }
    let alive = reader.alive_bitset();
    let mut top = TopHeap::new(k);
    // What a document must reach: this segment's k-th score or the shared floor.
    let threshold = |top: &TopHeap| match (top.threshold(), floor.get()) {
        (Some(local), Some(shared)) => Some(local.max(shared)),
        (local, shared) => local.or(shared),
    };
    let mut parts: Vec<Score> = vec![0.0; clauses.len()];
    // This window's bound per cursor; the cursors by bound, least first; `reach[i]` is what
    // the first i + 1 of them can add together.
    let mut bounds: Vec<Score> = vec![0.0; cursors.len()];
    let mut order: Vec<usize> = (0..cursors.len()).collect();
    let mut reach: Vec<Score> = vec![0.0; cursors.len()];
    // The cursors whose blocks end the window: those that proposed documents in the last one.
    let mut lead: Vec<usize> = order.clone();
    let mut window_min: DocId = 0;
    loop {
        let t = threshold(&top);
        let mut window_max = TERMINATED;
        let mut any = false;
        for pass in [0, 1] {
            for &i in &lead {
                cursors[i].seek(window_min);
                if cursors[i].doc() != TERMINATED {
                    any = true;
                    window_max = window_max.min(cursors[i].block_bound(window_min).0);
                }
            }
            if any || pass == 1 {
                break;
            }
            // Every lead term has run out: the others may still reach the k-th score.
            lead = (0..cursors.len()).collect();
        }
        if !any {
            break;
        }
        for (i, cursor) in cursors.iter_mut().enumerate() {
            // A cursor's `doc` is where its next document can be at the earliest.
            bounds[i] = if cursor.doc() == TERMINATED || cursor.doc() > window_max {
                0.0
            } else {
                match cursor.block_bound(window_min) {
                    (last, bound) if last >= window_max => bound,
                    _ => cursor.max,
                }
            };
        }
        order.sort_by(|&a, &b| bounds[a].total_cmp(&bounds[b]).then(a.cmp(&b)));
        let mut sum = 0.0;
        for (r, &i) in reach.iter_mut().zip(&order) {
            sum += bounds[i];
            *r = sum;
        }
        // Terms before `essential` cannot reach the k-th score on their own in this window:
        // they only add to documents the others propose. None left: the window is skipped.
        let essential = reach.iter().take_while(|&&r| cannot_reach(r, t)).count();
        if essential < cursors.len() {
            lead = order[essential..].to_vec();
            for &i in &lead {
                cursors[i].seek(window_min);
            }
        }
        let mut restart_at = None;
        while essential < cursors.len() {
            let doc = lead
                .iter()
                .map(|&i| cursors[i].doc())
                .min()
                .unwrap_or(TERMINATED);
            if doc == TERMINATED || doc > window_max {
                break;
            }
            // The k-th score rose (here or in another segment) past what the weakest
            // proposing term can add with the ones below it: split the terms again from here.
            let t = threshold(&top);
            if cannot_reach(reach[essential], t) {
                restart_at = Some(doc);
                break;
            }
            parts.iter_mut().for_each(|p| *p = 0.0);
            let mut partial = 0.0;
            for &i in &lead {
                let c = &mut cursors[i];
                if c.doc() == doc {
                    let score = c.scorer.score();
                    parts[c.clause] = score;
                    partial += score;
                    c.scorer.advance();
                }
            }
            let mut reachable = true;
            for j in (0..essential).rev() {
                if cannot_reach(partial + reach[j], t) {
                    reachable = false;
                    break;
                }
                let c = &mut cursors[order[j]];
                c.seek(doc);
                if c.doc() == doc {
                    let score = c.scorer.score();
                    parts[c.clause] = score;
                    partial += score;
                }
            }
            if !reachable || alive.is_some_and(|a| !a.is_alive(doc)) {
                continue;
            }
            // The score in query order, whichever terms proposed the document.
            let score: Score = parts.iter().sum();
            if top.push(score, doc) {
                if let Some(t) = top.threshold() {
                    floor.raise(t);
                }
            }
        }
        window_min = match restart_at {
            Some(doc) => doc,
            None if window_max == TERMINATED => break,
            None => window_max + 1,
        };
    }
    Ok(top.into_fruit(ordinal))
}

/// The best `k` of a segment's documents, which arrive in ascending document order: a
/// document scoring no more than the k-th kept loses to it (the lower document wins ties).
struct TopHeap {
    k: usize,
    /// The worst kept document on top.
    heap: BinaryHeap<Reverse<Entry>>,
}

#[derive(Clone, Copy)]
struct Entry {
    score: Score,
    doc: DocId,
}

impl Ord for Entry {
    /// Better is greater: a higher score, or the lower document at equal scores.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.doc.cmp(&self.doc))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl TopHeap {
    fn new(k: usize) -> Self {
        TopHeap {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Keeps `doc` if it is among the best `k` so far; returns whether it was kept.
    fn push(&mut self, score: Score, doc: DocId) -> bool {
        if self.k == 0 || self.threshold().is_some_and(|t| score <= t) {
            return false;
        }
        self.heap.push(Reverse(Entry { score, doc }));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
        true
    }

    /// The k-th best score once `k` documents are kept.
    fn threshold(&self) -> Option<Score> {
        (self.heap.len() == self.k)
            .then(|| self.heap.peek().map(|e| e.0.score))
            .flatten()
    }

    fn into_fruit(self, segment: u32) -> Vec<(Score, DocAddress)> {
        self.heap
            .into_iter()
            .map(|Reverse(e)| (e.score, DocAddress::new(segment, e.doc)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_keeps_its_best_k_with_ties_to_the_lower_document() {
        let mut top = TopHeap::new(2);
        for (doc, score) in [(0, 1.0), (1, 3.0), (2, 3.0), (3, 2.0), (4, 3.0)] {
            top.push(score, doc);
        }
        let mut kept: Vec<(Score, u32)> = top
            .into_fruit(0)
            .into_iter()
            .map(|(s, a)| (s, a.doc_id))
            .collect();
        kept.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        assert_eq!(kept, vec![(3.0, 1), (3.0, 2)]);
    }

    /// An index in memory with one text field, and its writer on one thread.
    fn ram_index() -> (tantivy::Index, tantivy::schema::Field, tantivy::IndexWriter) {
        let mut schema = tantivy::schema::Schema::builder();
        let body = schema.add_text_field("body", tantivy::schema::TEXT);
        let index = tantivy::Index::create_in_ram(schema.build());
        let writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        (index, body, writer)
    }

    #[test]
    fn a_segment_proposes_only_documents_that_can_reach_the_shared_floor() {
        use tantivy::doc;
        let (index, body, mut writer) = ram_index();
        for i in 0..30 {
            writer
                .add_document(doc!(body => format!("common filler {i}")))
                .unwrap();
        }
        for _ in 0..3 {
            writer.add_document(doc!(body => "rare common")).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 1);
        let terms = [
            (Term::from_field_text(body, "rare"), 1.0),
            (Term::from_field_text(body, "common"), 1.0),
        ];
        let clauses = clauses(&searcher, &terms).unwrap();
        let reader = &searcher.segment_readers()[0];
        let rare_docs: Vec<u32> = (30..33).collect();
        let docs = |hits: Vec<(Score, DocAddress)>| {
            let mut docs: Vec<u32> = hits.iter().map(|h| h.1.doc_id).collect();
            docs.sort();
            docs
        };

        // Alone, the segment fills its ten places from the common term's documents too.
        let alone = search_segment(&clauses, 0, reader, 10, &SharedFloor::default()).unwrap();
        assert_eq!(alone.len(), 10);

        // Above what "common" alone can add (another segment kept ten such documents), only
        // documents holding "rare" can reach the answer: "common" no longer proposes any.
        let floor = SharedFloor::default();
        floor.raise(2.0 * clauses[1].max);
        let found = search_segment(&clauses, 0, reader, 10, &floor).unwrap();
        assert_eq!(docs(found), rare_docs);

        // A floor above every score leaves nothing to propose.
        floor.raise(10.0 * (clauses[0].max + clauses[1].max));
        assert!(search_segment(&clauses, 0, reader, 10, &floor)
            .unwrap()
            .is_empty());
    }

    /// The disjunction `top_k` answers, as tantivy's own query.
    fn disjunction(terms: &[(Term, Score)]) -> tantivy::query::BooleanQuery {
        use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
        BooleanQuery::new(
            terms
                .iter()
                .map(|(t, boost)| {
                    let q: Box<dyn Query> =
                        Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs));
                    let q: Box<dyn Query> = if *boost == 1.0 {
                        q
                    } else {
                        Box::new(BoostQuery::new(q, *boost))
                    };
                    (Occur::Should, q)
                })
                .collect(),
        )
    }

    /// `top_k` against every matching document scored by tantivy (`TopDocs` with room for all
    /// of them skips nothing), cut to the best `k`. Sums of the same term scores may differ
    /// in the last bit with their order, so scores agree to 1e-5 and the documents above the
    /// k-th score exactly; every run answers the same.
    fn assert_exact(searcher: &Searcher, terms: &[(Term, Score)], k: usize) {
        use tantivy::collector::TopDocs;
        let everything = searcher.num_docs() as usize + 1;
        let mut expected = searcher
            .search(
                &disjunction(terms),
                &TopDocs::with_limit(everything).order_by_score(),
            )
            .unwrap();
        expected.truncate(k);
        let found = top_k(searcher, terms, k).unwrap();
        for _ in 0..3 {
            assert_eq!(top_k(searcher, terms, k).unwrap(), found);
        }
        assert_eq!(found.len(), expected.len(), "{terms:?}, k {k}");
        for (f, e) in found.iter().zip(&expected) {
            assert!((f.0 - e.0).abs() <= 1e-5 * e.0.abs(), "{terms:?} k {k}");
        }
        let Some(kth) = expected.last().map(|e| e.0) else {
            return;
        };
        let above = |hits: &[(Score, DocAddress)]| -> Vec<DocAddress> {
            let mut docs: Vec<DocAddress> = hits
                .iter()
                .filter(|h| h.0 > kth + 1e-4)
                .map(|h| h.1)
                .collect();
            docs.sort();
            docs
        };
        assert_eq!(above(&found), above(&expected), "{terms:?}, k {k}");
    }

    /// On an index of several segments searched on several threads, with common and rare
    /// terms, repeated (boosted) terms, many equal scores (texts recur in every segment) and
    /// deleted documents.
    #[test]
    fn answers_what_scoring_every_document_answers() {
        use tantivy::doc;

        let (index, body, mut writer) = ram_index();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        // Word i is in about 1 of (i + 1)² documents: a few common words, many rare ones.
        let words: Vec<String> = (0..12).map(|i| format!("w{i}")).collect();
        let mut rng = fastrand::Rng::with_seed(11);
        for segment in 0..5 {
            for i in 0..600 {
                let mut text: Vec<&str> = Vec::new();
                for (w, word) in words.iter().enumerate() {
                    let repeat = if i % 3 == 0 {
                        // Texts that recur word for word in every segment.
                        usize::from((i / 3 + w) % (w + 2) == 0)
                    } else {
                        usize::from(rng.usize(..(w + 1) * (w + 1)) == 0) * rng.usize(1..4)
                    };
                    text.extend(std::iter::repeat_n(word.as_str(), repeat));
                }
                text.extend(std::iter::repeat_n("filler", rng.usize(0..20)));
                writer
                    .add_document(doc!(body => format!("{} s{segment}d{i}", text.join(" "))))
                    .unwrap();
            }
            writer.commit().unwrap();
        }
        writer.delete_term(Term::from_field_text(body, "s1d7"));
        writer.delete_term(Term::from_field_text(body, "s3d300"));
        writer.commit().unwrap();
        let mut index = index;
        index.set_multithread_executor(3).unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert!(searcher.segment_readers().len() > 1);
        let term = |w: &str| Term::from_field_text(body, w);
        let queries: Vec<Vec<(Term, Score)>> = vec![
            vec![(term("w0"), 1.0)],
            vec![(term("w0"), 1.0), (term("w1"), 1.0)],
            (0..12).map(|i| (term(&format!("w{i}")), 1.0)).collect(),
            vec![(term("w0"), 2.0), (term("w7"), 1.0), (term("w11"), 3.0)],
            vec![
                (term("w3"), 1.0),
                (term("s1d7"), 1.0),
                (term("absent"), 1.0),
            ],
            vec![(term("absent"), 1.0)],
        ];
        for terms in &queries {
            for k in [1, 3, 10, 30, 5000] {
                assert_exact(&searcher, terms, k);
            }
        }
    }

    const VOCABULARY: usize = 300;

    /// Four segments whose average lengths differ by a factor of 25, so that block bounds
    /// chosen at one average are scored at another; terms `t0`…`t299`, a term's frequency
    /// falling with its rank.
    fn segments_of_different_lengths() -> (tantivy::Index, tantivy::schema::Field) {
        use tantivy::doc;

        let (mut index, body, mut writer) = ram_index();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let mut rng = fastrand::Rng::with_seed(7);
        for (segment, length) in [(0, 8), (1, 80), (2, 20), (3, 200)] {
            for _ in 0..700 {
                let words: Vec<String> = (0..rng.usize(1..=length))
                    .map(|_| {
                        // Rank r with probability about 1 / (r + 1): Zipf-like.
                        let r = (VOCABULARY as f64).powf(rng.f64()) as usize - 1;
                        format!("t{r}")
                    })
                    .collect();
                writer
                    .add_document(doc!(body => format!("{} s{segment}", words.join(" "))))
                    .unwrap();
            }
            writer.commit().unwrap();
        }
        index.set_multithread_executor(2).unwrap();
        (index, body)
    }

    /// Every document scores within its block's bound, in segments whose documents are
    /// shorter and longer than the index's on average; and the bounds of full blocks are
    /// below the term's own (else they would skip nothing).
    #[test]
    fn every_block_bound_holds_for_its_documents() {
        let (index, body) = segments_of_different_lengths();
        let searcher = index.reader().unwrap().searcher();
        let (mut full_blocks, mut tighter) = (0, 0);
        for r in 0..VOCABULARY {
            let terms = [(Term::from_field_text(body, &format!("t{r}")), 1.0)];
            let clauses = clauses(&searcher, &terms).unwrap();
            for reader in searcher.segment_readers() {
                let Some(mut cursor) = Cursor::open(&clauses, 0, reader).unwrap() else {
                    continue;
                };
                let mut block = None;
                while cursor.doc() != TERMINATED {
                    let (last, bound) = cursor.block_bound(cursor.doc());
                    if block != Some(last) && last != TERMINATED {
                        full_blocks += 1;
                        tighter += usize::from(bound < cursor.max);
                    }
                    block = Some(last);
                    let score = cursor.scorer.score();
                    assert!(
                        score <= bound * (1.0 + 1e-6),
                        "t{r}: {score} above its block's bound {bound}"
                    );
                    cursor.scorer.advance();
                }
            }
        }
        assert!(full_blocks > 50, "{full_blocks} full blocks");
        assert!(
            tighter * 10 >= full_blocks * 9,
            "{tighter} of {full_blocks} full blocks bound below the term"
        );
    }

    /// Long queries over those segments: random terms, random k.
    #[test]
    fn long_queries_over_segments_of_different_lengths_are_exact() {
        let (index, body) = segments_of_different_lengths();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 4);
        let mut rng = fastrand::Rng::with_seed(8);
        for _ in 0..60 {
            let terms: Vec<(Term, Score)> = (0..rng.usize(1..40))
                .map(|_| {
                    let r = rng.usize(..VOCABULARY);
                    (Term::from_field_text(body, &format!("t{r}")), 1.0)
                })
                .collect();
            let k = [1, 2, 10, 25, 100][rng.usize(..5)];
            assert_exact(&searcher, &terms, k);
        }
    }

    /// tantivy keeps, per full block, the document whose BM25 part is highest at the
    /// segment's average length. Scored at the searcher's (lower) average, a short document
    /// of the same block can beat it: the bound must hold for that document too.
    #[test]
    fn a_block_bound_holds_at_the_searchers_average_length() {
        use tantivy::doc;

        let (index, body, mut writer) = ram_index();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        // Many two-word documents pull the searcher's average length far down.
        for _ in 0..3000 {
            writer.add_document(doc!(body => "short text")).unwrap();
        }
        writer.commit().unwrap();
        // One full block of "needle" in a segment of long documents: 127 long ones with the
        // term ten times, and last a three-word one with it once.
        let long = format!("{} {}", "needle ".repeat(10), "hay ".repeat(390));
        for _ in 0..127 {
            writer.add_document(doc!(body => long.clone())).unwrap();
        }
        writer
            .add_document(doc!(body => "needle in short"))
            .unwrap();
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let terms = [(Term::from_field_text(body, "needle"), 1.0)];
        let clauses = clauses(&searcher, &terms).unwrap();
        let reader = &searcher.segment_readers()[1];
        let mut cursor = Cursor::open(&clauses, 0, reader).unwrap().unwrap();
        let (last, bound) = cursor.block_bound(0);
        assert_eq!(last, 127, "one full block");
        assert!(
            bound < cursor.max,
            "the block's bound is tighter than the term's"
        );
        let mut best = (0.0, 0);
        while cursor.doc() != TERMINATED {
            let score = cursor.scorer.score();
            assert!(
                score <= bound * (1.0 + 1e-6),
                "{score} above the bound {bound}"
            );
            if score > best.0 {
                best = (score, cursor.doc());
            }
            cursor.scorer.advance();
        }
        assert_eq!(best.1, 127, "the short document scores highest");
        // So the best document is found, whichever order the documents come in.
        let found = top_k(&searcher, &terms, 1).unwrap();
        assert_eq!(found, vec![(best.0, DocAddress::new(1, 127))]);
    }
}
