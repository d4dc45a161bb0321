//! What every client hook (`prime`, `hint`, `nudge`) shares: the clients whose hook
//! shapes medulla reads and writes, and the time a hook may take.

use std::time::{Duration, Instant};

/// The most a hook takes, from its start to its exit, whatever the owner does: a stalled
/// owner (stopped, swapping) costs the person at most this, then the hook prints nothing
/// and exits 0 (SPEC §5: a hook never blocks the client). Under a second, the time a
/// person notices; the process's own start comes on top (a few milliseconds).
pub const BUDGET: Duration = Duration::from_millis(900);

/// When a hook started now must be done.
pub fn deadline() -> Instant {
    Instant::now() + BUDGET
}

/// The hook format of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookClient {
    Claude,
    Codex,
    Gemini,
    /// opencode, through the plugin `connect opencode --hooks` writes: it speaks Claude
    /// Code's hook shape, and tells the end-of-turn hook its session itself (opencode
    /// keeps no transcript file a hook could read).
    Opencode,
}

impl HookClient {
    /// The client's name, as a session key begins with it (`claude:<session id>`).
    pub fn name(self) -> &'static str {
        match self {
            HookClient::Claude => "claude",
            HookClient::Codex => "codex",
            HookClient::Gemini => "gemini",
            HookClient::Opencode => "opencode",
        }
    }
}
