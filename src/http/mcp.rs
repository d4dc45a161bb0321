//! MCP over Streamable HTTP (the official `rmcp` SDK): one handler per MCP session, so
//! the session's sticky brain lives in the handler.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::headers;
use crate::service::registry::{self, Effect};
use crate::service::{RouteInput, Service};

/// The MCP face of the owner. Cloned per session by the transport's factory.
#[derive(Clone)]
pub struct McpHandler {
    svc: Service,
    /// The brain this session's first routed call landed on.
    sticky: Arc<Mutex<Option<String>>>,
}

impl McpHandler {
    pub fn new(svc: Service) -> Self {
        Self {
            svc,
            sticky: Arc::new(Mutex::new(None)),
        }
    }
}

fn header(parts: Option<&http::request::Parts>, name: &str) -> Option<String> {
    headers::get(&parts?.headers, name)
}

/// A registered verb as MCP publishes it: schemas from the same types the verb reads
/// and answers, annotations from its effect.
fn tool(s: registry::Spec) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(s.effect == Effect::Read)
        .destructive(s.effect == Effect::Destructive)
        .idempotent(s.idempotent)
        .open_world(false);
    Tool::new(s.name, s.description, Arc::new(s.input_schema))
        .with_raw_output_schema(Arc::new(s.output_schema))
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
            .with_instructions(
                "medulla is your project's memory. Call seek before working, memorize what you learn. \
                 Send Medulla-Caller-Root with your working directory; if no brain covers it, call bootstrap.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = registry::specs().into_iter().map(tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = ctx.extensions.get::<http::request::Parts>();
        let input = RouteInput {
            binding: header(parts, headers::BRAIN),
            sticky: self.sticky.lock().expect("sticky lock").clone(),
            caller_root: header(parts, headers::CALLER_ROOT)
                .or_else(|| header(parts, headers::LEGACY_CALLER_ROOT)),
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
