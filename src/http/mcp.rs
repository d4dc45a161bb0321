//! MCP over Streamable HTTP (the official `rmcp` SDK): one handler per MCP session, so
//! the session's sticky brain lives in the handler.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::owner::BrainCounters;
use crate::service::route::{
    AGENT_HEADER, BRAIN_HEADER, CALLER_ROOT_HEADER, FOUNDER_HEADER, LEGACY_CALLER_ROOT_HEADER,
};
use crate::service::{tools, RouteInput, Service};

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
    parts?
        .headers
        .get(name)?
        .to_str()
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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
        let tools = tools::specs()
            .into_iter()
            .map(|s| Tool::new(s.name, s.description, Arc::new(s.schema)))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = ctx.extensions.get::<http::request::Parts>();
        let input = RouteInput {
            binding: header(parts, BRAIN_HEADER),
            sticky: self.sticky.lock().expect("sticky lock").clone(),
            caller_root: header(parts, CALLER_ROOT_HEADER)
                .or_else(|| header(parts, LEGACY_CALLER_ROOT_HEADER)),
            agent: header(parts, AGENT_HEADER).or_else(|| client_agent(&ctx)),
            founder: self
                .svc
                .is_founder(header(parts, FOUNDER_HEADER).as_deref()),
        };
        if !tools::specs().iter().any(|s| s.name == request.name) {
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
        let result = match self.svc.call_tool(&request.name, args, &input).await {
            Ok(out) => {
                if let Some(fp) = out.landed {
                    let mut sticky = self.sticky.lock().expect("sticky lock");
                    if sticky.is_none() {
                        *sticky = Some(fp.clone());
                        BrainCounters::bump(&self.svc.counters(&fp).sessions);
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
