//! The API reference at `/docs`: Swagger UI (`vendor/swagger-ui`, compiled into the binary)
//! rendering the daemon's own `/openapi.json`. It works offline: the page loads only its
//! own files, and it sends requests only to this daemon ("Try it out", with the bearer
//! token typed into "Authorize").

use actix_web::web;

use super::static_files::{serve, StaticFile, CSS, HTML, JAVASCRIPT};

static FILES: [StaticFile; 5] = [
    StaticFile::new("/docs", HTML, include_bytes!("api_docs/index.html")),
    StaticFile::new("/docs/", HTML, include_bytes!("api_docs/index.html")),
    StaticFile::new(
        "/docs/init.js",
        JAVASCRIPT,
        include_bytes!("api_docs/init.js"),
    ),
    StaticFile::new(
        "/docs/swagger-ui-bundle.js",
        JAVASCRIPT,
        include_bytes!("../../vendor/swagger-ui/swagger-ui-bundle.js"),
    ),
    StaticFile::new(
        "/docs/swagger-ui.css",
        CSS,
        include_bytes!("../../vendor/swagger-ui/swagger-ui.css"),
    ),
];

/// Scripts, styles and requests from this daemon only. Swagger UI draws some icons as
/// `data:` images, so those are allowed; inline scripts are not.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the API reference's routes to an app.
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
    fn the_page_renders_this_daemons_document_without_the_outside_validator() {
        let init = FILES.iter().find(|f| f.path == "/docs/init.js").unwrap();
        let init = std::str::from_utf8(init.body).unwrap();
        assert!(init.contains(r#"url: "/openapi.json""#));
        assert!(init.contains("validatorUrl: null"));
    }
}
