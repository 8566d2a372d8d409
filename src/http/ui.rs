//! The inspector page at `/ui`: plain HTML, CSS and JavaScript compiled into the binary, so it
//! works offline and always matches the routes it calls. The files hold no data; the page
//! calls the `/v1` routes with the bearer token the user types, so tokens and scopes apply
//! exactly as for any other client.

use actix_web::web;

use super::static_files::{serve, StaticFile, CSS, HTML, JAVASCRIPT};

static FILES: [StaticFile; 4] = [
    StaticFile::new("/ui", HTML, include_bytes!("ui/index.html")),
    StaticFile::new("/ui/", HTML, include_bytes!("ui/index.html")),
    StaticFile::new("/ui/app.js", JAVASCRIPT, include_bytes!("ui/app.js")),
    StaticFile::new("/ui/style.css", CSS, include_bytes!("ui/style.css")),
];

/// Only the page's own files and routes: no external asset can load, and no injected
/// markup could run a script.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the inspector's routes to an app.
pub fn routes(config: &mut web::ServiceConfig) {
    serve(config, &FILES, CONTENT_SECURITY_POLICY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn every_file_is_served_with_its_type_and_a_policy_of_its_own_files() {
        crate::http::static_files::tests::every_file_is_served(
            &FILES,
            CONTENT_SECURITY_POLICY,
            routes,
        )
        .await;
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for file in &FILES {
            let body = std::str::from_utf8(file.body).unwrap();
            for outside in ["http://", "https://", "//cdn", "@import"] {
                assert!(!body.contains(outside), "{} refers to {outside}", file.path);
            }
        }
    }
}
