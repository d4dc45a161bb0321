//! Who may call (SPEC §15): the owner serves only the OS user it runs as. Routing by
//! caller root is not authentication: any account on the machine reaches the port.
//!
//! - On Linux, with `peer_check` on (the default) and the port on loopback: each accepted
//!   connection, before any byte of it is read, is checked against the kernel's answer to
//!   "which uid owns the other end" ([`super::peer`]); another uid, root included (unless
//!   the owner runs as root), gets `403 foreign_user` and the connection is closed. A
//!   connection whose owner the kernel did not name is refused too (`403 peer_unknown`):
//!   fail closed. Nothing is asked per request, so a kept-alive connection pays nothing.
//!   The client token is accepted but neither needed nor enough: a foreign uid holding a
//!   copied token is still refused.
//! - Elsewhere (other systems, `--allow-remote`, `peer_check = false`): every request
//!   presents the client token ([`crate::client_token`]) as `Authorization: Bearer`, or
//!   gets `401 token_required`. The Hall counts as authenticated with a valid Hall session
//!   (its ticket came from a command line that holds the tokens); its page and files, and
//!   the trade of a one-time ticket for a session, need none.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::hall_auth::HallAuth;
use super::peer;
use super::status::HttpError;
use crate::config::Config;
use crate::service::callers::{Refusals, Refused};

/// How a caller proves it is the owner's user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The kernel names the uid of each connection's other end; it must be this one.
    Peer { uid: u32 },
    /// Every request carries the client token.
    Token,
}

pub struct Gate {
    mode: Mode,
    /// The owner's OS user, named in refusals.
    user: String,
    token: String,
    token_file: String,
    refusals: Arc<Refusals>,
}

impl Gate {
    pub fn new(cfg: &Config, token: String, refusals: Arc<Refusals>) -> Gate {
        let mode = if cfg.peer_check && !cfg.allow_remote && peer::supported() {
            own_uid().map_or(Mode::Token, |uid| Mode::Peer { uid })
        } else {
            Mode::Token
        };
        Gate {
            mode,
            user: owner_user(),
            token,
            token_file: crate::client_token::path(&cfg.home)
                .to_string_lossy()
                .into_owned(),
            refusals,
        }
    }

    /// Whether requests must carry the client token.
    pub fn asks_token(&self) -> bool {
        self.mode == Mode::Token
    }

    /// A new connection, before any of its bytes is read: `Err` is the refusal to send.
    pub fn admit(&self, peer: SocketAddr, local: SocketAddr) -> Result<(), HttpError> {
        let Mode::Peer { uid } = self.mode else {
            return Ok(());
        };
        match peer::uid_of(peer, local) {
            Ok(u) if u == uid => Ok(()),
            Ok(u) => {
                tracing::warn!(uid = u, %peer, "refused a connection from another OS user");
                self.refusals.count(Refused::ForeignUser);
                Err(HttpError::ForeignUser {
                    user: self.user.clone(),
                    uid: u,
                })
            }
            Err(e) => {
                tracing::warn!(%peer, code = e.code(), error = %e, "refused a connection: the kernel did not say which user owns it");
                self.refusals.count(Refused::PeerUnknown);
                Err(HttpError::PeerUnknown {
                    user: self.user.clone(),
                    why: e.code().to_string(),
                })
            }
        }
    }

    /// A request, when the token is asked for: `Err` is the 401 to answer.
    pub fn check<B>(&self, req: &Request<B>, hall: &HallAuth) -> Result<(), HttpError> {
        if !self.asks_token() || self.exempt(req, hall) {
            return Ok(());
        }
        let presented = super::headers::get(req.headers(), http::header::AUTHORIZATION.as_str());
        let ok = presented
            .as_deref()
            .and_then(crate::client_token::presented)
            .is_some_and(|t| crate::founder::matches(&self.token, t));
        if ok {
            return Ok(());
        }
        tracing::info!(
            path = req.uri().path(),
            "refused a request without the client token"
        );
        self.refusals.count(Refused::TokenRequired);
        Err(HttpError::TokenRequired {
            user: self.user.clone(),
            file: self.token_file.clone(),
        })
    }

    /// The Hall's own ways in: its page and files (a browser cannot attach a header to
    /// a page load), the trade of a one-time ticket (itself the proof), and a valid Hall
    /// session (in its header, or `?session=` for the event stream).
    fn exempt<B>(&self, req: &Request<B>, hall: &HallAuth) -> bool {
        let path = req.uri().path();
        if req.method() == http::Method::GET && super::hall::is_hall_path(path) {
            return true;
        }
        if req.method() == http::Method::POST && path == "/api/hall/session" {
            return true;
        }
        if super::headers::get(req.headers(), super::headers::HALL_SESSION)
            .is_some_and(|s| hall.valid(&s))
        {
            return true;
        }
        req.uri()
            .query()
            .and_then(|q| {
                serde_urlencoded::from_str::<Vec<(String, String)>>(q)
                    .ok()?
                    .into_iter()
                    .find(|(k, _)| k == "session")
            })
            .is_some_and(|(_, s)| hall.valid(&s))
    }
}

/// A refused connection's one answer, then the close. Written on the raw stream rather
/// than through hyper: not one byte the other user sent is parsed, and the answer is the
/// same whatever they asked. Their request is read and thrown away after the answer (a
/// close with unread bytes would reset the connection, and the client could lose the
/// answer before reading it).
pub async fn refuse(mut stream: TcpStream, e: HttpError) {
    let body =
        serde_json::json!({ "error": { "code": e.code(), "message": e.to_string() } }).to_string();
    let reason = if e.status() == 401 {
        "Unauthorized"
    } else {
        "Forbidden"
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        e.status(),
        body.len()
    );
    let answer = [head.as_bytes(), body.as_bytes()].concat();
    if stream.write_all(&answer).await.is_err() || stream.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 4096];
    let mut left: usize = 64 * 1024;
    let drain = async {
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
}

/// The uid the owner runs as.
fn own_uid() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        Some(rustix::process::geteuid().as_raw())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The owner's user name: its uid's entry in `/etc/passwd`, else `$USER`.
fn owner_user() -> String {
    let from_passwd = own_uid().and_then(|uid| {
        let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
        passwd.lines().find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
        })
    });
    from_passwd
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .or_else(|| own_uid().map(|u| format!("uid {u}")))
        .unwrap_or_else(|| "who started it".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owners_user_has_a_name() {
        let name = owner_user();
        assert!(!name.is_empty());
        #[cfg(target_os = "linux")]
        if rustix::process::geteuid().is_root() {
            assert_eq!(name, "root");
        }
    }
}
