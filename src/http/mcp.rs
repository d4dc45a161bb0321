//! MCP over Streamable HTTP (the official `rmcp` SDK): one handler per MCP session, so
//! the session's sticky brain lives in the handler. Tools, resources and prompts are the
//! service's; this file only turns MCP requests into a `RouteInput` and the service's
//! typed answers into MCP's shapes, and tells a session when its resources changed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{headers, mcp_fixtures as fixtures};
use crate::service::prompts::{Part, PROMPTS};
use crate::service::resources::{ResourceError, ResourceUri, TEMPLATES};
use crate::service::verb::Effect;
use crate::service::watch::{Change, Watch};
use crate::service::{registry, resources};
use crate::service::{RouteInput, Service};
use crate::store_id::Fingerprint;

mod route;

/// The MCP face of the owner. Cloned per session by the transport's factory.
#[derive(Clone)]
pub struct McpHandler {
    svc: Service,
    /// The brain this session's first routed call landed on.
    sticky: Arc<Mutex<Option<Fingerprint>>>,
    /// The client's first MCP root as a path, asked once and forgotten when the client
    /// says its roots changed: the caller root of a client that sends no header.
    root: Arc<tokio::sync::Mutex<Option<Option<String>>>>,
    /// The resources this session subscribed to (`resources/subscribe`).
    subscribed: Arc<Mutex<BTreeSet<String>>>,
    /// Told when the session lands on its sticky brain, for its resource watch.
    landing: Arc<tokio::sync::Notify>,
    /// Cancels the session's resource watch when the last clone of the handler (the
    /// session) is gone; `None` in the direct path's copy, which must not keep it alive.
    _alive: Option<Arc<DropGuard>>,
    watch_token: CancellationToken,
    /// Told of the session once it is initialised: the direct path answers its plain
    /// requests from then on (`super::direct`).
    ready: Ready,
}

/// What a handler tells once its session is initialised: its id, the handler the direct
/// path may answer with, and the session's peer.
pub type Ready = Arc<dyn Fn(&str, McpHandler, rmcp::Peer<RoleServer>) + Send + Sync>;

impl McpHandler {
    pub fn new(svc: Service, ready: Ready) -> Self {
        let token = CancellationToken::new();
        Self {
            svc,
            sticky: Arc::new(Mutex::new(None)),
            root: Arc::new(tokio::sync::Mutex::new(None)),
            subscribed: Arc::new(Mutex::new(BTreeSet::new())),
            landing: Arc::new(tokio::sync::Notify::new()),
            watch_token: token.child_token(),
            _alive: Some(Arc::new(token.drop_guard())),
            ready,
        }
    }

    /// The same session's handler without its keep-alive: what the direct path holds.
    fn detached(&self) -> Self {
        Self {
            _alive: None,
            ..self.clone()
        }
    }

    async fn route_input(&self, ctx: &RequestContext<RoleServer>) -> RouteInput {
        let parts = ctx.extensions.get::<http::request::Parts>();
        self.route_from(parts, &ctx.peer).await
    }
}

/// What a model reads about this server before its first call.
const INSTRUCTIONS: &str = "medulla is this project's memory, and a shared medulla of doctrine that holds across projects. \
Routing: send Medulla-Caller-Root with your working directory (or declare MCP roots); a subagent sends the Medulla-Brain header its delegation packet names. If no brain covers your directory, writes are refused with the exact bootstrap call to make. \
Before a task call north {task}: it returns what this brain and the medulla know about it, and says plainly when memory exists but nothing matched. \
While working: seek to recall (rows carry a slug for history, learn and promote); memorize what you learn as one labelled claim (same label again supersedes, the old version stays in history); learn {slug, verdict} grades a claim. \
Delegating: delegate {task} gives the packet to hand a child; the child debriefs its findings. \
Report friction or a memory misdelivery with report {letter}. \
Etiquette: makers propose, orchestrators promote. promote copies a claim of this brain into the medulla; it is audited, and expected of *:orchestrator and human:founder. Never memorize secrets: writes carrying them are refused.";

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

/// A resource or prompt refusal as JSON-RPC: a resource that does not exist is
/// `-32002` (the SDK turns it into `-32602` for 2026-07-28 clients), a request the
/// caller must change (HTTP would say 4xx) `-32602`, a fault of the owner `-32603`;
/// `data` carries the typed error (`code`, `message`).
fn mcp_error(e: &ResourceError) -> ErrorData {
    let data = Some(e.to_json());
    let bad_request = match e {
        ResourceError::Owner(o) => (400..500).contains(&super::status::of(o)),
        ResourceError::BadCursor(_)
        | ResourceError::UnknownPrompt(_)
        | ResourceError::MissingArgument { .. } => true,
        _ => false,
    };
    if e.is_not_found() {
        ErrorData::resource_not_found(e.to_string(), data)
    } else if bad_request {
        ErrorData::invalid_params(e.to_string(), data)
    } else {
        ErrorData::internal_error(e.to_string(), data)
    }
}

/// A tool's refusal as an MCP result: `isError`, and one text that a person or a model
/// reads first (`code: message`, the fix named) and a program after its first line (the
/// typed error as JSON). No structured content: a tool's output schema is its answer's,
/// and the TypeScript SDK checks any structured content against it, error or not, so a
/// client on it (Gemini CLI, opencode) showed its model a schema mismatch instead of the
/// refusal; nor a text that is JSON whole, which Gemini CLI turns back into structured
/// content.
fn refusal(e: &crate::error::OwnerError) -> CallToolResult {
    let typed = serde_json::json!({ "error": e.to_json() });
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {e}\n{typed}",
        e.code()
    ))])
}

fn listed(l: resources::Listed) -> Resource {
    Resource::new(l.uri, l.name)
        .with_title(l.title)
        .with_description(l.description)
        .with_mime_type(l.mime_type)
}

fn message(p: Part) -> PromptMessage {
    match p {
        Part::Text(t) => PromptMessage::new(Role::User, ContentBlock::text(t)),
        Part::Resource {
            uri,
            mime_type,
            text,
        } => PromptMessage::new(
            Role::User,
            ContentBlock::resource(ResourceContents::text(text, uri).with_mime_type(mime_type)),
        ),
    }
}

/// Tell a peer about changes; false once it can no longer hear.
async fn tell(peer: &rmcp::Peer<RoleServer>, changes: Vec<Change>) -> bool {
    for c in changes {
        let sent = match c {
            Change::ListChanged => peer.notify_resource_list_changed().await,
            Change::Updated(uri) => {
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await
            }
        };
        if sent.is_err() {
            return false;
        }
    }
    true
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("medulla", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// A session (protocol versions with `initialize`) hears of changes to its resources
    /// on its standing stream for as long as it lives.
    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // The task holds what the session's view needs, never the handler itself: the
        // handler's drop (the session's end) cancels it.
        let svc = self.svc.clone();
        let sticky = self.sticky.clone();
        let subscribed = self.subscribed.clone();
        let stop = self.watch_token.clone();
        let landing = self.landing.clone();
        // Initialised: from now on the direct path may answer this session's calls.
        let parts = ctx.extensions.get::<http::request::Parts>();
        if let Some(id) = route::header(parts, headers::SESSION) {
            (self.ready)(&id, self.detached(), ctx.peer.clone());
        }
        let peer = ctx.peer;
        tokio::spawn(async move {
            let mut watch = Watch::new(&svc);
            let brain = || {
                let fp = sticky.lock().expect("sticky lock").clone()?;
                svc.owner.registry.manifest(&fp)
            };
            let uris = || {
                subscribed
                    .lock()
                    .expect("subscribed lock")
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
            };
            loop {
                let next = tokio::select! {
                    _ = stop.cancelled() => return,
                    n = watch.next(brain, uris, Some(&landing)) => n,
                };
                let Some(changes) = next else { return };
                let heard = tokio::select! {
                    _ = stop.cancelled() => return,
                    heard = tell(&peer, changes) => heard,
                };
                if !heard {
                    return;
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = Some(true);
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|u| {
                    ResourceUri::parse(u).is_ok() || (*fixtures::ON && fixtures::is_fixture_uri(u))
                })
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    /// `subscriptions/listen` (2026-07-28): the changes of the brain this request routes
    /// to and of the medulla, on the request's own stream, until it is cancelled.
    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let input = self.route_input(cx.request_context()).await;
        let brain = self.svc.route(&input).await.ok().and_then(|r| r.brain);
        let subscribed = cx
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let mut watch = Watch::new(&self.svc);
        loop {
            let next = tokio::select! {
                _ = cx.cancelled() => return Ok(()),
                n = watch.next(|| brain.clone(), || subscribed.clone(), None) => n,
            };
            let Some(changes) = next else { return Ok(()) };
            for c in changes {
                let sent = match c {
                    Change::ListChanged => cx.sink().notify_resource_list_changed().await,
                    Change::Updated(uri) => cx.sink().notify_resource_updated(uri).await,
                };
                if sent.is_err() {
                    return Ok(());
                }
            }
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let fixture = *fixtures::ON && fixtures::is_fixture_uri(&request.uri);
        if !fixture {
            ResourceUri::parse(&request.uri).map_err(|e| mcp_error(&e))?;
        }
        self.subscribed
            .lock()
            .expect("subscribed lock")
            .insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed
            .lock()
            .expect("subscribed lock")
            .remove(&request.uri);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let input = self.route_input(&ctx).await;
        let cursor = request.and_then(|r| r.cursor);
        let page = self
            .svc
            .list_resources(&input, cursor.as_deref())
            .await
            .map_err(|e| mcp_error(&e))?;
        self.landed(page.landed);
        let mut items: Vec<Resource> = page.resources.into_iter().map(listed).collect();
        if *fixtures::ON && cursor.is_none() {
            items.extend(fixtures::resources());
        }
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut templates: Vec<ResourceTemplate> = TEMPLATES
            .iter()
            .map(|t| {
                ResourceTemplate::new(t.uri_template, t.name)
                    .with_title(t.title)
                    .with_description(t.description)
                    .with_mime_type(t.mime_type)
            })
            .collect();
        if *fixtures::ON {
            templates.extend(fixtures::templates());
        }
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if *fixtures::ON {
            if let Some(c) = fixtures::read(&request.uri) {
                return Ok(ReadResourceResult::new(vec![c]).into());
            }
        }
        let input = self.route_input(&ctx).await;
        let read = self
            .svc
            .read_resource(&request.uri, &input)
            .await
            .map_err(|e| mcp_error(&e))?;
        self.landed(read.landed);
        let contents = ResourceContents::text(read.text, read.uri).with_mime_type(read.mime_type);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut prompts: Vec<Prompt> = PROMPTS
            .iter()
            .map(|p| {
                let args = p
                    .arguments
                    .iter()
                    .map(|a| {
                        PromptArgument::new(a.name)
                            .with_description(a.description)
                            .with_required(a.required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(args)).with_title(p.title)
            })
            .collect();
        if *fixtures::ON {
            prompts.extend(fixtures::prompts());
        }
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let raw = request.arguments.unwrap_or_default();
        if *fixtures::ON {
            if let Some(messages) = fixtures::get_prompt(&request.name, &raw) {
                return Ok(GetPromptResult::new(messages).into());
            }
        }
        let mut args = BTreeMap::new();
        for (k, v) in raw {
            let v = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            args.insert(k, v);
        }
        let input = self.route_input(&ctx).await;
        let answer = self
            .svc
            .get_prompt(&request.name, &args, &input)
            .await
            .map_err(|e| mcp_error(&e))?;
        self.landed(answer.landed);
        let messages = answer.messages.into_iter().map(message).collect();
        Ok(GetPromptResult::new(messages)
            .with_description(answer.description)
            .into())
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
        let input = self.route_input(&ctx).await;
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
                self.landed(out.landed);
                CallToolResult::structured(out.value)
            }
            Err(e) => {
                tracing::debug!(tool = %request.name, code = e.code(), "tool call refused");
                refusal(&e)
            }
        };
        Ok(result.into())
    }
}
