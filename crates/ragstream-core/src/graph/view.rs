//! One graph version in memory, built once per version and shared by the queries that read
//! it: the entity vocabulary (names, aliases, a symmetric-deletion index for typos), and the
//! live triples by entity. Queries link their words to entities, walk up to `hops` relations
//! out from them, and score what they reach against the query.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::normalize;
use super::rows::{EntityRow, TripleRow};

/// How a query's words matched an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// The entity's name as written, case and all.
    Exact,
    /// The name after normalisation (case, punctuation, whitespace).
    Normalized,
    /// One of the entity's aliases.
    Alias,
    /// Within one edit of the name or an alias (names of 5 characters or more).
    Fuzzy,
}

/// An entity the query names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinkedEntity {
    /// Normalised name: the entity's identity, and its rewrite term.
    pub key: String,
    pub name: String,
    /// The query words that named it.
    pub matched: String,
    pub how: LinkKind,
    pub aliases: Vec<String>,
}

/// A relation reached from the query's entities, with its score and how it was reached.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RelationHit {
    pub subject: String,
    pub relation: String,
    pub object: String,
    pub triple_id: String,
    pub document_id: String,
    pub chunk_id: Option<String>,
    /// Relations walked from a query entity: 1 touches it.
    pub depth: usize,
    pub score: f64,
    pub semantic_score: f64,
    pub keyword_score: f64,
}

struct Entity {
    name: String,
    aliases: Vec<String>,
}

pub struct GraphView {
    triples: Vec<TripleRow>,
    /// Each triple's normalised words as ids in `vocabulary`, sorted (its keyword score).
    words: Vec<Vec<u32>>,
    vocabulary: HashMap<String, u32>,
    /// Every triple's vector, one after the other (`dimensions` each; zeros when missing).
    vectors: Vec<f32>,
    has_vector: Vec<bool>,
    dimensions: usize,
    entities: HashMap<String, Entity>,
    /// Normalised name or alias → entity key.
    names: HashMap<String, String>,
    /// One-deletion neighbourhood of each name of 5+ characters → the names.
    deletions: HashMap<String, Vec<String>>,
    /// Entity key → its number; by number: the live triples touching it.
    ids: HashMap<String, u32>,
    edges: Vec<Vec<u32>>,
    /// Each triple's subject and object numbers.
    ends: Vec<[u32; 2]>,
    /// Longest name, in words: the longest query n-gram worth looking up.
    longest: usize,
}

impl GraphView {
    /// Builds the view from a version's live rows.
    pub fn new(mut triples: Vec<TripleRow>, entity_rows: Vec<EntityRow>) -> GraphView {
        let mut entities: HashMap<String, Entity> = HashMap::new();
        let mut ordered: Vec<EntityRow> = entity_rows;
        // The same entity in many documents: the spelling of the first document wins.
        ordered
            .sort_by(|a, b| (&a.entity_key, &a.document_id).cmp(&(&b.entity_key, &b.document_id)));
        for row in ordered {
            let e = entities.entry(row.entity_key.clone()).or_insert(Entity {
                name: row.name.clone(),
                aliases: Vec::new(),
            });
            for a in row.aliases {
                if !e.aliases.contains(&a) {
                    e.aliases.push(a);
                }
            }
        }
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut edges: Vec<Vec<u32>> = Vec::new();
        let mut ends: Vec<[u32; 2]> = Vec::with_capacity(triples.len());
        for (i, t) in triples.iter().enumerate() {
            let mut pair = [0u32; 2];
            for (end, key) in [&t.subject_key, &t.object_key].into_iter().enumerate() {
                entities.entry(key.clone()).or_insert_with(|| Entity {
                    name: if end == 0 {
                        t.subject.clone()
                    } else {
                        t.object.clone()
                    },
                    aliases: Vec::new(),
                });
                let next = ids.len() as u32;
                let id = *ids.entry(key.clone()).or_insert(next);
                if id as usize == edges.len() {
                    edges.push(Vec::new());
                }
                let list = &mut edges[id as usize];
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
                pair[end] = id;
            }
            ends.push(pair);
        }
        let mut names: HashMap<String, String> = HashMap::new();
        for (key, e) in &entities {
            names.insert(key.clone(), key.clone());
            for a in &e.aliases {
                names
                    .entry(normalize::key(a))
                    .or_insert_with(|| key.clone());
            }
        }
        names.remove("");
        let mut deletions: HashMap<String, Vec<String>> = HashMap::new();
        for name in names.keys() {
            if normalize::fuzzy_budget(name.chars().count()) == 0 {
                continue;
            }
            for d in std::iter::once(name.clone()).chain(normalize::deletions(name)) {
                deletions.entry(d).or_default().push(name.clone());
            }
        }
        let longest = names
            .keys()
            .map(|n| n.split(' ').count())
            .max()
            .unwrap_or(0);
        let mut vocabulary: HashMap<String, u32> = HashMap::new();
        let words = triples
            .iter()
            .map(|t| {
                let mut w: Vec<u32> = normalize::tokens(&t.text())
                    .into_iter()
                    .map(|word| {
                        let next = vocabulary.len() as u32;
                        *vocabulary.entry(word).or_insert(next)
                    })
                    .collect();
                w.sort_unstable();
                w.dedup();
                w
            })
            .collect();
        let dimensions = triples
            .iter()
            .find_map(|t| t.vector.as_ref().map(Vec::len))
            .unwrap_or(0);
        // The vectors move into one block (read in the scoring loop); the rows keep none.
        let mut vectors = Vec::with_capacity(triples.len() * dimensions);
        let mut has_vector = Vec::with_capacity(triples.len());
        for t in &mut triples {
            match t.vector.take() {
                Some(v) if v.len() == dimensions => {
                    vectors.extend_from_slice(&v);
                    has_vector.push(true);
                }
                _ => {
                    vectors.extend(std::iter::repeat_n(0.0, dimensions));
                    has_vector.push(false);
                }
            }
        }
        GraphView {
            triples,
            words,
            vocabulary,
            vectors,
            has_vector,
            dimensions,
            ids,
            ends,
            entities,
            names,
            deletions,
            edges,
            longest,
        }
    }

    pub fn triples(&self) -> usize {
        self.triples.len()
    }

    pub fn entities(&self) -> usize {
        self.entities.len()
    }

    /// The entities `query` names, longest match first, each once, in query order.
    pub fn link(&self, query: &str) -> Vec<LinkedEntity> {
        let words = normalize::tokens(query);
        let mut found: Vec<(usize, LinkedEntity)> = Vec::new();
        let mut taken = vec![false; words.len()];
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for n in (1..=self.longest.min(words.len())).rev() {
            for start in 0..=(words.len() - n) {
                if taken[start..start + n].iter().any(|t| *t) {
                    continue;
                }
                let gram = words[start..start + n].join(" ");
                let Some((name, fuzzy)) = self.lookup(&gram) else {
                    continue;
                };
                let key = &self.names[&name];
                if !seen.insert(key.clone()) {
                    taken[start..start + n].iter_mut().for_each(|t| *t = true);
                    continue;
                }
                let e = &self.entities[key];
                let how = if fuzzy {
                    LinkKind::Fuzzy
                } else if name != *key {
                    LinkKind::Alias
                } else if query.contains(e.name.as_str()) {
                    LinkKind::Exact
                } else {
                    LinkKind::Normalized
                };
                taken[start..start + n].iter_mut().for_each(|t| *t = true);
                found.push((
                    start,
                    LinkedEntity {
                        key: key.clone(),
                        name: e.name.clone(),
                        matched: gram,
                        how,
                        aliases: e.aliases.clone(),
                    },
                ));
            }
        }
        found.sort_by_key(|(start, _)| *start);
        found.into_iter().map(|(_, e)| e).collect()
    }

    /// The stored name `gram` names: itself, or (for long enough grams) one within an edit.
    fn lookup(&self, gram: &str) -> Option<(String, bool)> {
        if self.names.contains_key(gram) {
            return Some((gram.to_string(), false));
        }
        let budget = normalize::fuzzy_budget(gram.chars().count());
        if budget == 0 {
            return None;
        }
        let mut candidates: BTreeSet<&String> = BTreeSet::new();
        for d in std::iter::once(gram.to_string()).chain(normalize::deletions(gram)) {
            if let Some(names) = self.deletions.get(&d) {
                candidates.extend(names);
            }
        }
        candidates
            .into_iter()
            .filter(|c| strsim::levenshtein(c, gram) <= budget)
            .min_by_key(|c| (strsim::levenshtein(c, gram), c.len()))
            .map(|c| (c.clone(), true))
    }

    /// Relations within `hops` of `entities`, each with the depth it was first reached at;
    /// at most `limit` of them (nearest first), so that a hub cannot make a query slow.
    pub fn expand(&self, entities: &[String], hops: usize, limit: usize) -> Vec<(u32, usize)> {
        let mut reached: Vec<(u32, usize)> = Vec::new();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut frontier: Vec<u32> = entities
            .iter()
            .filter_map(|k| self.ids.get(k))
            .copied()
            .collect();
        let mut visited: HashSet<u32> = frontier.iter().copied().collect();
        'walk: for depth in 1..=hops {
            let mut next: Vec<u32> = Vec::new();
            for entity in &frontier {
                for &t in &self.edges[*entity as usize] {
                    if !seen.insert(t) {
                        continue;
                    }
                    reached.push((t, depth));
                    if reached.len() >= limit {
                        break 'walk;
                    }
                    for other in self.ends[t as usize] {
                        if visited.insert(other) {
                            next.push(other);
                        }
                    }
                }
            }
            frontier = next;
        }
        reached.sort_unstable();
        reached
    }

    /// Scores reached relations against the query: cosine of the relation's text and the
    /// query (`semantic`, mapped to 0..1) and the share of the query's words the relation's
    /// text holds (`keyword`), blended 0.7/0.3, then discounted by 0.8 per hop beyond the
    /// first. The best `limit`, best first; ties by triple id.
    pub fn score(
        &self,
        reached: &[(u32, usize)],
        query: &str,
        query_vector: Option<&[f32]>,
        limit: usize,
    ) -> Vec<RelationHit> {
        let query_words: BTreeSet<String> = normalize::tokens(query).into_iter().collect();
        let mut words: Vec<u32> = query_words
            .iter()
            .filter_map(|w| self.vocabulary.get(w))
            .copied()
            .collect();
        words.sort_unstable();
        // Scores first (cheap), hits only for the best: a hub reaches thousands of relations.
        let mut scored: Vec<(f64, f64, f64, u32, usize)> = reached
            .iter()
            .map(|&(i, depth)| {
                let semantic = match query_vector {
                    Some(q) if q.len() == self.dimensions && self.has_vector[i as usize] => {
                        let at = i as usize * self.dimensions;
                        let v = &self.vectors[at..at + self.dimensions];
                        let cos: f32 = q.iter().zip(v).map(|(a, b)| a * b).sum();
                        crate::store::similarity::semantic_similarity(cos)
                    }
                    _ => 0.0,
                };
                let keyword = if query_words.is_empty() {
                    0.0
                } else {
                    let shared = self.words[i as usize]
                        .iter()
                        .filter(|w| words.binary_search(w).is_ok())
                        .count();
                    shared as f64 / query_words.len() as f64
                };
                let score = (0.7 * semantic + 0.3 * keyword) * 0.8f64.powi(depth as i32 - 1);
                (score, semantic, keyword, i, depth)
            })
            .collect();
        let order = |a: &(f64, f64, f64, u32, usize), b: &(f64, f64, f64, u32, usize)| {
            b.0.total_cmp(&a.0).then_with(|| {
                let (ta, tb) = (&self.triples[a.3 as usize], &self.triples[b.3 as usize]);
                ta.triple_id.cmp(&tb.triple_id)
            })
        };
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        scored
            .into_iter()
            .map(|(score, semantic, keyword, i, depth)| {
                let t = &self.triples[i as usize];
                RelationHit {
                    subject: t.subject.clone(),
                    relation: t.relation.clone(),
                    object: t.object.clone(),
                    triple_id: t.triple_id.clone(),
                    document_id: t.document_id.clone(),
                    chunk_id: t.chunk_id.clone(),
                    depth,
                    score,
                    semantic_score: semantic,
                    keyword_score: keyword,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triple(s: &str, r: &str, o: &str) -> TripleRow {
        TripleRow {
            triple_id: format!("{s}-{r}-{o}"),
            document_id: "d".into(),
            chunk_id: None,
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
            subject_key: normalize::key(s),
            object_key: normalize::key(o),
            deleted_at: None,
            vector: None,
        }
    }

    fn view() -> GraphView {
        GraphView::new(
            vec![
                triple("Insulin", "regulates", "Glucose"),
                triple("Pancreas", "produces", "Insulin"),
                triple("Glucose", "fuels", "Brain"),
                triple("Brain", "part_of", "Nervous System"),
            ],
            vec![EntityRow {
                entity_key: "glucose".into(),
                name: "Glucose".into(),
                document_id: "d".into(),
                chunk_ids: Vec::new(),
                aliases: vec!["blood sugar".into()],
                deleted_at: None,
            }],
        )
    }

    #[test]
    fn query_words_link_exactly_normalised_by_alias_and_fuzzily() {
        let v = view();
        let linked = v.link("Does Insulin lower BLOOD SUGAR in the nervous-system or pancreaz?");
        let got: Vec<(&str, LinkKind)> = linked.iter().map(|e| (e.key.as_str(), e.how)).collect();
        assert_eq!(
            got,
            vec![
                ("insulin", LinkKind::Exact),
                ("glucose", LinkKind::Alias),
                ("nervous system", LinkKind::Normalized),
                ("pancreas", LinkKind::Fuzzy),
            ]
        );
        // Short words are never matched fuzzily ("bran" is one edit from "brain").
        assert!(v.link("the bran").is_empty());
    }

    #[test]
    fn expansion_stops_at_the_hop_limit() {
        let v = view();
        let depth = |hops| -> Vec<(String, usize)> {
            let mut out: Vec<(String, usize)> = v
                .expand(&["insulin".to_string()], hops, 100)
                .into_iter()
                .map(|(i, d)| (v.triples[i as usize].relation.clone(), d))
                .collect();
            out.sort();
            out
        };
        assert!(depth(0).is_empty());
        assert_eq!(
            depth(1),
            vec![("produces".into(), 1), ("regulates".into(), 1)]
        );
        assert_eq!(
            depth(2),
            vec![
                ("fuels".into(), 2),
                ("produces".into(), 1),
                ("regulates".into(), 1)
            ]
        );
        assert_eq!(depth(3).len(), 4);
        // The limit caps the walk.
        assert_eq!(v.expand(&["insulin".to_string()], 3, 2).len(), 2);
    }

    #[test]
    fn nearer_and_more_relevant_relations_score_higher() {
        let v = view();
        let reached = v.expand(&["insulin".to_string()], 2, 100);
        let hits = v.score(&reached, "what does insulin regulate", None, 10);
        assert_eq!(
            v.score(&reached, "what does insulin regulate", None, 1),
            hits[..1]
        );
        assert_eq!(hits[0].relation, "regulates");
        assert_eq!(hits.last().unwrap().depth, 2);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
}
