//! Serving the Hall: `GET /` is the page, `GET /hall/<file>` its script modules, style
//! and icon, all compiled into the binary (`crate::hall`). The loopback guard has already
//! run.
//!
//! Headers: a strict Content-Security-Policy (only this origin's files; no inline script
//! or style; no framing; no forms posted anywhere), `nosniff`, no referrer. The page is
//! revalidated on every load (its entity tag answers 304); an asset asked for with its
//! current version (`?v=`, as the page and the modules' imports link it) is cached for
//! good, since a new binary links new versions.

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};

use super::status::HttpError;
use super::{http_error, Body};
use crate::hall;

/// Only this origin's files; the page talks to this origin only (fetch and the event
/// stream); SVG drawn by the script needs no inline style.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Is this a request for the Hall (the page or one of its files)?
pub fn is_hall_path(path: &str) -> bool {
    path == "/" || path == "/index.html" || path.starts_with("/hall/")
}

/// Answer `GET` (or `HEAD`) for the page or one of its files.
pub fn serve<B>(req: &Request<B>) -> Response<Body> {
    let path = req.uri().path();
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return http_error(&HttpError::NotFound(format!(
            "nothing at {} {path}: the Hall is read with GET",
            req.method()
        )));
    }
    let wanted = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("v=")));
    let (bytes, media_type, etag, immutable) = if path == "/" || path == "/index.html" {
        let page = hall::index();
        let etag = hall::version_of(page.as_bytes());
        (page.as_bytes(), "text/html; charset=utf-8", etag, false)
    } else {
        let name = path.trim_start_matches("/hall/");
        match hall::asset(name) {
            Some(a) => (
                a.bytes.as_slice(),
                a.media_type,
                a.version.clone(),
                wanted == Some(a.version.as_str()),
            ),
            None => {
                return http_error(&HttpError::NotFound(format!(
                    "nothing at {path}: the Hall is at /"
                )))
            }
        }
    };
    let etag = format!("\"{etag}\"");
    let fresh = req
        .headers()
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let builder = Response::builder()
        .header(http::header::CONTENT_TYPE, media_type)
        .header(http::header::CACHE_CONTROL, cache)
        .header(http::header::ETAG, &etag)
        .header(http::header::CONTENT_SECURITY_POLICY, CSP)
        .header(http::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(http::header::REFERRER_POLICY, "no-referrer")
        .header(http::header::X_FRAME_OPTIONS, "DENY")
        .header("cross-origin-opener-policy", "same-origin")
        .header("cross-origin-resource-policy", "same-origin");
    // hyper sends no body for HEAD, keeping the length.
    let (status, body) = if fresh {
        (304, Bytes::new())
    } else {
        (200, Bytes::from_static(bytes))
    };
    builder
        .status(status)
        .body(Full::new(body).boxed())
        .expect("static response parts are valid")
}
