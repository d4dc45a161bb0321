//! How the Hall proves it is the founder. `medulla hall` (the CLI, holding the founder
//! token) asks for a one-time ticket and opens `http://<owner>/#ticket=<t>`; the page
//! trades the ticket for a session and sends it in the `Medulla-Hall-Session` header on
//! every call. The fragment never reaches a server log; a ticket works once and for five
//! minutes; a session lasts twelve hours.
//!
//! CSRF-safe: the session travels in a custom header, never a cookie, so no other page —
//! even one on another localhost port — can make the browser send it (a cross-origin
//! request with a custom header needs a preflight this server never grants), and the
//! loopback guard refuses foreign origins anyway. Nothing that merely reaches the port
//! can act.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TICKET_TTL: Duration = Duration::from_secs(5 * 60);
const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

#[derive(Default)]
pub struct HallAuth {
    tickets: Mutex<HashMap<String, Instant>>,
    sessions: Mutex<HashMap<String, Instant>>,
}

impl HallAuth {
    /// A fresh one-time ticket (for the founder only: the caller checks).
    pub fn ticket(&self) -> String {
        let t = crate::founder::random_secret();
        let mut tickets = self.tickets.lock().expect("hall lock");
        tickets.retain(|_, at| at.elapsed() < TICKET_TTL);
        tickets.insert(t.clone(), Instant::now());
        t
    }

    /// Trade a ticket for a session; a ticket works once.
    pub fn session(&self, ticket: &str) -> Option<String> {
        let issued = self.tickets.lock().expect("hall lock").remove(ticket)?;
        if issued.elapsed() >= TICKET_TTL {
            return None;
        }
        let s = crate::founder::random_secret();
        let mut sessions = self.sessions.lock().expect("hall lock");
        sessions.retain(|_, at| at.elapsed() < SESSION_TTL);
        sessions.insert(s.clone(), Instant::now());
        Some(s)
    }

    pub fn valid(&self, session: &str) -> bool {
        self.sessions
            .lock()
            .expect("hall lock")
            .get(session)
            .is_some_and(|at| at.elapsed() < SESSION_TTL)
    }

    pub fn ticket_ttl_secs() -> u64 {
        TICKET_TTL.as_secs()
    }

    pub fn session_ttl_secs() -> u64 {
        SESSION_TTL.as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_works_once_and_a_session_is_checked() {
        let a = HallAuth::default();
        let t = a.ticket();
        let s = a.session(&t).expect("a fresh ticket trades");
        assert!(a.session(&t).is_none(), "a ticket works once");
        assert!(a.valid(&s));
        assert!(!a.valid("forged"));
        assert!(a.session("forged").is_none());
    }
}
