//! The request headers medulla reads, and what a request says about where it comes from.

use crate::service::{RouteInput, Service};

/// Names a brain explicitly (root or fingerprint): what a delegation packet tells a
/// child to send.
pub const BRAIN: &str = "medulla-brain";
/// The caller's working directory.
pub const CALLER_ROOT: &str = "medulla-caller-root";
/// The legacy spelling of the caller-root header, still accepted.
pub const LEGACY_CALLER_ROOT: &str = "m1nd-caller-root";
/// The caller's agent id (`vendor:role`), used when a tool call names none.
pub const AGENT: &str = "medulla-agent";
/// The owner's founder token (`$MEDULLA_HOME/founder.token`).
pub const FOUNDER: &str = "medulla-founder-token";
/// The MCP session.
pub const SESSION: &str = "mcp-session-id";
/// The MCP protocol version a client speaks (sent on every request after `initialize`
/// from 2025-06-18 on).
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// A Hall session (see `hall_auth`).
pub const HALL_SESSION: &str = "medulla-hall-session";
/// On every answer: the build the owner runs (`0.1.0+1a2b3c4d5e6f`), so a client of
/// another build can say so.
pub const VERSION: &str = "medulla-version";

/// One header's value, trimmed; absent when missing or empty.
pub fn get(h: &http::HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The routing facts of a request's headers.
pub fn route_input(svc: &Service, h: &http::HeaderMap) -> RouteInput {
    RouteInput {
        binding: get(h, BRAIN),
        sticky: None,
        caller_root: get(h, CALLER_ROOT).or_else(|| get(h, LEGACY_CALLER_ROOT)),
        agent: get(h, AGENT),
        founder: svc.is_founder(get(h, FOUNDER).as_deref()),
        session: get(h, SESSION),
    }
}
