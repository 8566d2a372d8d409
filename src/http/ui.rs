//! The inspector page at `/ui`: plain HTML, CSS and JavaScript compiled into the binary, so it
//! works offline and always matches the routes it calls. The files hold no data; the page
//! calls the `/v1` routes with the bearer token the user types, so tokens and scopes apply
//! exactly as for any other client.

use actix_web::{web, HttpResponse};

/// A bundled file: its route, its content type and its bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "/ui",
        content_type: "text/html; charset=utf-8",
        body: include_str!("ui/index.html"),
    },
    Asset {
        path: "/ui/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("ui/index.html"),
    },
    Asset {
        path: "/ui/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("ui/app.js"),
    },
    Asset {
        path: "/ui/style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("ui/style.css"),
    },
];

/// Only the page's own files and routes: no external asset can load, and no injected
/// markup could run a script.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the inspector's routes to an app.
pub fn routes(config: &mut web::ServiceConfig) {
    for asset in ASSETS {
        config.route(
            asset.path,
            web::get().to(move || async move {
                HttpResponse::Ok()
                    .content_type(asset.content_type)
                    .insert_header(("content-security-policy", CONTENT_SECURITY_POLICY))
                    .insert_header(("x-content-type-options", "nosniff"))
                    .insert_header(("cache-control", "no-cache"))
                    .body(asset.body)
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn every_file_is_served_with_its_type_and_policy() {
        let app = actix_web::test::init_service(actix_web::App::new().configure(routes)).await;
        for asset in ASSETS {
            let req = actix_web::test::TestRequest::get()
                .uri(asset.path)
                .to_request();
            let res = actix_web::test::call_service(&app, req).await;
            assert_eq!(res.status(), 200, "{}", asset.path);
            let header = |name: &str| {
                res.headers()
                    .get(name)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string()
            };
            assert_eq!(header("content-type"), asset.content_type);
            assert!(header("content-security-policy").contains("script-src 'self'"));
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for asset in ASSETS {
            for outside in ["http://", "https://", "//cdn", "@import"] {
                assert!(
                    !asset.body.contains(outside),
                    "{} refers to {outside}",
                    asset.path
                );
            }
        }
    }
}
