//! MCP over Streamable HTTP (the official `rmcp` SDK): one handler per MCP session, so
//! the session's sticky brain lives in the handler.

use std::sync::{Arc, LazyLock, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::headers;
use crate::service::registry;
use crate::service::verb::Effect;
use crate::service::{RouteInput, Service};
use crate::store_id::Fingerprint;

/// The MCP face of the owner. Cloned per session by the transport's factory.
#[derive(Clone)]
pub struct McpHandler {
    svc: Service,
    /// The brain this session's first routed call landed on.
    sticky: Arc<Mutex<Option<Fingerprint>>>,
    /// The client's first MCP root as a path, asked once and forgotten when the client
    /// says its roots changed: the caller root of a client that sends no header.
    root: Arc<tokio::sync::Mutex<Option<Option<String>>>>,
}

impl McpHandler {
    pub fn new(svc: Service) -> Self {
        Self {
            svc,
            sticky: Arc::new(Mutex::new(None)),
            root: Arc::new(tokio::sync::Mutex::new(None)),
        }
    }

    /// The first root the client declared (`file://` URIs only), asking it once. Roots
    /// are deprecated by the newest protocol draft but are what today's clients declare,
    /// and SPEC §3 routes by them.
    #[allow(deprecated)]
    async fn client_root(&self, ctx: &RequestContext<RoleServer>) -> Option<String> {
        let declared = ctx
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !declared {
            return None;
        }
        let mut cached = self.root.lock().await;
        if let Some(r) = cached.as_ref() {
            return r.clone();
        }
        let asked =
            tokio::time::timeout(std::time::Duration::from_secs(5), ctx.peer.list_roots()).await;
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

/// What a model reads about this server before its first call.
const INSTRUCTIONS: &str = "medulla is this project's memory, and a shared medulla of doctrine that holds across projects. \
Routing: send Medulla-Caller-Root with your working directory (or declare MCP roots); a subagent sends the Medulla-Brain header its delegation packet names. If no brain covers your directory, writes are refused with the exact bootstrap call to make. \
Before a task call north {task}: it returns what this brain and the medulla know about it, and says plainly when memory exists but nothing matched. \
While working: seek to recall (rows carry a slug for history, learn and promote); memorize what you learn as one labelled claim (same label again supersedes, the old version stays in history); learn {slug, verdict} grades a claim. \
Delegating: delegate {task} gives the packet to hand a child; the child debriefs its findings. \
Report friction or a memory misdelivery with report {letter}. \
Etiquette: makers propose, orchestrators promote. promote copies a claim of this brain into the medulla; it is audited, and expected of *:orchestrator and human:founder. Never memorize secrets: writes carrying them are refused.";

fn header(parts: Option<&http::request::Parts>, name: &str) -> Option<String> {
    headers::get(&parts?.headers, name)
}

/// A registered verb as MCP publishes it: schemas from the same types the verb reads
/// and answers, annotations from its effect.
fn tool(s: &registry::Spec) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(s.effect == Effect::Read)
        .destructive(s.effect == Effect::Destructive)
        .idempotent(s.idempotent)
        .open_world(false);
    Tool::new(s.name, s.description, s.input_schema.clone())
        .with_raw_output_schema(s.output_schema.clone())
        .with_annotations(annotations)
}

/// An agent id from the client's self-description when the call names none:
/// `<client name>:agent`, honest about where it came from.
fn client_agent(ctx: &RequestContext<RoleServer>) -> Option<String> {
    let info = ctx.peer.peer_info()?;
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

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("medulla", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_roots_list_changed(&self, _ctx: rmcp::service::NotificationContext<RoleServer>) {
        *self.root.lock().await = None;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Built once: a listing clones shared names and schemas, nothing is derived again.
        static TOOLS: LazyLock<Vec<Tool>> =
            LazyLock::new(|| registry::specs().iter().map(tool).collect());
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = ctx.extensions.get::<http::request::Parts>();
        let binding = header(parts, headers::BRAIN);
        let mut caller_root = header(parts, headers::CALLER_ROOT)
            .or_else(|| header(parts, headers::LEGACY_CALLER_ROOT));
        // A client that sends no header but declared MCP roots: its first root routes it.
        if binding.is_none() && caller_root.is_none() {
            caller_root = self.client_root(&ctx).await;
        }
        let input = RouteInput {
            binding,
            sticky: self.sticky.lock().expect("sticky lock").clone(),
            caller_root,
            agent: header(parts, headers::AGENT).or_else(|| client_agent(&ctx)),
            founder: self
                .svc
                .is_founder(header(parts, headers::FOUNDER).as_deref()),
        };
        if !registry::exists(&request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}: list the tools with tools/list",
                    request.name
                ),
                None,
            ));
        }
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or_default();
        // A client that sent a progress token hears how a long verb is getting on.
        let progress = match ctx.meta.get_progress_token() {
            Some(token) => {
                let (progress, mut ticks) = crate::service::progress::Progress::channel();
                let peer = ctx.peer.clone();
                tokio::spawn(async move {
                    while let Some(t) = ticks.recv().await {
                        let mut p = ProgressNotificationParam::new(token.clone(), t.done as f64);
                        p.total = t.total.map(|n| n as f64);
                        p.message = Some(t.what.to_string());
                        if peer.notify_progress(p).await.is_err() {
                            break;
                        }
                    }
                });
                progress
            }
            None => crate::service::progress::Progress::none(),
        };
        let result = match self
            .svc
            .call_tool_with_progress(&request.name, args, &input, progress)
            .await
        {
            Ok(out) => {
                if let Some(fp) = out.landed {
                    let mut sticky = self.sticky.lock().expect("sticky lock");
                    if sticky.is_none() {
                        self.svc.session_started(&fp);
                        *sticky = Some(fp);
                    }
                }
                CallToolResult::structured(out.value)
            }
            Err(e) => {
                tracing::debug!(tool = %request.name, code = e.code(), "tool call refused");
                CallToolResult::structured_error(serde_json::json!({ "error": e.to_json() }))
            }
        };
        Ok(result.into())
    }
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
