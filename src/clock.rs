//! The owner's clock: the system's, or — a test-only setting (`clock_file` in
//! config.toml) — the number of milliseconds written in a file, so a black-box test can
//! move time and watch claims age end to end.

use std::path::PathBuf;

use brains::{Clock, SystemClock};

/// Reads the time from a file on every call; an unreadable file reads as the system time.
#[derive(Debug)]
pub struct FileClock(pub PathBuf);

impl Clock for FileClock {
    fn now_ms(&self) -> i64 {
        std::fs::read_to_string(&self.0)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or_else(|| SystemClock.now_ms())
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian.
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The ISO week (`YYYY-Www`) of a time in ms: weeks start on Monday and belong to the
/// year of their Thursday.
pub fn iso_week(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let weekday = (days + 3).rem_euclid(7); // 0 = Monday; 1970-01-01 was a Thursday
    let thursday = days - weekday + 3;
    let year = civil(thursday).0;
    let jan1 = days_from_civil(year, 1, 1);
    format!("{year}-W{:02}", (thursday - jan1) / 7 + 1)
}

#[cfg(test)]
mod tests {
    use super::iso_week;

    #[test]
    fn iso_weeks_follow_the_thursday_rule() {
        let day = |y, m, d| super::days_from_civil(y, m, d) * 86_400_000;
        assert_eq!(iso_week(day(2026, 7, 5) + 36_000_000), "2026-W27");
        assert_eq!(iso_week(day(2021, 1, 3)), "2020-W53");
        assert_eq!(iso_week(day(2024, 12, 30)), "2025-W01");
        assert_eq!(iso_week(0), "1970-W01");
        assert_eq!(iso_week(day(2026, 11, 23)), "2026-W48");
    }
}
