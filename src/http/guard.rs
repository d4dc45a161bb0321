//! The loopback guard: every route answers only callers on this machine. `Host` must be
//! loopback; `Origin`, when a browser sends one, must be a loopback origin (DNS
//! rebinding and cross-site requests are refused).

use http::Request;

/// True for `localhost`, `127.x.x.x` and `[::1]`, with or without a port.
fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority
            .rsplit_once(':')
            .map(|(h, p)| {
                if p.chars().all(|c| c.is_ascii_digit()) {
                    h
                } else {
                    authority
                }
            })
            .unwrap_or(authority)
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}
/// Host must be loopback; Origin, when sent, must be a loopback origin.
pub fn check_origin<B>(req: &Request<B>) -> Result<(), String> {
    let host = req
        .headers()
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !host.is_empty() && !is_loopback_authority(host) {
        return Err(format!(
            "host {host:?} is not this machine's loopback: medulla only answers local callers"
        ));
    }
    if let Some(origin) = req.headers().get(http::header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        let authority = o
            .strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"));
        match authority {
            Some(a) if is_loopback_authority(a.trim_end_matches('/')) => {}
            _ => return Err(format!("origin {o:?} is not a loopback origin: browsers on other sites may not call medulla")),
        }
    }
    Ok(())
}
