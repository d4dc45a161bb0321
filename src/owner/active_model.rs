//! The embedding model the owner serves with now, and the state of a change of model
//! under way (`medulla model use` on a running owner). A store opened from now on is
//! opened under [`ActiveModel::current`]; a store already warm keeps its own model until
//! the change reaches it.

use std::sync::{Arc, Mutex, RwLock};

use brains::Embedder;
use serde::{Deserialize, Serialize};

/// Where a change of model stands.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwitchPhase {
    /// No change was asked for since the owner started.
    #[default]
    Idle,
    /// Stores are being embedded under the new model; recall serves from the old.
    Switching,
    /// Every warm store and every store opened since is under the new model.
    Done,
    /// The change stopped; the stores not yet switched keep the old model.
    Failed,
}

/// A change of model, as `model status` shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SwitchStatus {
    pub phase: SwitchPhase,
    /// The model's id before the change (none: lexical-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Warm stores the change must reach, and how many it has.
    pub stores_total: usize,
    pub stores_done: usize,
    /// Claims embedded under the new model so far.
    pub claims_embedded: u64,
    /// Claims written during the change, left to the background embedding.
    pub claims_left_behind: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The owner's model: what new stores open under, and the change under way.
#[derive(Default)]
pub struct ActiveModel {
    current: RwLock<Option<Arc<dyn Embedder>>>,
    switch: Mutex<SwitchStatus>,
}

impl ActiveModel {
    pub fn current(&self) -> Option<Arc<dyn Embedder>> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set(&self, e: Option<Arc<dyn Embedder>>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = e;
    }

    pub fn status(&self) -> SwitchStatus {
        self.switch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Change the status in place.
    pub fn update(&self, f: impl FnOnce(&mut SwitchStatus)) {
        f(&mut self.switch.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Mark a change as begun, unless one is under way: `false` then.
    pub fn begin(&self, from: Option<String>, to: String, now_ms: i64) -> bool {
        let mut s = self.switch.lock().unwrap_or_else(|p| p.into_inner());
        if s.phase == SwitchPhase::Switching {
            return false;
        }
        *s = SwitchStatus {
            phase: SwitchPhase::Switching,
            from,
            to: Some(to),
            started_at: Some(now_ms),
            ..Default::default()
        };
        true
    }
}
