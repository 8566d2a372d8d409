//! Pages compiled into the binary (`/ui`, `/docs`): each file with its content type, served
//! with a content security policy, so the pages work offline and load nothing from
//! elsewhere.

use actix_web::{web, HttpResponse};

/// A bundled file: its route, its content type and its bytes.
pub struct StaticFile {
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
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
            web::get().to(move || async move {
                HttpResponse::Ok()
                    .content_type(file.content_type)
                    .insert_header(("content-security-policy", policy))
                    .insert_header(("x-content-type-options", "nosniff"))
                    .insert_header(("cache-control", "no-cache"))
                    .body(file.body)
            }),
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every file of `files` is served at its path with its type and `policy`.
    pub(crate) async fn every_file_is_served(
        files: &'static [StaticFile],
        policy: &'static str,
        routes: fn(&mut web::ServiceConfig),
    ) {
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
            let body = actix_web::test::read_body(res).await;
            assert_eq!(&body[..], file.body, "{}", file.path);
        }
    }
}
