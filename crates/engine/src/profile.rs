//! Load profiles: a level (active users, or an arrival rate) that changes
//! over the run in stages, each ramping linearly from the level before it
//! to its own target over its duration (k6's convention; a stage of 0 s
//! is a step). The run starts at level 0 and lasts as long as its stages.

/// One stage: `duration_s` long, ending at `target`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    pub duration_s: f64,
    pub target: f64,
}

/// The stages of a run, on a time line that starts when the users are let
/// go (0 s) and ends with the last stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub stages: Vec<Stage>,
    /// The stages as linear pieces, made once: the users and the arrival
    /// schedule read them for every event.
    pieces: Vec<Piece>,
}

/// One linear piece of the profile: from `(t0, l0)` to `(t1, l1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub t0: f64,
    pub t1: f64,
    pub l0: f64,
    pub l1: f64,
}

impl Piece {
    fn at(&self, t: f64) -> f64 {
        if self.t1 <= self.t0 {
            return self.l1;
        }
        self.l0 + (self.l1 - self.l0) * ((t - self.t0) / (self.t1 - self.t0)).clamp(0.0, 1.0)
    }
}

impl Profile {
    /// Parses `30s:4,60s:64,0s:8` (durations with `ms`, `s`, `m`, `h`, or
    /// bare seconds; targets from 0 to `max_target`). The error is one
    /// line saying what is wrong.
    pub fn parse(text: &str, max_target: f64) -> Result<Profile, String> {
        let mut stages = Vec::new();
        for (i, part) in text.split(',').map(str::trim).enumerate() {
            let n = i + 1;
            let Some((d, t)) = part.split_once(':') else {
                return Err(format!(
                    "stage {n} '{part}' is not DURATION:TARGET (e.g. 30s:64)"
                ));
            };
            let duration_s = parse_duration(d.trim()).ok_or_else(|| {
                format!("stage {n} '{part}': '{d}' is not a duration (e.g. 0s, 500ms, 30s, 5m, 1h)")
            })?;
            let target: f64 = t
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && (0.0..=max_target).contains(v))
                .ok_or_else(|| {
                    format!("stage {n} '{part}': '{t}' is not a target from 0 to {max_target}")
                })?;
            stages.push(Stage { duration_s, target });
        }
        let total: f64 = stages.iter().map(|s| s.duration_s).sum();
        if total <= 0.0 {
            return Err("the stages last 0 s: give at least one a duration".into());
        }
        if total > 366.0 * 86_400.0 {
            return Err("the stages last more than a year".into());
        }
        let pieces = pieces_of(&stages);
        Ok(Profile { stages, pieces })
    }

    /// The run's length: the stages' durations added up.
    pub fn duration_s(&self) -> f64 {
        self.stages.iter().map(|s| s.duration_s).sum()
    }

    /// The highest target.
    pub fn peak(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// The pieces, in order: stage i ramps from the level before it.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The level at `t` seconds (the last target after the end). At a
    /// step (a 0 s stage) the level is the step's target.
    pub fn level(&self, t: f64) -> f64 {
        let mut level = 0.0;
        for p in self.pieces() {
            if t < p.t0 {
                break;
            }
            level = p.at(t);
            if t < p.t1 {
                break;
            }
        }
        level
    }

    /// Users active at `t`: the level rounded down (a ramp from 0 to 4
    /// over 4 s lets the first user go at 1 s, the fourth at 4 s).
    pub fn users(&self, t: f64) -> usize {
        // A hair of tolerance so that a level that is exactly an integer
        // in real numbers is one in floating point too.
        (self.level(t) + 1e-9).floor().max(0.0) as usize
    }

    /// The most users active at any moment from `t0` until just before
    /// `t1`, or just before `t0`: the users an interval from `t0` to `t1`
    /// can have seen running (one whose event began before a step down at
    /// `t0` is still running after it; one let go by a step up at `t1`
    /// belongs to the next interval).
    pub fn most_users(&self, t0: f64, t1: f64) -> usize {
        const HAIR: f64 = 1e-6;
        let inside = self
            .pieces
            .iter()
            .flat_map(|p| [p.t0, p.t1])
            .filter(|&t| t > t0 && t < t1)
            .flat_map(|t| [t - HAIR, t]);
        [t0 - HAIR, t0, (t1 - HAIR).max(t0)]
            .into_iter()
            .chain(inside)
            .map(|t| self.users(t.max(0.0)))
            .max()
            .unwrap_or(0)
    }

    /// The first moment at or after `t` when at least `n` users are
    /// active, or None when that never happens again.
    pub fn when_users(&self, n: usize, t: f64) -> Option<f64> {
        if self.users(t) >= n {
            return Some(t);
        }
        let want = n as f64 - 1e-9;
        for p in self.pieces() {
            if p.t1 < t {
                continue;
            }
            let from = p.t0.max(t);
            if p.at(from) >= want {
                return Some(from);
            }
            if p.l1 >= want && p.l1 > p.l0 && p.t1 > p.t0 {
                // Linear: solve l0 + (l1 - l0) (x - t0) / (t1 - t0) = n.
                let x = p.t0 + (n as f64 - p.l0) / (p.l1 - p.l0) * (p.t1 - p.t0);
                return Some(x.max(from).min(p.t1));
            }
            if p.t1 <= p.t0 && p.l1 >= want {
                return Some(p.t0.max(t));
            }
        }
        None
    }

    /// The arrivals expected from `a` to `b` (the integral of the rate).
    pub fn expected(&self, a: f64, b: f64) -> f64 {
        let mut sum = 0.0;
        for p in self.pieces() {
            let (x0, x1) = (p.t0.max(a), p.t1.min(b));
            if x1 > x0 {
                sum += (p.at(x0) + p.at(x1)) / 2.0 * (x1 - x0);
            }
        }
        let end = self.duration_s();
        if b > end {
            sum += self.level(end) * (b - end.max(a));
        }
        sum
    }

    /// The next arrival of a Poisson process with this rate after `t`,
    /// `e` being a draw of the exponential distribution with mean 1: the
    /// x where the expected arrivals from t to x make e. Infinite when the
    /// rate stays 0.
    pub fn next_arrival(&self, t: f64, e: f64) -> f64 {
        let mut left = e;
        let mut from = t;
        for p in self.pieces() {
            if p.t1 <= from {
                continue;
            }
            let (x0, r0) = (from.max(p.t0), p.at(from.max(p.t0)));
            let r1 = p.l1;
            let len = p.t1 - x0;
            let area = (r0 + r1) / 2.0 * len;
            if area < left {
                left -= area;
                from = p.t1;
                continue;
            }
            // Within this piece: r(x) = r0 + k (x - x0); solve
            // r0 d + k d^2 / 2 = left for d >= 0.
            let k = (r1 - r0) / len;
            let d = if k.abs() < 1e-12 {
                left / r0
            } else {
                let disc = (r0 * r0 + 2.0 * k * left).max(0.0);
                (disc.sqrt() - r0) / k
            };
            return x0 + d.clamp(0.0, len);
        }
        // After the last stage the rate stays at its last target.
        let last = self.stages.last().map_or(0.0, |s| s.target);
        if last > 0.0 {
            from.max(self.duration_s()) + left / last
        } else {
            f64::INFINITY
        }
    }
}

/// The pieces of `stages`, each ramping from the level before it (0 at
/// the start).
fn pieces_of(stages: &[Stage]) -> Vec<Piece> {
    let (mut t, mut l) = (0.0, 0.0);
    stages
        .iter()
        .map(|s| {
            let p = Piece {
                t0: t,
                t1: t + s.duration_s,
                l0: l,
                l1: s.target,
            };
            t = p.t1;
            l = s.target;
            p
        })
        .collect()
}

/// `500ms`, `30s`, `30`, `5m`, `1h`, `1.5s` in seconds.
fn parse_duration(s: &str) -> Option<f64> {
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Profile {
        Profile::parse(s, 1e9).unwrap()
    }

    #[test]
    fn parses_and_refuses() {
        let x = p("30s:4, 1m:64,0s:8,500ms:8");
        assert_eq!(x.stages.len(), 4);
        assert_eq!(x.duration_s(), 90.5);
        assert_eq!(x.peak(), 64.0);
        for (bad, says) in [
            ("30s", "not DURATION:TARGET"),
            ("xs:4", "not a duration"),
            ("-1s:4", "not a duration"),
            ("10s:-1", "not a target"),
            ("10s:nan", "not a target"),
            ("0s:4", "last 0 s"),
            ("400d:1", "not a duration"),
        ] {
            let e = Profile::parse(bad, 1e6).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(
            Profile::parse("10s:5000", 100.0)
                .unwrap_err()
                .contains("from 0 to 100")
        );
        assert!(Profile::parse("9000h:1", 1e6).unwrap_err().contains("year"));
    }

    #[test]
    fn levels_ramp_and_step() {
        let x = p("4s:4,0s:8,2s:8,2s:0");
        assert_eq!(x.level(0.0), 0.0);
        assert_eq!(x.level(2.0), 2.0);
        assert_eq!(x.users(0.999), 0);
        assert_eq!(x.users(1.0), 1);
        assert_eq!(x.users(3.5), 3);
        assert_eq!(x.users(4.0), 8, "the step at 4 s");
        assert_eq!(x.users(5.0), 8);
        assert_eq!(x.users(7.0), 4);
        assert_eq!(x.users(9.0), 0);
        assert_eq!(x.when_users(3, 0.0), Some(3.0));
        assert_eq!(x.when_users(5, 0.5), Some(4.0));
        assert_eq!(x.when_users(8, 7.0), None);
        assert_eq!(x.when_users(1, 8.5), None);
    }

    #[test]
    fn expected_arrivals_are_the_area() {
        let x = p("10s:100,0s:500,10s:500");
        assert!((x.expected(0.0, 10.0) - 500.0).abs() < 1e-9);
        assert!((x.expected(10.0, 20.0) - 5000.0).abs() < 1e-9);
        assert!((x.expected(5.0, 15.0) - (375.0 + 2500.0)).abs() < 1e-9);
    }

    #[test]
    fn next_arrival_inverts_the_area() {
        let x = p("10s:100,0s:500,10s:500,5s:0");
        for (t, e) in [
            (0.0, 1.0),
            (3.0, 7.5),
            (9.9, 40.0),
            (12.0, 3.0),
            (19.0, 200.0),
        ] {
            let n = x.next_arrival(t, e);
            assert!((x.expected(t, n) - e).abs() < 1e-6, "{t} {e} -> {n}");
        }
        // The rate ends at 0: past its last arrivals there is none.
        assert_eq!(x.next_arrival(24.0, 1e6), f64::INFINITY);
        let zero = p("5s:0,5s:0");
        assert_eq!(zero.next_arrival(0.0, 1.0), f64::INFINITY);
        // A constant rate after the end.
        let c = p("0s:10,1s:10");
        assert!((c.next_arrival(2.0, 1.0) - 2.1).abs() < 1e-9);
    }

    #[test]
    fn most_users_of_an_interval_leave_out_a_step_at_its_end() {
        let p = Profile::parse("0s:1,2s:1,0s:3,2s:3,0s:1,2s:1,4s:5", 100.0).unwrap();
        // The step up at 2 s belongs to the interval after it.
        assert_eq!(p.most_users(1.0, 2.0), 1);
        assert_eq!(p.most_users(2.0, 3.0), 3);
        // A step up inside an interval counts in it.
        assert_eq!(p.most_users(1.5, 2.5), 3);
        // After the step down at 4 s, the users still in their events.
        assert_eq!(p.most_users(4.0, 5.0), 3);
        assert_eq!(p.most_users(5.0, 6.0), 1);
        // A ramp from 1 to 5 over 6..10 s: the third user at 8 s, the
        // fourth at 9 s.
        assert_eq!(p.most_users(7.0, 8.0), 2);
        assert_eq!(p.most_users(8.0, 9.0), 3);
        assert_eq!(p.most_users(8.0, 9.5), 4);
        assert_eq!(p.most_users(9.5, 20.0), 5);
    }
}
