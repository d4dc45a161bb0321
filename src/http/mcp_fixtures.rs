//! The fixtures the MCP conformance suite's resources and prompts scenarios expect
//! (`test://static-text`, `test_simple_prompt`, ...). Test-only: served beside the real
//! resources and prompts only when the owner was started with
//! `MEDULLA_MCP_CONFORMANCE_FIXTURES=1` (tests/it/conformance.rs does), never otherwise.
//! They name no brain and read no store.

use std::sync::LazyLock;

use rmcp::model::{
    ContentBlock, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role,
};
use serde_json::{Map, Value};

/// Whether this owner serves the fixtures (read once).
pub static ON: LazyLock<bool> =
    LazyLock::new(|| std::env::var("MEDULLA_MCP_CONFORMANCE_FIXTURES").as_deref() == Ok("1"));

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

/// A 1×1 transparent PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

pub fn resources() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT, "static-text")
            .with_description("conformance fixture: a static text resource")
            .with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "static-binary")
            .with_description("conformance fixture: a static binary resource")
            .with_mime_type("image/png"),
        Resource::new(WATCHED, "watched-resource")
            .with_description("conformance fixture: a resource to subscribe to")
            .with_mime_type("text/plain"),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate::new(TEMPLATE, "template-data")
        .with_description("conformance fixture: a template that substitutes {id}")
        .with_mime_type("application/json")]
}

/// Is this a fixture's URI (a subscription to it is accepted)?
pub fn is_fixture_uri(uri: &str) -> bool {
    uri.starts_with("test://")
}

pub fn read(uri: &str) -> Option<ResourceContents> {
    match uri {
        STATIC_TEXT => Some(ResourceContents::text(
            "This is the content of the static text resource.",
            uri,
        )),
        WATCHED => Some(ResourceContents::text("watched resource content", uri)),
        STATIC_BINARY => Some(ResourceContents::blob(PNG, uri).with_mime_type("image/png")),
        _ => {
            let id = uri
                .strip_prefix("test://template/")?
                .strip_suffix("/data")?;
            let body = serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            Some(ResourceContents::text(body.to_string(), uri).with_mime_type("application/json"))
        }
    }
}

pub fn prompts() -> Vec<Prompt> {
    let arg = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    vec![
        Prompt::new(
            "test_simple_prompt",
            Some("conformance fixture: a prompt without arguments"),
            None,
        ),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("conformance fixture: a prompt with arguments"),
            Some(vec![
                arg("arg1", "First test argument"),
                arg("arg2", "Second test argument"),
            ]),
        ),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("conformance fixture: a prompt embedding a resource"),
            Some(vec![arg("resourceUri", "URI of the resource to embed")]),
        ),
        Prompt::new(
            "test_prompt_with_image",
            Some("conformance fixture: a prompt with an image"),
            None,
        ),
    ]
}

pub fn get_prompt(name: &str, args: &Map<String, Value>) -> Option<Vec<PromptMessage>> {
    let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
    let user = |c: ContentBlock| PromptMessage::new(Role::User, c);
    Some(match name {
        "test_simple_prompt" => vec![user(ContentBlock::text(
            "This is a simple prompt for testing.",
        ))],
        "test_prompt_with_arguments" => vec![user(ContentBlock::text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(ContentBlock::resource(ResourceContents::text(
                "Embedded resource content for testing.",
                arg("resourceUri"),
            ))),
            user(ContentBlock::text(
                "Please process the embedded resource above.",
            )),
        ],
        "test_prompt_with_image" => vec![
            user(ContentBlock::image(PNG, "image/png")),
            user(ContentBlock::text("Please analyze the image above.")),
        ],
        _ => return None,
    })
}
