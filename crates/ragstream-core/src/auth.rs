//! Bearer tokens and tenancy. Each token configured under `[[auth.tokens]]` is bound to one
//! tenant, the indexes it may touch (exact names, or prefixes ending in `*`) and its scopes.
//! Tenants own disjoint sets of indexes (checked when the configuration loads), so no token of
//! one tenant can read, filter into, count or time-travel into another tenant's index.
//!
//! With no tokens configured authentication is off and every caller may do everything, as
//! before; contract 003's visibility override then follows
//! `contracts.visibility_override_allowed`.
//!
//! Refusals never say whether an index exists: a token outside its indexes gets the same 403
//! for an index that exists and one that does not. Tokens are compared by SHA-256 digest, so
//! the lookup time does not depend on how much of a guessed token is right.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::IndexName;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Query, hydrate, stats and status.
    Read,
    /// Ingest and delete documents.
    Write,
    /// Index settings and rebuilds.
    Admin,
    /// Contract 003's `visibility` `all`/`deleted` (`ToolContext.visibility_override_allowed`).
    VisibilityOverride,
    /// Scrape `/metrics`, whose figures name every tenant's indexes.
    Metrics,
}

impl Scope {
    pub fn verb(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write to",
            Scope::Admin => "administer",
            Scope::VisibilityOverride => "see deleted documents of",
            Scope::Metrics => "read the metrics of",
        }
    }
}

/// `[auth]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// No tokens: authentication is off.
    pub tokens: Vec<TokenConfig>,
}

/// One `[[auth.tokens]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Names the token in logs (never the secret).
    pub name: String,
    /// The secret itself...
    #[serde(default)]
    pub token: Option<String>,
    /// ...or the environment variable holding it, which keeps secrets out of files.
    #[serde(default)]
    pub token_env: Option<String>,
    pub tenant: String,
    /// Index names, or prefixes ending in `*` (`acme_*`; `*` alone is every index).
    pub indexes: Vec<String>,
    pub scopes: Vec<Scope>,
}

impl TokenConfig {
    fn secret(&self) -> Result<String, String> {
        match (&self.token, &self.token_env) {
            (Some(t), None) if !t.is_empty() => Ok(t.clone()),
            (None, Some(var)) => match std::env::var(var) {
                Ok(t) if !t.is_empty() => Ok(t),
                _ => Err(format!("environment variable {var} is not set")),
            },
            _ => Err("set exactly one of token and token_env, non-empty".into()),
        }
    }
}

/// Whether some index name matches both patterns.
fn overlap(a: &str, b: &str) -> bool {
    match (a.strip_suffix('*'), b.strip_suffix('*')) {
        (Some(p), Some(q)) => p.starts_with(q) || q.starts_with(p),
        (Some(p), None) => b.starts_with(p),
        (None, Some(q)) => a.starts_with(q),
        (None, None) => a == b,
    }
}

fn matches(pattern: &str, index: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => index.starts_with(prefix),
        None => pattern == index,
    }
}

impl AuthConfig {
    /// Every token resolvable and well-formed; tenants' index sets disjoint. Errors are
    /// `(key, reason)`.
    pub fn check(&self) -> Result<(), (String, String)> {
        let mut digests = HashMap::new();
        for (i, t) in self.tokens.iter().enumerate() {
            let key = |k: &str| format!("auth.tokens[{i}].{k}");
            let secret = t.secret().map_err(|r| (key("token"), r))?;
            if digests.insert(digest(&secret), i).is_some() {
                return Err((key("token"), "the same secret is configured twice".into()));
            }
            if t.name.trim().is_empty() {
                return Err((key("name"), "must not be empty".into()));
            }
            if t.tenant.trim().is_empty() {
                return Err((key("tenant"), "must not be empty".into()));
            }
            if t.scopes.is_empty() {
                return Err((key("scopes"), "must list at least one scope".into()));
            }
            for p in &t.indexes {
                let name = p.strip_suffix('*').unwrap_or(p);
                if p != "*" && IndexName::parse(name).is_err() {
                    return Err((
                        key("indexes"),
                        format!("{p:?} is neither an index name nor a prefix ending in *"),
                    ));
                }
            }
        }
        for (i, a) in self.tokens.iter().enumerate() {
            for b in &self.tokens[i + 1..] {
                if a.tenant == b.tenant {
                    continue;
                }
                for p in &a.indexes {
                    if let Some(q) = b.indexes.iter().find(|q| overlap(p, q)) {
                        return Err((
                            format!("auth.tokens[{i}].indexes"),
                            format!(
                                "{p:?} of tenant {} overlaps {q:?} of tenant {}: tenants must own disjoint indexes",
                                a.tenant, b.tenant
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// 401: no `Authorization: Bearer` header, or a token nobody configured.
    #[error("a valid bearer token is required (Authorization: Bearer <token>)")]
    Unauthenticated,
    /// 403: the token may not do this to this index (whether or not it exists).
    #[error("this token may not {verb} index {index}")]
    Forbidden { verb: &'static str, index: String },
}

impl AuthError {
    pub fn status(&self) -> u16 {
        match self {
            AuthError::Unauthenticated => 401,
            AuthError::Forbidden { .. } => 403,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            AuthError::Unauthenticated => "unauthenticated",
            AuthError::Forbidden { .. } => "forbidden",
        }
    }
}

/// Who is asking, once authenticated.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub name: String,
    pub tenant: Option<String>,
    indexes: Vec<String>,
    scopes: Vec<Scope>,
    /// Authentication is off: everything is allowed.
    unrestricted: bool,
}

impl Caller {
    /// The caller when authentication is off (and for the command line).
    pub fn unrestricted() -> Caller {
        Caller {
            name: "anonymous".into(),
            tenant: None,
            indexes: Vec::new(),
            scopes: Vec::new(),
            unrestricted: true,
        }
    }

    pub fn is_unrestricted(&self) -> bool {
        self.unrestricted
    }

    pub fn has_scope(&self, scope: Scope) -> bool {
        self.unrestricted || self.scopes.contains(&scope)
    }

    /// May this caller do `scope` on `index`?
    pub fn authorize(&self, index: &IndexName, scope: Scope) -> Result<(), AuthError> {
        if self.unrestricted
            || self.has_scope(scope) && self.indexes.iter().any(|p| matches(p, index.as_str()))
        {
            return Ok(());
        }
        Err(AuthError::Forbidden {
            verb: scope.verb(),
            index: index.to_string(),
        })
    }
}

/// Turns `Authorization` header values into callers.
#[derive(Debug, Default)]
pub struct Authenticator {
    by_digest: HashMap<[u8; 32], Caller>,
}

impl Authenticator {
    /// From a checked configuration (tokens whose secret cannot be read are skipped, logged).
    pub fn new(config: &AuthConfig) -> Authenticator {
        let mut by_digest = HashMap::new();
        for t in &config.tokens {
            match t.secret() {
                Ok(secret) => {
                    by_digest.insert(
                        digest(&secret),
                        Caller {
                            name: t.name.clone(),
                            tenant: Some(t.tenant.clone()),
                            indexes: t.indexes.clone(),
                            scopes: t.scopes.clone(),
                            unrestricted: false,
                        },
                    );
                }
                Err(reason) => tracing::error!(token = %t.name, %reason, "token skipped"),
            }
        }
        Authenticator { by_digest }
    }

    /// Authentication is on when any token is configured.
    pub fn enabled(&self) -> bool {
        !self.by_digest.is_empty()
    }

    /// The caller an `Authorization` header value (`Bearer <token>`) stands for.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, AuthError> {
        if !self.enabled() {
            return Ok(Caller::unrestricted());
        }
        let token = authorization
            .and_then(|h| {
                let (scheme, token) = h.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty())
            .ok_or(AuthError::Unauthenticated)?;
        self.by_digest
            .get(&digest(token))
            .cloned()
            .ok_or(AuthError::Unauthenticated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str, tenant: &str, indexes: &[&str], scopes: &[Scope]) -> TokenConfig {
        TokenConfig {
            name: name.into(),
            token: Some(format!("secret-{name}")),
            token_env: None,
            tenant: tenant.into(),
            indexes: indexes.iter().map(|s| s.to_string()).collect(),
            scopes: scopes.to_vec(),
        }
    }

    fn idx(s: &str) -> IndexName {
        IndexName::parse(s).unwrap()
    }

    #[test]
    fn tokens_resolve_to_callers_limited_to_their_indexes_and_scopes() {
        let config = AuthConfig {
            tokens: vec![
                token("acme-r", "acme", &["acme_*"], &[Scope::Read]),
                token("beta-rw", "beta", &["beta"], &[Scope::Read, Scope::Write]),
            ],
        };
        config.check().unwrap();
        let auth = Authenticator::new(&config);
        assert!(auth.enabled());
        assert_eq!(auth.authenticate(None), Err(AuthError::Unauthenticated));
        assert_eq!(
            auth.authenticate(Some("Bearer nope")),
            Err(AuthError::Unauthenticated)
        );
        assert_eq!(
            auth.authenticate(Some("Basic secret-acme-r")),
            Err(AuthError::Unauthenticated)
        );
        let acme = auth.authenticate(Some("bearer  secret-acme-r ")).unwrap();
        assert_eq!(acme.tenant.as_deref(), Some("acme"));
        assert!(acme.authorize(&idx("acme_docs"), Scope::Read).is_ok());
        assert!(acme.authorize(&idx("acme_docs"), Scope::Write).is_err());
        let refused = acme.authorize(&idx("beta"), Scope::Read).unwrap_err();
        assert_eq!(
            (refused.status(), refused.code()),
            (403, "forbidden"),
            "another tenant's index"
        );
        assert_eq!(
            acme.authorize(&idx("acme"), Scope::Read).unwrap_err(),
            AuthError::Forbidden {
                verb: "read",
                index: "acme".into()
            },
            "the prefix is acme_, not acme"
        );
        assert!(!acme.has_scope(Scope::VisibilityOverride));
        let beta = auth.authenticate(Some("Bearer secret-beta-rw")).unwrap();
        assert!(beta.authorize(&idx("beta"), Scope::Write).is_ok());
        assert!(beta.authorize(&idx("beta2"), Scope::Read).is_err());
    }

    #[test]
    fn without_tokens_everyone_may_do_everything() {
        let auth = Authenticator::new(&AuthConfig::default());
        assert!(!auth.enabled());
        let c = auth.authenticate(None).unwrap();
        assert!(c.is_unrestricted());
        assert!(c.authorize(&idx("any"), Scope::Admin).is_ok());
    }

    #[test]
    fn tenants_must_own_disjoint_indexes_and_tokens_must_be_well_formed() {
        let overlapping = AuthConfig {
            tokens: vec![
                token("a", "acme", &["shared_*"], &[Scope::Read]),
                token("b", "beta", &["shared_docs"], &[Scope::Read]),
            ],
        };
        let (key, reason) = overlapping.check().unwrap_err();
        assert_eq!(key, "auth.tokens[0].indexes");
        assert!(reason.contains("disjoint"), "{reason}");
        // One tenant may have several tokens over the same indexes.
        let same_tenant = AuthConfig {
            tokens: vec![
                token("a", "acme", &["*"], &[Scope::Read]),
                token("b", "acme", &["acme"], &[Scope::Admin]),
            ],
        };
        same_tenant.check().unwrap();
        let mut bad = token("a", "acme", &["Bad Name"], &[Scope::Read]);
        assert_eq!(
            AuthConfig {
                tokens: vec![bad.clone()]
            }
            .check()
            .unwrap_err()
            .0,
            "auth.tokens[0].indexes"
        );
        bad.indexes = vec!["acme".into()];
        bad.token = None;
        bad.token_env = Some("AUTH_TEST_UNSET_VARIABLE_7F3A".into());
        let (key, reason) = AuthConfig { tokens: vec![bad] }.check().unwrap_err();
        assert_eq!(key, "auth.tokens[0].token");
        assert!(reason.contains("AUTH_TEST_UNSET_VARIABLE_7F3A"));
        let twice = AuthConfig {
            tokens: vec![
                token("a", "acme", &["acme"], &[Scope::Read]),
                TokenConfig {
                    name: "b".into(),
                    ..token("a", "acme", &["acme"], &[Scope::Read])
                },
            ],
        };
        assert!(twice.check().unwrap_err().1.contains("twice"));
    }

    #[test]
    fn pattern_overlap() {
        assert!(overlap("a_*", "a_b"));
        assert!(overlap("a_*", "a_b*"));
        assert!(overlap("*", "x"));
        assert!(!overlap("a_*", "b_*"));
        assert!(!overlap("a", "ab"));
        assert!(overlap("a", "a"));
    }
}
