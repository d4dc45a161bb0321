//! Who is on the other end of an accepted loopback connection: the uid that owns the
//! peer's socket, as the kernel tells it. On Linux one `sock_diag` netlink query asks for
//! the exact 4-tuple (what `ss -e` shows as `uid:`), built and read by hand; when netlink
//! is unavailable (a kernel without `inet_diag`, a sandbox refusing the socket), the rows
//! of `/proc/net/tcp` and `/proc/net/tcp6`. Elsewhere the kernel cannot say
//! ([`PeerError::Unsupported`]), and the owner asks for the client token instead.
//!
//! The peer is always in this network namespace: loopback is not shared across
//! namespaces, and off loopback (`--allow-remote`) this lookup is not used.

use std::net::SocketAddr;

/// Why the uid of a peer is not known. Every one of these refuses the connection.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("no socket at {peer} is connected to {local}: the peer went away")]
    NotFound { peer: SocketAddr, local: SocketAddr },
    #[error("the kernel did not say who owns {peer}: {detail}")]
    Lookup { peer: SocketAddr, detail: String },
    #[error("this system cannot tell who owns a peer socket")]
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Unsupported,
}

impl PeerError {
    pub fn code(&self) -> &'static str {
        match self {
            PeerError::NotFound { .. } => "peer_gone",
            PeerError::Lookup { .. } => "peer_lookup_failed",
            PeerError::Unsupported => "peer_unsupported",
        }
    }
}

/// Whether this system can say who owns a peer socket.
pub fn supported() -> bool {
    cfg!(target_os = "linux")
}

/// The uid owning the socket at `peer` that is connected to our `local` address.
pub fn uid_of(peer: SocketAddr, local: SocketAddr) -> Result<u32, PeerError> {
    #[cfg(target_os = "linux")]
    {
        match linux::sock_diag(peer, local) {
            Err(linux::Diag::Unavailable(why)) => {
                tracing::debug!(%why, "sock_diag unavailable: reading /proc/net");
                linux::proc_net(peer, local)
            }
            Err(linux::Diag::Failed(e)) => Err(e),
            Ok(uid) => Ok(uid),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (peer, local);
        Err(PeerError::Unsupported)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::net::{IpAddr, SocketAddr};

    use rustix::net::{
        netlink, recv, sendto, socket_with, AddressFamily, RecvFlags, SendFlags, SocketFlags,
        SocketType,
    };

    use super::PeerError;

    /// `SOCK_DIAG_BY_FAMILY`: the request and answer type of `sock_diag`.
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLMSG_ERROR: u16 = 2;
    const NLM_F_REQUEST: u16 = 1;
    const IPPROTO_TCP: u8 = 6;
    const AF_INET: u8 = 2;
    const AF_INET6: u8 = 10;
    /// `nlmsghdr`: length, type, flags, sequence, port id.
    const NLMSG_HDR: usize = 16;
    /// `inet_diag_req_v2`: family, protocol, ext, pad, states, then `inet_diag_sockid`.
    const REQ_LEN: usize = NLMSG_HDR + 8 + SOCKID_LEN;
    /// `inet_diag_sockid`: sport, dport (big-endian), src[4], dst[4], if, cookie[2].
    const SOCKID_LEN: usize = 48;
    /// In `inet_diag_msg`: family, state, timer, retrans, sockid, expires, rqueue, wqueue,
    /// then uid.
    const MSG_STATE: usize = 1;
    const MSG_SOCKID: usize = 4;
    const MSG_UID: usize = 4 + SOCKID_LEN + 12;
    /// TCP states whose uid is not the connecting process's: a listener found instead of
    /// a connection, a time-wait remnant (uid 0), a half-open request.
    const TCP_TIME_WAIT: u8 = 6;
    const TCP_LISTEN: u8 = 10;
    const TCP_NEW_SYN_RECV: u8 = 12;

    pub enum Diag {
        /// netlink itself is not there: try `/proc/net`.
        Unavailable(String),
        Failed(PeerError),
    }

    /// The 4-tuple as the peer's socket sees it: its local address is our peer, its remote
    /// address is us.
    fn sockid(peer: SocketAddr, local: SocketAddr) -> [u8; SOCKID_LEN] {
        let mut id = [0u8; SOCKID_LEN];
        id[0..2].copy_from_slice(&peer.port().to_be_bytes());
        id[2..4].copy_from_slice(&local.port().to_be_bytes());
        let put = |buf: &mut [u8], ip: IpAddr| match ip {
            IpAddr::V4(v4) => buf[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => buf[..16].copy_from_slice(&v6.octets()),
        };
        put(&mut id[4..20], peer.ip());
        put(&mut id[20..36], local.ip());
        // idiag_if 0 (any), cookie INET_DIAG_NOCOOKIE: not checked.
        id[40..48].fill(0xff);
        id
    }

    fn request(peer: SocketAddr, local: SocketAddr) -> [u8; REQ_LEN] {
        let mut r = [0u8; REQ_LEN];
        r[0..4].copy_from_slice(&(REQ_LEN as u32).to_ne_bytes());
        r[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        r[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
        r[8..12].copy_from_slice(&1u32.to_ne_bytes());
        let b = NLMSG_HDR;
        r[b] = if peer.is_ipv4() { AF_INET } else { AF_INET6 };
        r[b + 1] = IPPROTO_TCP;
        // Every state: an exact lookup ignores them, and a client that already sent its
        // request and half-closed is still its owner's.
        r[b + 4..b + 8].copy_from_slice(&u32::MAX.to_ne_bytes());
        r[b + 8..].copy_from_slice(&sockid(peer, local));
        r
    }

    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
    }

    /// One exact `sock_diag` lookup. The kernel answers within the `sendto`, so the
    /// `recv` never waits (and is told not to).
    pub fn sock_diag(peer: SocketAddr, local: SocketAddr) -> Result<u32, Diag> {
        let fail = |detail: String| Diag::Failed(PeerError::Lookup { peer, detail });
        let fd = socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC,
            Some(netlink::SOCK_DIAG),
        )
        .map_err(|e| Diag::Unavailable(format!("netlink socket: {e}")))?;
        sendto(
            &fd,
            &request(peer, local),
            SendFlags::empty(),
            &netlink::SocketAddrNetlink::new(0, 0),
        )
        .map_err(|e| Diag::Unavailable(format!("sock_diag request: {e}")))?;
        let mut buf = [0u8; 512];
        let (got, _) = recv(&fd, &mut buf[..], RecvFlags::DONTWAIT)
            .map_err(|e| fail(format!("sock_diag answer: {e}")))?;
        let answer = &buf[..got.min(buf.len())];
        let kind = answer
            .get(4..6)
            .map(|t| u16::from_ne_bytes([t[0], t[1]]))
            .ok_or_else(|| fail("a short netlink answer".into()))?;
        if kind == NLMSG_ERROR {
            let errno = u32_at(answer, NLMSG_HDR).map(|e| -(e as i32)).unwrap_or(0);
            return Err(match errno {
                2 => Diag::Failed(PeerError::NotFound { peer, local }),
                // EINVAL / EOPNOTSUPP: no inet_diag for this family or protocol.
                22 | 95 => Diag::Unavailable(format!("sock_diag errno {errno}")),
                _ => fail(format!("sock_diag errno {errno}")),
            });
        }
        if kind != SOCK_DIAG_BY_FAMILY {
            return Err(fail(format!("netlink answer of type {kind}")));
        }
        let msg = &answer[NLMSG_HDR.min(answer.len())..];
        let uid = u32_at(msg, MSG_UID).ok_or_else(|| fail("a short sock_diag answer".into()))?;
        let state = msg[MSG_STATE];
        if matches!(state, TCP_TIME_WAIT | TCP_LISTEN | TCP_NEW_SYN_RECV) {
            return Err(fail(format!("the socket found is in TCP state {state}")));
        }
        // The socket found must be the one asked for, not a neighbour on the same port.
        if msg.get(MSG_SOCKID..MSG_SOCKID + 36) != Some(&sockid(peer, local)[..36]) {
            return Err(fail("the socket found is not the one asked for".into()));
        }
        Ok(uid)
    }

    /// An address as `/proc/net/tcp*` prints it: each 32-bit word of the address in the
    /// kernel's byte order as hex, then the port.
    fn proc_addr(a: SocketAddr) -> String {
        let octets: Vec<u8> = match a.ip() {
            IpAddr::V4(v4) => v4.octets().to_vec(),
            IpAddr::V6(v6) => v6.octets().to_vec(),
        };
        let mut s: String = octets
            .chunks(4)
            .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
            .collect();
        s.push_str(&format!(":{:04X}", a.port()));
        s
    }

    /// The `/proc/net` fallback: the row whose local address is the peer and whose remote
    /// address is us; its `uid` column.
    pub fn proc_net(peer: SocketAddr, local: SocketAddr) -> Result<u32, PeerError> {
        let file = if peer.is_ipv4() {
            "/proc/net/tcp"
        } else {
            "/proc/net/tcp6"
        };
        let text = std::fs::read_to_string(file).map_err(|e| PeerError::Lookup {
            peer,
            detail: format!("{file}: {e}"),
        })?;
        let (want_local, want_remote) = (proc_addr(peer), proc_addr(local));
        for row in text.lines().skip(1) {
            let cols: Vec<&str> = row.split_whitespace().collect();
            if cols.len() > 7 && cols[1] == want_local && cols[2] == want_remote {
                return cols[7].parse().map_err(|_| PeerError::Lookup {
                    peer,
                    detail: format!("{file}: a uid that is not a number"),
                });
            }
        }
        Err(PeerError::NotFound { peer, local })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_proc_net_fallback_finds_the_connecting_socket_too() {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (_server, peer) = listener.accept().unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            let uid = proc_net(peer, listener.local_addr().unwrap()).expect("a row");
            assert_eq!(uid, rustix::process::geteuid().as_raw());
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_names_our_own_uid_for_a_socket_we_connected() {
        for any in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = std::net::TcpListener::bind(any) else {
                continue; // no IPv6 loopback here
            };
            let local = listener.local_addr().unwrap();
            let client = std::net::TcpStream::connect(local).unwrap();
            let (_server, peer) = listener.accept().unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            let uid = linux::sock_diag(peer, local).unwrap_or_else(|_| panic!("found {peer}"));
            assert_eq!(uid, rustix::process::geteuid().as_raw());
            assert_eq!(uid_of(peer, local).unwrap(), uid);
        }
    }

    #[test]
    fn an_address_with_no_socket_is_not_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let local = listener.local_addr().unwrap();
        // A port nothing connected from (the listener's own port, as a client's).
        let nobody: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let e = uid_of(nobody, local).expect_err("no such socket");
        assert!(matches!(e, PeerError::NotFound { .. }), "{e}");
        assert_eq!(e.code(), "peer_gone");
    }

    #[test]
    fn a_listener_on_the_peer_address_is_not_taken_for_the_peer() {
        // Someone listening on the address a peer would connect from is not a peer.
        let decoy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let e = uid_of(decoy.local_addr().unwrap(), listener.local_addr().unwrap());
        assert!(e.is_err(), "{e:?}");
    }
}
