//! Where an MCP request comes from: the routing headers, else the client's first MCP
//! root, the session's sticky brain, and the agent the client names itself as. Read
//! alike by the SDK's dispatch and the direct path (`super::super::direct`).

use http::request::Parts;
use rmcp::{Peer, RoleServer};

use super::McpHandler;
use crate::http::headers;
use crate::service::RouteInput;
use crate::store_id::Fingerprint;

impl McpHandler {
    /// Where a request comes from, read exactly alike for tools, resources and prompts:
    /// the binding and caller-root headers, else the client's first MCP root, and the
    /// session's sticky brain.
    pub(crate) async fn route_from(
        &self,
        parts: Option<&Parts>,
        peer: &Peer<RoleServer>,
    ) -> RouteInput {
        let binding = header(parts, headers::BRAIN);
        let mut caller_root = header(parts, headers::CALLER_ROOT)
            .or_else(|| header(parts, headers::LEGACY_CALLER_ROOT));
        // A client that sends no header but declared MCP roots: its first root routes it.
        if binding.is_none() && caller_root.is_none() {
            caller_root = self.client_root(peer).await;
        }
        RouteInput {
            binding,
            sticky: self.sticky.lock().expect("sticky lock").clone(),
            caller_root,
            agent: header(parts, headers::AGENT).or_else(|| client_agent(peer)),
            founder: self
                .svc
                .is_founder(header(parts, headers::FOUNDER).as_deref()),
            session: header(parts, headers::SESSION),
        }
    }

    /// Whether routing this request may ask the client for its roots: a request to the
    /// client, which must ride the request's own event stream.
    pub(crate) async fn may_ask_roots(&self, parts: &Parts, peer: &Peer<RoleServer>) -> bool {
        let p = Some(parts);
        let named = header(p, headers::BRAIN).is_some()
            || header(p, headers::CALLER_ROOT).is_some()
            || header(p, headers::LEGACY_CALLER_ROOT).is_some();
        !named && declares_roots(peer) && self.root.lock().await.is_none()
    }

    /// A routed request landed: the session's first landing makes its brain sticky.
    pub(super) fn landed(&self, fp: Option<Fingerprint>) {
        if let Some(fp) = fp {
            let mut sticky = self.sticky.lock().expect("sticky lock");
            if sticky.is_none() {
                self.svc.session_started(&fp);
                *sticky = Some(fp);
                self.landing.notify_one();
            }
        }
    }

    /// The first root the client declared (`file://` URIs only), asking it once. Roots
    /// are deprecated by the newest protocol draft but are what today's clients declare,
    /// and SPEC §3 routes by them.
    #[allow(deprecated)]
    async fn client_root(&self, peer: &Peer<RoleServer>) -> Option<String> {
        if !declares_roots(peer) {
            return None;
        }
        let mut cached = self.root.lock().await;
        if let Some(r) = cached.as_ref() {
            return r.clone();
        }
        let asked =
            tokio::time::timeout(std::time::Duration::from_secs(5), peer.list_roots()).await;
        let root = match asked {
            Ok(Ok(list)) => list.roots.iter().find_map(|r| file_uri_path(&r.uri)),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "the client declared roots but did not list them");
                None
            }
            Err(_) => None,
        };
        *cached = Some(root.clone());
        root
    }
}

fn declares_roots(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.capabilities.roots.is_some())
}

/// `file:///a%20b/c` → `/a b/c`; anything else is not a local directory.
fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()
        .map(|p| p.into_owned())
}

pub(super) fn header(parts: Option<&Parts>, name: &str) -> Option<String> {
    headers::get(&parts?.headers, name)
}

/// An agent id from the client's self-description when the call names none:
/// `<client name>:agent`, honest about where it came from.
fn client_agent(peer: &Peer<RoleServer>) -> Option<String> {
    let info = peer.peer_info()?;
    let name: String = info
        .client_info
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches('-');
    (!name.is_empty()).then(|| format!("{name}:agent"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_uris_become_paths() {
        use super::file_uri_path;
        assert_eq!(
            file_uri_path("file:///home/a/b").as_deref(),
            Some("/home/a/b")
        );
        assert_eq!(
            file_uri_path("file:///a%20b/c%C3%A9").as_deref(),
            Some("/a b/cé")
        );
        assert_eq!(file_uri_path("file://localhost/x").as_deref(), Some("/x"));
        assert_eq!(file_uri_path("https://x/y"), None);
        assert_eq!(file_uri_path("file://host/x"), None);
    }
}
