//! What came from which tool: per store, the live claims each `import --from` source
//! wrote (their agent is `import:<source>`), as doctor and the Hall's doctor page show it.

use std::collections::BTreeMap;

use brains::Claim;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One store's live claims by the tool they were imported from.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ImportedCount {
    /// A brain's root, or `medulla`.
    pub store: String,
    /// Source (`claude`, `codex`, `serena`, `basic-memory`, `mcp-memory`) → live claims.
    pub by_source: BTreeMap<String, u64>,
}

/// `store`'s count, when any of its live claims was imported from another tool.
pub fn count(store: &str, live: &[Claim]) -> Option<ImportedCount> {
    let mut by_source: BTreeMap<String, u64> = BTreeMap::new();
    for c in live {
        if let Some(source) = c.source_agent.strip_prefix("import:") {
            *by_source.entry(source.to_string()).or_default() += 1;
        }
    }
    (!by_source.is_empty()).then(|| ImportedCount {
        store: store.to_string(),
        by_source,
    })
}
