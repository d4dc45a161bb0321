//! The closed sets of values the owner accepts, as clap value enums: `--help` lists them
//! and a typo is refused before anything is sent.

use clap::ValueEnum;

/// A store a claim lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Tier {
    /// This project's brain (the working directory's)
    Project,
    /// The shared medulla (the founder's doctrine)
    Medulla,
}

/// Where `seek` looks.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SeekTier {
    /// This project's brain only
    Project,
    /// The medulla only
    Medulla,
    /// Every brain plus the medulla, grouped by origin (an explicit cross-project pull)
    AllBrains,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Strength {
    /// A guess worth remembering
    Hint,
    /// Seen to hold (the default)
    Observed,
    /// Checked, with evidence
    Verified,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Verdict {
    /// The claim held
    Correct,
    /// It held in part
    Partial,
    /// It did not hold (on a medulla claim: demotes it)
    Wrong,
}

/// A letter's class.
#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Class {
    /// Something is broken
    Bug,
    /// Something works but gets in the way
    Friction,
    /// A suggestion
    Idea,
    /// Memory was delivered wrong (needs --kind)
    MemoryMisdelivery,
    /// Anything else worth filing
    Note,
    /// A closing letter: sorts the letters it answers (settles them)
    Triage,
    /// A closing letter: says the letters it answers were dealt with (settles them)
    Receipt,
    /// About another tool: counted apart, never open
    External,
}

/// The kind of a memory misdelivery.
#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Kind {
    /// Another project's memory arrived unasked
    Leak,
    /// Memory was said to be absent while it existed
    FalseAbsence,
    /// A write landed in the wrong store
    WrongStoreWrite,
    /// A claim was credited to the wrong origin or agent
    Misattribution,
    /// A store or claim disappeared from view
    Vanished,
}

/// The name clap shows for a value (`all-brains`, `memory_misdelivery`).
pub fn name(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_names_are_the_owners_spellings() {
        assert_eq!(name(SeekTier::AllBrains), "all-brains");
        assert_eq!(name(Class::MemoryMisdelivery), "memory_misdelivery");
        assert_eq!(name(Kind::WrongStoreWrite), "wrong_store_write");
        assert_eq!(name(Kind::FalseAbsence), "false_absence");
        assert_eq!(name(Tier::Medulla), "medulla");
    }

    #[test]
    fn the_kinds_offered_are_the_kinds_the_owner_accepts() {
        let offered: Vec<String> = Kind::value_variants().iter().map(|k| name(*k)).collect();
        assert_eq!(offered, crate::mailbox::letter::MISDELIVERY_KINDS);
    }
}
