//! One graph version in memory, built once per version and shared by the queries that read
//! it: the entity vocabulary (names, aliases, a symmetric-deletion index for typos), and the
//! live triples by entity. Queries link their words to entities, walk up to `hops` relations
//! out from them, and score what they reach against the query.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    entities: HashMap<String, Entity>,
    /// Normalised name or alias → entity key.
    names: HashMap<String, String>,
    /// One-deletion neighbourhood of each name of 5+ characters → the names.
    deletions: HashMap<String, Vec<String>>,
    /// Entity key → indices of the live triples touching it.
    edges: HashMap<String, Vec<u32>>,
    /// Longest name, in words: the longest query n-gram worth looking up.
    longest: usize,
}

impl GraphView {
    /// Builds the view from a version's live rows.
    pub fn new(triples: Vec<TripleRow>, entity_rows: Vec<EntityRow>) -> GraphView {
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
        let mut edges: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, t) in triples.iter().enumerate() {
            for key in [&t.subject_key, &t.object_key] {
                entities.entry(key.clone()).or_insert_with(|| Entity {
                    name: if *key == t.subject_key {
                        t.subject.clone()
                    } else {
                        t.object.clone()
                    },
                    aliases: Vec::new(),
                });
                let list = edges.entry(key.clone()).or_default();
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
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
        GraphView {
            triples,
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
        let mut reached: BTreeMap<u32, usize> = BTreeMap::new();
        let mut visited: BTreeSet<&str> = entities.iter().map(String::as_str).collect();
        let mut frontier: Vec<&str> = entities.iter().map(String::as_str).collect();
        'walk: for depth in 1..=hops {
            let mut next: Vec<&str> = Vec::new();
            for entity in &frontier {
                for &t in self
                    .edges
                    .get(*entity)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    if reached.contains_key(&t) {
                        continue;
                    }
                    reached.insert(t, depth);
                    if reached.len() >= limit {
                        break 'walk;
                    }
                    let triple = &self.triples[t as usize];
                    for other in [triple.subject_key.as_str(), triple.object_key.as_str()] {
                        if visited.insert(other) {
                            next.push(other);
                        }
                    }
                }
            }
            frontier = next;
        }
        reached.into_iter().collect()
    }

    /// Scores reached relations against the query: cosine of the relation's text and the
    /// query (`semantic`, mapped to 0..1) and the share of the query's words the relation's
    /// text holds (`keyword`), blended 0.7/0.3, then discounted by 0.8 per hop beyond the
    /// first. Best first; ties by triple id.
    pub fn score(
        &self,
        reached: &[(u32, usize)],
        query: &str,
        query_vector: Option<&[f32]>,
    ) -> Vec<RelationHit> {
        let words: BTreeSet<String> = normalize::tokens(query).into_iter().collect();
        let mut hits: Vec<RelationHit> = reached
            .iter()
            .map(|&(i, depth)| {
                let t = &self.triples[i as usize];
                let semantic = match (query_vector, t.vector.as_deref()) {
                    (Some(q), Some(v)) if q.len() == v.len() => {
                        let cos: f64 = q
                            .iter()
                            .zip(v)
                            .map(|(a, b)| f64::from(*a) * f64::from(*b))
                            .sum();
                        crate::retrieval::fusion::semantic_similarity(cos as f32)
                    }
                    _ => 0.0,
                };
                let text: BTreeSet<String> = normalize::tokens(&t.text()).into_iter().collect();
                let keyword = if words.is_empty() {
                    0.0
                } else {
                    words.intersection(&text).count() as f64 / words.len() as f64
                };
                let score = (0.7 * semantic + 0.3 * keyword) * 0.8f64.powi(depth as i32 - 1);
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
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.triple_id.cmp(&b.triple_id))
        });
        hits
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
        let hits = v.score(&reached, "what does insulin regulate", None);
        assert_eq!(hits[0].relation, "regulates");
        assert_eq!(hits.last().unwrap().depth, 2);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
}
