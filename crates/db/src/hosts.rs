//! Targets with several hosts (`postgres://h1:5432,h2:5433/db`,
//! `mysql://h1,h2/db`): which host each connection tries, in what order
//! ([`HostPolicy`]), and which host each user's connection went to
//! ([`HostUse`]), for the per-host counts of a run.

use crate::DbError;
use crate::target::ServerTarget;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// How the connections of a run choose among a target's hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostPolicy {
    /// Connection i goes to host i modulo their number, and only to it
    /// (on reconnect too).
    Spread,
    /// Every connection tries the hosts in their order and keeps the first
    /// that answers (and suits `target_session_attrs`), on reconnect too:
    /// libpq's way.
    #[default]
    Failover,
}

impl HostPolicy {
    /// `spread` or `failover`.
    pub fn parse(s: &str) -> Option<HostPolicy> {
        match s.to_ascii_lowercase().as_str() {
            "spread" => Some(HostPolicy::Spread),
            "failover" => Some(HostPolicy::Failover),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HostPolicy::Spread => "spread",
            HostPolicy::Failover => "failover",
        }
    }
}

impl ServerTarget {
    /// How many hosts (host and port pairs) the target has: one over a
    /// socket.
    pub fn endpoint_count(&self) -> usize {
        if self.socket.is_some() {
            1
        } else {
            self.hosts.len().max(self.ports.len()).max(1)
        }
    }

    /// Host `k` as `host:port` (`[::1]:5432`), or the socket's path.
    pub fn endpoint(&self, k: usize) -> String {
        if let Some(s) = &self.socket {
            return s.display().to_string();
        }
        let h = self.host(k);
        if h.contains(':') {
            format!("[{h}]:{}", self.port(k))
        } else {
            format!("{h}:{}", self.port(k))
        }
    }

    /// What a connection's errors call the target: `shown` (the masked
    /// URL), or with one host of several (`--hosts=spread`) that host:
    /// `h2:5433 (host 2 of URL)`.
    pub(crate) fn shown_for(&self, order: &[usize], shown: &str) -> String {
        match order {
            [k] if self.endpoint_count() > 1 => {
                format!("{} (host {} of {shown})", self.endpoint(*k), k + 1)
            }
            _ => shown.to_string(),
        }
    }

    /// The hosts connection `nth` tries, in order.
    pub(crate) fn endpoint_order(&self, nth: usize, policy: HostPolicy) -> Vec<usize> {
        let n = self.endpoint_count();
        match policy {
            HostPolicy::Spread => vec![nth % n],
            HostPolicy::Failover => (0..n).collect(),
        }
    }
}

/// Which host each user's connection went to last, and how many
/// connections (first connects and reconnects) each host took. Shared by
/// the connections of a run through [`crate::ConnectOptions::host_use`].
#[derive(Debug)]
pub struct HostUse {
    /// Per user (connection number): 1 + its host, 0 before it connected.
    users: Vec<AtomicUsize>,
    connects: Vec<AtomicU64>,
}

impl HostUse {
    pub fn new(users: usize, hosts: usize) -> HostUse {
        HostUse {
            users: (0..users).map(|_| AtomicUsize::new(0)).collect(),
            connects: (0..hosts.max(1)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Connection `nth` connected to host `host`.
    pub(crate) fn connected(&self, nth: usize, host: usize) {
        if let Some(u) = self.users.get(nth) {
            u.store(host + 1, Relaxed);
        }
        if let Some(c) = self.connects.get(host) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// The host of user `user`'s last connection.
    pub fn host_of(&self, user: usize) -> Option<usize> {
        self.users
            .get(user)
            .map(|u| u.load(Relaxed))
            .filter(|h| *h > 0)
            .map(|h| h - 1)
    }

    /// The connections host `host` took.
    pub fn connects(&self, host: usize) -> u64 {
        self.connects.get(host).map_or(0, |c| c.load(Relaxed))
    }
}

/// Tries `n` hosts in order with `attempt` (given the host's place in
/// the list and the name its errors use: `shown`, the target, when there
/// is one host; `host:port` otherwise) and returns the first connection
/// with its place. When every host fails, the error names each host and
/// why: `cannot connect to any host of URL: h1:5432: Connection refused;
/// h2:5433: ...`.
fn first_that_answers<C>(
    n: usize,
    shown: &str,
    name: impl Fn(usize) -> String,
    mut attempt: impl FnMut(usize, &str) -> Result<C, DbError>,
) -> Result<(C, usize), DbError> {
    if n <= 1 {
        return attempt(0, shown).map(|c| (c, 0));
    }
    let mut first: Option<DbError> = None;
    let mut why = Vec::with_capacity(n);
    for i in 0..n {
        let host = name(i);
        match attempt(i, &host) {
            Ok(c) => return Ok((c, i)),
            Err(e) => {
                let m = e
                    .message
                    .strip_prefix("cannot connect to ")
                    .unwrap_or(&e.message);
                why.push(if m.starts_with(&host) {
                    m.to_string()
                } else {
                    format!("{host}: {m}")
                });
                first.get_or_insert(e);
            }
        }
    }
    let mut e = first.unwrap_or_else(|| DbError::other("08001", String::new()));
    e.message = format!("cannot connect to any host of {shown}: {}", why.join("; "));
    Err(e)
}

/// The hosts one connection may use, each with its driver's connection
/// parameters `P` (one with `--hosts=spread`, all in their order with
/// failover), and the one it uses now.
pub(crate) struct HostList<P> {
    list: Vec<P>,
    /// Each one's number in the target's host list, and its name.
    endpoints: Vec<(usize, String)>,
    current: AtomicUsize,
    nth: usize,
    host_use: Option<Arc<HostUse>>,
    /// What connection errors call the target ([`ServerTarget::shown_for`]).
    shown: String,
}

impl<P> HostList<P> {
    /// Connection `nth`'s hosts of `t` under `policy`, each host's
    /// parameters made by `params` from its number in the target's list.
    pub(crate) fn of(
        t: &ServerTarget,
        nth: usize,
        policy: HostPolicy,
        host_use: Option<Arc<HostUse>>,
        shown: &str,
        mut params: impl FnMut(usize) -> Result<P, DbError>,
    ) -> Result<HostList<P>, DbError> {
        let order = t.endpoint_order(nth, policy);
        let mut list = Vec::with_capacity(order.len());
        let mut endpoints = Vec::with_capacity(order.len());
        for &k in &order {
            list.push(params(k)?);
            endpoints.push((k, t.endpoint(k)));
        }
        Ok(HostList {
            list,
            endpoints,
            current: AtomicUsize::new(0),
            nth,
            host_use,
            shown: t.shown_for(&order, shown),
        })
    }

    /// The parameters of the host the connection uses now.
    pub(crate) fn params(&self) -> &P {
        &self.list[self.current.load(Relaxed).min(self.list.len() - 1)]
    }

    /// Connects to the first host that `attempt` (given its parameters
    /// and the name its errors use) connects to, as
    /// [`first_that_answers`], and records it as the one in use.
    pub(crate) fn open<C>(
        &self,
        mut attempt: impl FnMut(&P, &str) -> Result<C, DbError>,
    ) -> Result<C, DbError> {
        let (conn, i) = first_that_answers(
            self.list.len(),
            &self.shown,
            |i| self.endpoints[i].1.clone(),
            |i, name| attempt(&self.list[i], name),
        )?;
        self.current.store(i, Relaxed);
        if let Some(u) = &self.host_use {
            u.connected(self.nth, self.endpoints[i].0);
        }
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Env, Target};

    #[test]
    fn orders_and_names_the_hosts() {
        let (t, _) = Target::parse_in(
            "postgres://u@h1:5433,h2,[::1]:6000/db",
            &Env::empty().with_user("u"),
        )
        .unwrap();
        let Target::Postgres(t) = t else { panic!() };
        assert_eq!(t.endpoint_count(), 3);
        assert_eq!(
            (0..3).map(|k| t.endpoint(k)).collect::<Vec<_>>(),
            ["h1:5433", "h2:5432", "[::1]:6000"]
        );
        assert_eq!(
            Target::Postgres(t.clone()).to_string(),
            "postgres://u@h1:5433,h2:5432,[::1]:6000/db"
        );
        assert_eq!(t.shown_for(&[1], "URL"), "h2:5432 (host 2 of URL)");
        assert_eq!(t.shown_for(&[0, 1, 2], "URL"), "URL");
        assert_eq!(t.endpoint_order(4, HostPolicy::Spread), [1]);
        assert_eq!(t.endpoint_order(4, HostPolicy::Failover), [0, 1, 2]);
        assert_eq!(HostPolicy::parse("Spread"), Some(HostPolicy::Spread));
        assert_eq!(HostPolicy::parse("round-robin"), None);
        let u = HostUse::new(2, 3);
        u.connected(1, 2);
        u.connected(1, 0);
        assert_eq!((u.host_of(0), u.host_of(1)), (None, Some(0)));
        assert_eq!((u.connects(0), u.connects(2), u.connects(9)), (1, 1, 0));
    }
}
