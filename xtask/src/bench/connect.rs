//! `cargo xtask bench --http --connections [--idle 300] [--rounds 300] [--pairs 3]`: what
//! the peer check (SPEC §15) costs. A release owner with `peer_check` on (the kernel names
//! each new connection's uid) and one with it off (the client token on every request),
//! started alternately; against each, with `--idle` other connections held open and idle,
//! round trips of `GET /api/health` on a new connection each (connect, request, close)
//! and on one kept-alive connection, by hand over std TcpStreams.

use std::io::{Read, Write};
use std::net::TcpStream;

use anyhow::{bail, Context, Result};

use super::http::{require_binary, start_with};
use super::runner::{alternate, header, median, pct};

/// One `GET /api/health` on `s`; with `close`, the server closes after it.
fn health(s: &mut TcpStream, host: &str, token: &str, close: bool) -> Result<()> {
    let conn = if close { "close" } else { "keep-alive" };
    write!(
        s,
        "GET /api/health HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: {conn}\r\n\r\n"
    )?;
    // Read the head, then exactly the body its content-length announces.
    let mut buf = Vec::with_capacity(1024);
    let mut byte = [0u8; 512];
    let head_end = loop {
        let n = s.read(&mut byte)?;
        if n == 0 {
            bail!("the owner closed before answering");
        }
        buf.extend_from_slice(&byte[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    if !head.starts_with("http/1.1 200") {
        bail!("health answered {}", head.lines().next().unwrap_or(""));
    }
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .context("no content-length")?;
    while buf.len() < head_end + len {
        let n = s.read(&mut byte)?;
        if n == 0 {
            bail!("the answer broke off");
        }
        buf.extend_from_slice(&byte[..n]);
    }
    Ok(())
}

/// p50 and p95 in µs of new-connection and kept-alive round trips against one owner.
fn measure(peer_check: bool, idle: usize, rounds: usize) -> Result<[f64; 4]> {
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        format!("peer_check = {peer_check}\n"),
    )?;
    let o = start_with(&require_binary()?, home.path(), false, None)?;
    let host = o.url.trim_start_matches("http://").to_string();
    let token = std::fs::read_to_string(home.path().join("client.token"))?
        .trim()
        .to_string();
    // Held open, idle, for the whole measurement: the kernel's tables are not empty.
    let mut held = Vec::with_capacity(idle);
    for _ in 0..idle {
        held.push(TcpStream::connect(&host)?);
    }
    let mut warm = TcpStream::connect(&host)?;
    warm.set_nodelay(true)?;
    let mut new_trip = |_| -> Result<()> {
        let mut s = TcpStream::connect(&host)?;
        s.set_nodelay(true)?;
        health(&mut s, &host, &token, true)
    };
    let mut kept_trip = |_| health(&mut warm, &host, &token, false);
    // Warm-up, then the measured rounds, a new connection first in each.
    alternate(20, &mut kept_trip, &mut new_trip)?;
    let (mut fresh, mut kept) = alternate(rounds, &mut new_trip, &mut kept_trip)?;
    drop(held);
    let us = |ms: f64| ms * 1000.0;
    Ok([
        us(pct(&mut fresh, 0.5)),
        us(pct(&mut fresh, 0.95)),
        us(pct(&mut kept, 0.5)),
        us(pct(&mut kept, 0.95)),
    ])
}

pub fn run(idle: usize, rounds: usize, pairs: usize) -> Result<()> {
    println!(
        "GET /api/health round trips, {rounds} of each per run, {idle} idle connections held open; runs alternated, {pairs} per setting:\n"
    );
    header("| run | peer check | new connection p50 (µs) | p95 | kept-alive p50 (µs) | p95 | new − kept-alive p50 |");
    let mut extra = [Vec::new(), Vec::new()];
    for pair in 0..pairs {
        for (i, on) in [(0, true), (1, false)] {
            let [f50, f95, k50, k95] = measure(on, idle, rounds)?;
            extra[i].push(f50 - k50);
            println!(
                "| {} | {} | {f50:.0} | {f95:.0} | {k50:.0} | {k95:.0} | {:.0} |",
                pair + 1,
                if on { "on (kernel uid)" } else { "off (token)" },
                f50 - k50
            );
        }
    }
    let [on, off] = extra.map(|mut v| median(&mut v).unwrap_or(f64::NAN));
    println!(
        "\nmedian of (new − kept-alive) p50: {on:.0} µs with the peer check, {off:.0} µs without: the check costs ≈ {:.0} µs per new connection",
        on - off
    );
    Ok(())
}
