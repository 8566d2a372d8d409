//! Pages compiled into the binary (`/ui`, `/docs`): each file with its content type, served
//! with a content security policy, so the pages work offline and load nothing from
//! elsewhere. Each answer carries an ETag (a digest of the file), so a browser that has a
//! file revalidates it (`no-cache`) and gets a 304 instead of the bytes again.

use std::sync::OnceLock;

use actix_web::http::header::{ETAG, IF_NONE_MATCH};
use actix_web::{web, HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

/// A bundled file: its route, its content type and its bytes.
pub struct StaticFile {
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
    /// Its ETag, computed on first use: [`StaticFile::new`] leaves it empty.
    etag: OnceLock<String>,
}

impl StaticFile {
    pub const fn new(path: &'static str, content_type: &'static str, body: &'static [u8]) -> Self {
        StaticFile {
            path,
            content_type,
            body,
            etag: OnceLock::new(),
        }
    }

    /// A strong ETag: the first 16 bytes of the body's SHA-256, quoted.
    pub fn etag(&self) -> &str {
        self.etag
            .get_or_init(|| format!("\"{}\"", hex::encode(&Sha256::digest(self.body)[..16])))
    }
}

/// The content type of an HTML page, a script and a style sheet.
pub const HTML: &str = "text/html; charset=utf-8";
pub const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
pub const CSS: &str = "text/css; charset=utf-8";

/// Adds a route for each of `files`, answered with `policy` as the content security policy.
pub fn serve(config: &mut web::ServiceConfig, files: &'static [StaticFile], policy: &'static str) {
    for file in files {
        config.route(
            file.path,
            web::get().to(move |request: HttpRequest| async move {
                let etag = file.etag();
                let unchanged = request
                    .headers()
                    .get(IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag));
                let mut response = if unchanged {
                    HttpResponse::NotModified()
                } else {
                    HttpResponse::Ok()
                };
                response
                    .insert_header(("content-security-policy", policy))
                    .insert_header(("x-content-type-options", "nosniff"))
                    .insert_header(("cache-control", "no-cache"))
                    .insert_header((ETAG, etag));
                if unchanged {
                    response.finish()
                } else {
                    response.content_type(file.content_type).body(file.body)
                }
            }),
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `policy` lets the page run only its own scripts and styles, and talk only to this
    /// daemon; and every file of `files` is served at its path with its type, `policy` and
    /// ETag.
    pub(crate) async fn every_file_is_served(
        files: &'static [StaticFile],
        policy: &'static str,
        routes: fn(&mut web::ServiceConfig),
    ) {
        for directive in [
            "default-src 'none'",
            "script-src 'self';",
            "style-src 'self';",
            "connect-src 'self'",
        ] {
            assert!(policy.contains(directive), "{directive}");
        }
        assert!(!policy.contains("unsafe"), "{policy}");
        let app = actix_web::test::init_service(actix_web::App::new().configure(routes)).await;
        for file in files {
            let req = actix_web::test::TestRequest::get()
                .uri(file.path)
                .to_request();
            let res = actix_web::test::call_service(&app, req).await;
            assert_eq!(res.status(), 200, "{}", file.path);
            let header = |name: &str| {
                res.headers()
                    .get(name)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string()
            };
            assert_eq!(header("content-type"), file.content_type);
            assert_eq!(header("content-security-policy"), policy);
            assert_eq!(header("etag"), file.etag());
            let body = actix_web::test::read_body(res).await;
            assert_eq!(&body[..], file.body, "{}", file.path);

            // A browser that holds the file gets a 304 without the bytes; one that holds
            // another version gets the file.
            for (sent, status) in [
                (file.etag().to_string(), 304),
                (format!("\"other\", {}", file.etag()), 304),
                ("\"other\"".to_string(), 200),
            ] {
                let req = actix_web::test::TestRequest::get()
                    .uri(file.path)
                    .insert_header(("if-none-match", sent.as_str()))
                    .to_request();
                let res = actix_web::test::call_service(&app, req).await;
                assert_eq!(res.status(), status, "{} with {sent}", file.path);
                let body = actix_web::test::read_body(res).await;
                assert_eq!(body.is_empty(), status == 304, "{} with {sent}", file.path);
            }
        }
    }
}
