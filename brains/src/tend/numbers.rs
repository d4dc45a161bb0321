//! Numbers as a claim writes them: digits, number words, units glued or apart, times of
//! day, dates and versions, each read into a key two spellings of one value share
//! ("15 minutes", "15m" and "900 seconds" are `dur:900`; "five" and "5" are `5`).

/// A number read from a claim.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantity {
    /// What two spellings of the same value share.
    pub(crate) key: String,
    /// A version (`v1.2.3`, `1.2.3`, `3.x`) rather than a count or a measure.
    pub(crate) version: bool,
    /// Whether the word after the number was read as its unit ("15 minutes").
    pub(crate) took_next: bool,
}

/// Spelled numbers a restatement may use for digits: "retried five times" says what
/// "retried 5 times" says. Single words only ("twenty-five" is left as a word).
const WORDS: &[(&str, f64)] = &[
    ("zero", 0.0),
    ("one", 1.0),
    ("two", 2.0),
    ("twice", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("thirteen", 13.0),
    ("fourteen", 14.0),
    ("fifteen", 15.0),
    ("sixteen", 16.0),
    ("seventeen", 17.0),
    ("eighteen", 18.0),
    ("nineteen", 19.0),
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("forty", 40.0),
    ("fifty", 50.0),
    ("sixty", 60.0),
    ("seventy", 70.0),
    ("eighty", 80.0),
    ("ninety", 90.0),
    ("hundred", 100.0),
    ("thousand", 1000.0),
];

/// A unit word (lowercase): its family and its size in the family's base unit. Sizes
/// count in powers of 1024 whether written KB or KiB (writers mix them for one value);
/// months and years stand apart from days (a month is not 30 days to everyone).
fn unit(w: &str, glued: bool) -> Option<(&'static str, f64)> {
    const KI: f64 = 1024.0;
    let u = match w {
        "ms" | "msec" | "millisecond" | "milliseconds" => ("dur", 0.001),
        "sec" | "secs" | "second" | "seconds" => ("dur", 1.0),
        "min" | "mins" | "minute" | "minutes" => ("dur", 60.0),
        "hr" | "hrs" | "hour" | "hours" => ("dur", 3600.0),
        "day" | "days" => ("dur", 86_400.0),
        "wk" | "wks" | "week" | "weeks" => ("dur", 604_800.0),
        "month" | "months" => ("month", 1.0),
        "yr" | "yrs" | "year" | "years" => ("year", 1.0),
        "byte" | "bytes" => ("size", 1.0),
        "kb" | "kib" | "kilobyte" | "kilobytes" => ("size", KI),
        "mb" | "mib" | "megabyte" | "megabytes" => ("size", KI * KI),
        "gb" | "gib" | "gigabyte" | "gigabytes" => ("size", KI * KI * KI),
        "tb" | "tib" | "terabyte" | "terabytes" => ("size", KI * KI * KI * KI),
        "%" | "percent" | "pct" => ("pct", 1.0),
        "px" | "pixel" | "pixels" => ("px", 1.0),
        // One letter is a unit only glued to its number ("30s", "15m", "24h", "7d").
        "s" if glued => ("dur", 1.0),
        "m" if glued => ("dur", 60.0),
        "h" if glued => ("dur", 3600.0),
        "d" if glued => ("dur", 86_400.0),
        "w" if glued => ("dur", 604_800.0),
        "b" if glued => ("size", 1.0),
        _ => return None,
    };
    Some(u)
}

/// Whether `w` (lower case) is a unit written apart from its number ("minutes", "MB").
pub(crate) fn is_unit(w: &str) -> bool {
    unit(w, false).is_some()
}

/// A value as a key: integers without a fraction, others to six places, trimmed.
fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn keyed(family: &str, v: f64) -> String {
    if family.is_empty() {
        fmt(v)
    } else {
        format!("{family}:{}", fmt(v))
    }
}

/// `word` (cleaned of punctuation) read as a number, `next` being the word after it
/// (cleaned, lowercase), which may be its unit. `None` when it is no number.
pub(crate) fn read(word: &str, next: Option<&str>) -> Option<Quantity> {
    let lower = word.to_lowercase();
    if let Some(&(_, v)) = WORDS.iter().find(|(w, _)| *w == lower) {
        return Some(with_next(v, next));
    }
    // "a week", "an hour": one of the unit ("a second" is as often an ordinal).
    if matches!(lower.as_str(), "a" | "an") {
        return next
            .filter(|n| !n.starts_with("second"))
            .and_then(|n| unit(n, false))
            .map(|_| with_next(1.0, next));
    }
    if let Some(q) = every(&lower) {
        return Some(q);
    }
    let digit_first = word.starts_with(|c: char| c.is_ascii_digit());
    let version_first = word.len() > 1
        && word.starts_with(['v', 'V'])
        && word[1..].starts_with(|c: char| c.is_ascii_digit());
    if !digit_first && !version_first {
        return None;
    }
    if let Some(q) = time_of_day(&lower, next) {
        return Some(q);
    }
    let (body, vprefix) = match lower.strip_prefix('v') {
        Some(rest) => (rest, true),
        None => (lower.as_str(), false),
    };
    let end = body
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '_')))
        .unwrap_or(body.len());
    let (num_raw, suffix) = body.split_at(end);
    let num = num_raw.trim_end_matches(['.', ',']);
    if num.is_empty() {
        return None;
    }
    let dots = num.matches('.').count();
    // A version: as written, without its `v` (`1.2.3`, `v20`, `3.x`, `2.0.0-rc1`).
    if dots >= 2 || vprefix || (num_raw.ends_with('.') && suffix == "x") {
        return Some(Quantity {
            key: format!("{num_raw}{suffix}"),
            version: true,
            took_next: false,
        });
    }
    // A date (2024-01-15) or a range (3-5): kept as written.
    if suffix.starts_with('-') && suffix[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return Some(Quantity {
            key: format!("lit:{lower}"),
            version: false,
            took_next: false,
        });
    }
    if num.contains(',') && !is_grouping(num) {
        return None;
    }
    let digits: String = num.chars().filter(|c| !matches!(c, ',' | '_')).collect();
    let value: f64 = digits.parse().ok()?;
    match suffix {
        "" | "+" => {
            let q = with_next(value, next);
            // A number with a fraction and no unit is kept as written: "3.10" is not
            // "3.1" when it names a version.
            if dots == 1 && !q.took_next {
                return Some(Quantity {
                    key: digits,
                    version: false,
                    took_next: false,
                });
            }
            Some(q)
        }
        // "2x" is two times, as "twice" is.
        "x" => Some(plain(value)),
        "k" => Some(with_next(value * 1000.0, next)),
        "st" | "nd" | "rd" | "th" => Some(Quantity {
            key: keyed("ord", value),
            version: false,
            took_next: false,
        }),
        // "10M" is ten million; "10m" ten minutes.
        "m" if word.ends_with('M') => Some(with_next(value * 1e6, next)),
        _ => {
            let suffix = suffix.strip_prefix('-').unwrap_or(suffix);
            let (family, scale) = unit(suffix, true)?;
            Some(Quantity {
                key: keyed(family, value * scale),
                version: false,
                took_next: false,
            })
        }
    }
}

fn plain(v: f64) -> Quantity {
    Quantity {
        key: fmt(v),
        version: false,
        took_next: false,
    }
}

/// `v` with the next word as its unit when it is one.
fn with_next(v: f64, next: Option<&str>) -> Quantity {
    match next.and_then(|n| unit(n, false)) {
        Some((family, scale)) => Quantity {
            key: keyed(family, v * scale),
            version: false,
            took_next: true,
        },
        None => plain(v),
    }
}

/// A word that says how often: "hourly" is every hour, "nightly" every day.
fn every(lower: &str) -> Option<Quantity> {
    let (family, v) = match lower {
        "hourly" => ("dur", 3600.0),
        "daily" | "nightly" => ("dur", 86_400.0),
        "weekly" => ("dur", 604_800.0),
        "monthly" => ("month", 1.0),
        "yearly" | "annually" => ("year", 1.0),
        _ => return None,
    };
    Some(Quantity {
        key: keyed(family, v),
        version: false,
        took_next: false,
    })
}

/// Digits grouped by thousands with commas: `10,000`.
fn is_grouping(num: &str) -> bool {
    let mut parts = num.split(',');
    let first = parts.next().unwrap_or("");
    (1..=3).contains(&first.len()) && parts.all(|p| p.len() == 3)
}

/// `02:00`, `2:30pm`, `2am`, `2 am`: minutes after midnight.
fn time_of_day(lower: &str, next: Option<&str>) -> Option<Quantity> {
    let (clock, glued) = match lower
        .strip_suffix("am")
        .map(|c| (c, Some(false)))
        .or_else(|| lower.strip_suffix("pm").map(|c| (c, Some(true))))
    {
        Some((c, pm)) => (c, pm),
        None => (lower, None),
    };
    let apart = match next {
        Some("am" | "a.m") => Some(false),
        Some("pm" | "p.m") => Some(true),
        _ => None,
    };
    let pm = glued.or(apart);
    let (h, m) = match clock.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        Some(_) => return None,
        None if pm.is_some() => (clock.parse::<u32>().ok()?, 0),
        None => return None,
    };
    if h > 23 || m > 59 {
        return None;
    }
    let h = match pm {
        Some(true) if h < 12 => h + 12,
        Some(false) if h == 12 => 0,
        _ => h,
    };
    Some(Quantity {
        key: format!("time:{}", h * 60 + m),
        version: false,
        took_next: glued.is_none() && apart.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(w: &str, next: Option<&str>) -> Option<String> {
        read(w, next).map(|q| q.key)
    }

    #[test]
    fn one_value_written_several_ways_has_one_key() {
        assert_eq!(key("15", Some("minutes")), key("15m", None));
        assert_eq!(key("15m", None), key("900", Some("seconds")));
        assert_eq!(key("1", Some("hour")), key("60", Some("minutes")));
        assert_eq!(key("five", None), key("5", None));
        assert_eq!(key("five", Some("seconds")), key("5s", None));
        assert_eq!(key("10,000", None), key("10000", None));
        assert_eq!(key("10k", None), key("10000", None));
        assert_eq!(key("2GB", None), key("2048", Some("MB").map(|_| "mb")));
        assert_eq!(key("80%", None), key("80", Some("percent")));
        assert_eq!(key("02:00", None), key("2am", None));
        assert_eq!(key("14:30", None), key("2:30pm", None));
        assert_eq!(key("v20", None), key("20", None));
        assert_eq!(key("a", Some("week")), key("7", Some("days")));
        assert_eq!(key("weekly", None), key("1", Some("week")));
        assert_eq!(key("nightly", None), key("24h", None));
        assert_eq!(key("150px", None), key("150", Some("pixels")));
    }

    #[test]
    fn different_values_have_different_keys() {
        assert_ne!(key("5", None), key("11", None));
        assert_ne!(key("15", Some("minutes")), key("30", Some("minutes")));
        assert_ne!(key("15", Some("minutes")), key("15", Some("seconds")));
        assert_ne!(key("3.11", None), key("3.12", None));
        assert_ne!(key("3.10", None), key("3.1", None));
        assert_ne!(key("1.2.3", None), key("1.2.4", None));
        assert_ne!(key("10m", None), key("10M", None));
    }

    #[test]
    fn what_is_no_number_is_not_read_as_one() {
        assert_eq!(key("2fa", None), None);
        assert_eq!(key("4xx", None), None);
        assert_eq!(key("retry", None), None);
        assert_eq!(key("1,2", None), None);
        assert_eq!(key("v", None), None);
        assert_eq!(key("a", Some("second")), None);
        assert_eq!(key("a", Some("table")), None);
    }
}
