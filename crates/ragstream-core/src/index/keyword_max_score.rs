//! Top-k BM25 over a bare disjunction of terms with MaxScore (Turtle & Flood 1995; what
//! Lucene moved its long disjunctions to) instead of tantivy's block-max WAND.
//!
//! A long query — a 20-word claim keeps its 12 rarest terms — still holds terms that a third
//! of all chunks contain ("cell", "protein"). Block-max WAND walks their postings in step with
//! the rare terms' and re-sorts every term at every step, so at a million chunks such queries
//! were the keyword branch's tail. MaxScore orders the terms by the most each can add: once
//! the k-th best score exceeds what the commonest terms could add together, those terms stop
//! proposing documents and are only looked up (a skip-list seek) for documents a rarer term
//! proposes — and not even then when the document cannot reach the k-th score with them.
//!
//! Each segment is read a window of documents at a time: the terms that may still propose
//! documents are read term by term into the window's score buffer, then the window's
//! documents are completed from the other terms (`search_segment_in_windows`).
//!
//! Segments are searched side by side, and each skips what cannot reach the highest k-th
//! score any of them has kept so far ([`SharedFloor`]): at a million chunks in ten segments,
//! most segments start with a floor near the answer's k-th score instead of from nothing.
//!
//! Same scores as tantivy's `TopDocs` (each term scored with tantivy's own BM25 weight, as
//! its term scorer does), summed in query order whatever path found the document, so the
//! answer depends on the snapshot only. Ties go to the lower document address, as
//! `TopDocs`'s do.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::Bm25Weight;
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
    terms
        .iter()
        .map(|(term, boost)| {
            // The weight tantivy's `TermQuery` scores the term with on this searcher.
            let bm25 =
                Bm25Weight::for_terms(searcher, std::slice::from_ref(term))?.boost_by(*boost);
            // A term's BM25 part is its weight times tf / (tf + norm), below 1: at the
            // shortest length and the largest frequency the ratio rounds to 1, the weight
            // itself. (`Bm25Weight::max_score` takes the longest length, and a short chunk
            // repeating one word scores above it: lengths are stored rounded down.)
            let max = bm25.score(0, u32::MAX);
            Ok(Clause {
                term: term.clone(),
                bm25,
                max,
            })
        })
        .collect()
}

/// One term of the query: its BM25 weight (boost included), and the most it can add to a
/// document's score.
struct Clause {
    term: Term,
    bm25: Bm25Weight,
    max: Score,
}

/// One term's postings in one segment, scored as tantivy's term scorer scores them (its
/// weight's `score` of the document's field norm and the term's frequency), but without a
/// dynamic call per posting: a long query reads millions of postings (BENCHMARKS.md,
/// "Passages as queries at a million chunks").
struct TermCursor<'a> {
    postings: SegmentPostings,
    norms: FieldNormReader,
    bm25: &'a Bm25Weight,
}

impl<'a> TermCursor<'a> {
    /// `clause`'s postings in `reader`; none (the cursor at `TERMINATED`) where the segment
    /// does not hold the term.
    fn open(clause: &'a Clause, reader: &SegmentReader) -> tantivy::Result<TermCursor<'a>> {
        let field = clause.term.field();
        let postings = reader
            .inverted_index(field)?
            .read_postings(&clause.term, IndexRecordOption::WithFreqs)?
            .unwrap_or_else(SegmentPostings::empty);
        let norms = reader
            .fieldnorms_readers()
            .get_field(field)?
            .unwrap_or_else(|| FieldNormReader::constant(reader.max_doc(), 1));
        Ok(TermCursor {
            postings,
            norms,
            bm25: &clause.bm25,
        })
    }

    #[inline]
    fn doc(&self) -> DocId {
        self.postings.doc()
    }

    #[inline]
    fn advance(&mut self) -> DocId {
        self.postings.advance()
    }

    #[inline]
    fn seek(&mut self, target: DocId) -> DocId {
        self.postings.seek(target)
    }

    #[inline]
    fn score(&self) -> Score {
        let doc = self.doc();
        self.bm25
            .score(self.norms.fieldnorm_id(doc), self.postings.term_freq())
    }
}

/// Slack on every "cannot reach the k-th score" test: the bounds are sums of floats, and a
/// rounding must never drop a document that ties into the top k.
const SLACK: Score = 1e-4;

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

fn search_segment(
    clauses: &[Clause],
    ordinal: u32,
    reader: &SegmentReader,
    k: usize,
    floor: &SharedFloor,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    search_segment_in_windows(
        clauses,
        ordinal,
        reader,
        k,
        floor,
        window_docs(clauses.len()),
    )
}

/// Documents per window: [`WINDOW_DOCS`], fewer for a query of more than
/// [`WINDOW_CELLS`] / [`WINDOW_DOCS`] terms, so that a window's score buffer stays within
/// [`WINDOW_CELLS`] (a query of more distinct terms than that reads one document a window).
fn window_docs(terms: usize) -> u32 {
    (WINDOW_CELLS / terms.max(1)).clamp(1, WINDOW_DOCS) as u32
}

/// Documents per window of a segment. Any size gives the same answer; sizes near this one,
/// smaller or larger, ran about as fast at a million chunks (BENCHMARKS.md,
/// "Window-at-a-time MaxScore at a million chunks").
const WINDOW_DOCS: usize = 4096;

/// Score cells (documents × query terms) one segment's window may hold: 512 KiB.
const WINDOW_CELLS: usize = WINDOW_DOCS * 32;

/// MaxScore over one segment, a window of `window` documents at a time, as Lucene's
/// `MaxScoreBulkScorer` does. In each window the essential terms are read one after another
/// into a score buffer, one tight loop per term. Then the window's documents are completed
/// one by one from the other terms, in document order. Finding each next document among
/// every essential term instead was most of a long query's time (BENCHMARKS.md,
/// "Window-at-a-time MaxScore at a million chunks").
fn search_segment_in_windows(
    clauses: &[Clause],
    ordinal: u32,
    reader: &SegmentReader,
    k: usize,
    floor: &SharedFloor,
    window: u32,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    // Terms by the most they can add, least first; `bound[i]` is what terms 0..=i can add.
    let mut order: Vec<usize> = (0..clauses.len()).collect();
    order.sort_by(|&a, &b| clauses[a].max.total_cmp(&clauses[b].max).then(a.cmp(&b)));
    let mut scorers: Vec<TermCursor> = Vec::with_capacity(order.len());
    for &i in &order {
        scorers.push(TermCursor::open(&clauses[i], reader)?);
    }
    let bound: Vec<Score> = order
        .iter()
        .scan(0.0, |sum, &i| {
            *sum += clauses[i].max;
            Some(*sum)
        })
        .collect();
    let alive = reader.alive_bitset();
    let mut top = TopHeap::new(k);
    // What a document must reach: this segment's k-th score or the shared floor.
    let threshold = |top: &TopHeap| match (top.threshold(), floor.get()) {
        (Some(local), Some(shared)) => Some(local.max(shared)),
        (local, shared) => local.or(shared),
    };
    // Terms before `essential` cannot reach the k-th score on their own: they only add to
    // documents the others propose. The split is made per window, so a term that becomes
    // non-essential mid-window still proposes that window's documents (more work, same
    // answer).
    let mut essential = 0;
    let mut scores = WindowScores::new(window, clauses.len());
    let mut found = Vec::with_capacity(window as usize);
    loop {
        if let Some(t) = threshold(&top) {
            while essential < scorers.len() && bound[essential] + SLACK * t <= t {
                essential += 1;
            }
        }
        let start = scorers[essential..]
            .iter()
            .map(|s| s.doc())
            .min()
            .unwrap_or(TERMINATED);
        if start == TERMINATED {
            break;
        }
        let end = start.saturating_add(window).min(TERMINATED);
        for (s, &clause) in scorers[essential..].iter_mut().zip(&order[essential..]) {
            let mut doc = s.doc();
            while doc < end {
                scores.add(doc - start, clause, s.score());
                doc = s.advance();
            }
        }
        scores.take_found(&mut found);
        for &offset in &found {
            let doc = start + offset;
            let (mut partial, parts) = scores.take(offset);
            let threshold = threshold(&top);
            let mut reachable = true;
            for i in (0..essential).rev() {
                if threshold.is_some_and(|t| partial + bound[i] + SLACK * t <= t) {
                    reachable = false;
                    break;
                }
                let s = &mut scorers[i];
                if s.doc() < doc {
                    s.seek(doc);
                }
                if s.doc() == doc {
                    let score = s.score();
                    parts[order[i]] = score;
                    partial += score;
                }
            }
            if reachable && alive.is_none_or(|a| a.is_alive(doc)) {
                // The score in query order, whichever terms proposed the document.
                let score: Score = parts.iter().sum();
                if top.push(score, doc) {
                    if let Some(t) = top.threshold() {
                        floor.raise(t);
                    }
                }
            }
            parts.fill(0.0);
        }
    }
    Ok(top.into_fruit(ordinal))
}

/// The essential terms' scores for one window of a segment's documents, by offset from the
/// window's first document.
struct WindowScores {
    terms: usize,
    /// `parts[offset * terms + clause]`: what term `clause` adds to that document; 0 where
    /// the document does not hold the term.
    parts: Vec<Score>,
    /// A document's parts summed in the order they were added: enough to tell whether it can
    /// still reach the k-th score.
    partial: Vec<Score>,
    /// One bit per offset: the documents some term proposed.
    proposed: Vec<u64>,
}

impl WindowScores {
    fn new(window: u32, terms: usize) -> Self {
        let window = window as usize;
        WindowScores {
            terms,
            parts: vec![0.0; window * terms],
            partial: vec![0.0; window],
            proposed: vec![0; window.div_ceil(64)],
        }
    }

    fn add(&mut self, offset: u32, clause: usize, score: Score) {
        let offset = offset as usize;
        self.parts[offset * self.terms + clause] = score;
        self.partial[offset] += score;
        self.proposed[offset / 64] |= 1 << (offset % 64);
    }

    /// The proposed offsets, ascending, into `found`; none is proposed afterwards.
    fn take_found(&mut self, found: &mut Vec<u32>) {
        found.clear();
        for (word, bits) in self.proposed.iter_mut().enumerate() {
            let mut bits = std::mem::take(bits);
            while bits != 0 {
                found.push(word as u32 * 64 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
    }

    /// The offset's partial sum (reset to 0) and its parts, which the caller completes and
    /// then resets to 0.
    fn take(&mut self, offset: u32) -> (Score, &mut [Score]) {
        let offset = offset as usize;
        let partial = std::mem::take(&mut self.partial[offset]);
        let terms = self.terms;
        (
            partial,
            &mut self.parts[offset * terms..(offset + 1) * terms],
        )
    }
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

    /// Every score is within its term's bound, a chunk that repeats one word included:
    /// tantivy stores its length rounded down, so its frequency can pass its stored length,
    /// and it scored above `Bm25Weight::max_score` (the bound before).
    #[test]
    fn a_term_bound_holds_for_a_chunk_that_repeats_it() {
        use tantivy::doc;
        let (index, body, mut writer) = ram_index();
        for _ in 0..50 {
            writer.add_document(doc!(body => "a b")).unwrap();
        }
        writer
            .add_document(doc!(body => "spam ".repeat(300)))
            .unwrap();
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let term = Term::from_field_text(body, "spam");
        let clauses = clauses(&searcher, &[(term.clone(), 1.0)]).unwrap();
        let reader = &searcher.segment_readers()[0];
        let scorer = TermCursor::open(&clauses[0], reader).unwrap();
        assert_eq!(scorer.doc(), 50);
        let score = scorer.score();
        let before = Bm25Weight::for_terms(&searcher, &[term])
            .unwrap()
            .max_score();
        assert!(score > before, "{score} within the old bound {before}");
        assert!(score <= clauses[0].max, "{score} above {}", clauses[0].max);
    }

    /// The cursor walks and scores a term's postings exactly as tantivy's own term scorer
    /// does, boost included, to the last bit, and an absent term proposes nothing.
    #[test]
    fn a_cursor_scores_each_posting_as_tantivys_term_scorer_does() {
        use tantivy::doc;
        use tantivy::query::{EnableScoring, Query, TermQuery};
        let (index, body, mut writer) = ram_index();
        for i in 0..400 {
            let text = format!("{} {}", "spam ".repeat(i % 7 + 1), "filler ".repeat(i % 13));
            writer.add_document(doc!(body => text)).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let reader = &searcher.segment_readers()[0];
        let term = Term::from_field_text(body, "spam");
        let boost = 2.5;
        let clauses = clauses(&searcher, &[(term.clone(), boost)]).unwrap();
        let mut cursor = TermCursor::open(&clauses[0], reader).unwrap();
        let mut tantivy = TermQuery::new(term, IndexRecordOption::WithFreqs)
            .weight(EnableScoring::enabled_from_searcher(&searcher))
            .unwrap()
            .scorer(reader, boost)
            .unwrap();
        let mut postings = 0;
        while tantivy.doc() != TERMINATED {
            assert_eq!(cursor.doc(), tantivy.doc());
            assert_eq!(cursor.score().to_bits(), tantivy.score().to_bits());
            postings += 1;
            if postings % 3 == 0 {
                let target = tantivy.doc() + 5;
                assert_eq!(cursor.seek(target), tantivy.seek(target));
            } else {
                assert_eq!(cursor.advance(), tantivy.advance());
            }
        }
        assert_eq!(cursor.doc(), TERMINATED);
        assert!(postings > 100);
        let absent =
            super::clauses(&searcher, &[(Term::from_field_text(body, "absent"), 1.0)]).unwrap();
        assert_eq!(
            TermCursor::open(&absent[0], reader).unwrap().doc(),
            TERMINATED
        );
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

    /// A long query reads fewer documents per window, so that its score buffer stays within
    /// its bound; a short one reads the full window.
    #[test]
    fn a_long_query_reads_fewer_documents_per_window() {
        assert_eq!(window_docs(1), WINDOW_DOCS as u32);
        assert_eq!(window_docs(WINDOW_CELLS / WINDOW_DOCS), WINDOW_DOCS as u32);
        for terms in [33, 100, 1000, 5000, WINDOW_CELLS] {
            let docs = window_docs(terms) as usize;
            assert!((1..WINDOW_DOCS).contains(&docs), "{terms} terms: {docs}");
            assert!(docs * terms <= WINDOW_CELLS, "{terms} terms: {docs}");
        }
        assert_eq!(window_docs(10 * WINDOW_CELLS), 1);
    }

    /// The window size changes the work, never the answer: one segment of 3,000 documents
    /// read in windows of 1, 7, 64 and 1,000 documents (most documents in one window, or
    /// none beside them) answers bit for bit what the default window answers.
    #[test]
    fn every_window_size_gives_the_same_answer() {
        use tantivy::doc;
        let (index, body, mut writer) = ram_index();
        let words: Vec<String> = (0..10).map(|i| format!("w{i}")).collect();
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..3000 {
            let mut text: Vec<&str> = Vec::new();
            for (w, word) in words.iter().enumerate() {
                if rng.usize(..w + 2) == 0 {
                    text.extend(std::iter::repeat_n(word.as_str(), rng.usize(1..4)));
                }
            }
            text.extend(std::iter::repeat_n("filler", rng.usize(0..15)));
            writer.add_document(doc!(body => text.join(" "))).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 1);
        let reader = &searcher.segment_readers()[0];
        let term = |w: &str| Term::from_field_text(body, w);
        let queries: Vec<Vec<(Term, Score)>> = vec![
            (0..10).map(|i| (term(&format!("w{i}")), 1.0)).collect(),
            vec![(term("w9"), 2.0), (term("w0"), 1.0), (term("w5"), 1.0)],
            vec![(term("w1"), 1.0)],
        ];
        let sorted = |mut hits: Vec<(Score, DocAddress)>| {
            hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            hits
        };
        for terms in &queries {
            let clauses = clauses(&searcher, terms).unwrap();
            for k in [1, 10, 100] {
                let expected = sorted(
                    search_segment(&clauses, 0, reader, k, &SharedFloor::default()).unwrap(),
                );
                assert_eq!(expected.len(), k);
                for window in [1, 7, 64, 1000] {
                    let found = search_segment_in_windows(
                        &clauses,
                        0,
                        reader,
                        k,
                        &SharedFloor::default(),
                        window,
                    )
                    .unwrap();
                    assert_eq!(sorted(found), expected, "{terms:?}, k {k}, window {window}");
                }
            }
        }
    }

    /// Against tantivy's own `TopDocs` over the same disjunction, on an index of several
    /// segments searched on several threads, with common and rare terms, repeated (boosted)
    /// terms, many equal scores (texts recur in every segment) and deleted documents. Sums of
    /// the same term scores may differ in the last bit with their order, so scores agree to
    /// 1e-5 and the documents above the k-th score exactly; every run answers the same.
    #[test]
    fn answers_what_top_docs_answers_and_the_same_every_time() {
        use tantivy::collector::TopDocs;
        use tantivy::doc;
        use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};

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
            let disjunction = BooleanQuery::new(
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
            );
            for k in [1, 3, 10, 30, 5000] {
                let expected = searcher
                    .search(&disjunction, &TopDocs::with_limit(k).order_by_score())
                    .unwrap();
                let found = top_k(&searcher, terms, k).unwrap();
                for _ in 0..5 {
                    assert_eq!(top_k(&searcher, terms, k).unwrap(), found);
                }
                assert_eq!(found.len(), expected.len(), "{terms:?}, k {k}");
                for (f, e) in found.iter().zip(&expected) {
                    assert!((f.0 - e.0).abs() <= 1e-5 * e.0.abs(), "{terms:?} k {k}");
                }
                let Some(kth) = expected.last().map(|e| e.0) else {
                    continue;
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
        }
    }
}
