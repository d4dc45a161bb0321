//! How firmly a claim is held, a leaf that claims and errors both name.

use serde::{Deserialize, Serialize};

/// How firmly a claim is held. Ordered: `Hint < Observed < Verified`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Strength {
    #[cfg_attr(feature = "clap", value(help = "A guess worth remembering"))]
    Hint,
    #[default]
    #[cfg_attr(feature = "clap", value(help = "Seen to hold (the default)"))]
    Observed,
    #[cfg_attr(feature = "clap", value(help = "Checked, with evidence"))]
    Verified,
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Hint => "hint",
            Strength::Observed => "observed",
            Strength::Verified => "verified",
        }
    }
    pub fn parse(s: &str) -> Result<Self, UnknownStrength> {
        match s.trim().to_ascii_lowercase().as_str() {
            "hint" => Ok(Strength::Hint),
            "observed" => Ok(Strength::Observed),
            "verified" => Ok(Strength::Verified),
            other => Err(UnknownStrength(other.to_string())),
        }
    }
}

impl std::fmt::Display for Strength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strength that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strength {0:?}: use hint, observed or verified")]
pub struct UnknownStrength(pub String);
