//! A letter's closed sets of values, as clap value enums: `--help` lists them and a typo
//! is refused before anything is sent. (Tiers, strengths and verdicts are the verbs' own
//! types, which derive `clap::ValueEnum` where they are declared.)

use clap::ValueEnum;

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
        assert_eq!(name(Class::MemoryMisdelivery), "memory_misdelivery");
        assert_eq!(name(Kind::WrongStoreWrite), "wrong_store_write");
        assert_eq!(name(Kind::FalseAbsence), "false_absence");
    }

    /// A value the command line offers is sent serialized; clap's spelling and serde's
    /// must agree, or `--tier all-brains` would parse and then be refused by the owner.
    #[test]
    fn the_verbs_value_enums_spell_each_value_as_serde_does() {
        fn agree<T: ValueEnum + serde::Serialize>() {
            for v in T::value_variants() {
                assert_eq!(serde_json::to_value(v).unwrap(), name(v.clone()));
            }
        }
        agree::<crate::service::verbs::Tier>();
        agree::<crate::service::verbs::seek::SeekTier>();
        agree::<brains::Strength>();
        agree::<brains::Verdict>();
    }

    #[test]
    fn the_kinds_offered_are_the_kinds_the_owner_accepts() {
        let offered: Vec<String> = Kind::value_variants().iter().map(|k| name(*k)).collect();
        assert_eq!(offered, crate::mailbox::letter::MISDELIVERY_KINDS);
    }
}
