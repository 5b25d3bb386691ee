//! A terminal (virtual user): its connection, home warehouse and
//! district, card deck, keying and think times, and the transactions it
//! runs (client-side SQL or stored procedures). A transaction that hits a
//! deadlock or serialization failure is rolled back and retried with the
//! same input.

use super::random::{NuConstants, TpccRand};
use super::sql::{Ended, Exec, TxStmts, session_setup};
use super::{TpccConfig, TxKind, deck::Deck, delivery, new_order, order_status, payment};
use super::{procedures, stock_level};
use crate::random::derive_seed;
use dbmeter_db::{ConnectOptions, Connection, DbError, ErrorKind, IgnoreList, Value};
use dbmeter_engine::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use std::sync::Arc;
use std::time::Duration;

/// What a terminal draws its inputs from.
pub struct Gen {
    pub r: TpccRand,
    pub nu: NuConstants,
    pub warehouses: i64,
    /// The terminal's home warehouse.
    pub home: i64,
    /// The terminal's district for Stock-Level.
    pub district: i64,
    /// Pick a random warehouse per transaction instead of the home one.
    pub all_warehouses: bool,
}

impl Gen {
    /// The warehouse of the next transaction.
    pub fn warehouse(&mut self) -> i64 {
        if self.all_warehouses {
            self.r.uniform(1, self.warehouses)
        } else {
            self.home
        }
    }

    /// A random warehouse other than `w` (needs at least two).
    pub fn other_warehouse(&mut self, w: i64) -> i64 {
        let o = self.r.uniform(1, self.warehouses - 1);
        if o >= w { o + 1 } else { o }
    }
}

/// One transaction's input.
#[derive(Clone, Debug, PartialEq)]
pub enum TxInput {
    NewOrder(new_order::Input),
    Payment(payment::Input),
    OrderStatus(order_status::Input),
    Delivery(delivery::Input),
    StockLevel(stock_level::Input),
}

impl TxInput {
    pub fn generate(kind: TxKind, g: &mut Gen) -> TxInput {
        match kind {
            TxKind::NewOrder => TxInput::NewOrder(new_order::Input::generate(g)),
            TxKind::Payment => TxInput::Payment(payment::Input::generate(g)),
            TxKind::OrderStatus => TxInput::OrderStatus(order_status::Input::generate(g)),
            TxKind::Delivery => TxInput::Delivery(delivery::Input::generate(g)),
            TxKind::StockLevel => TxInput::StockLevel(stock_level::Input::generate(g)),
        }
    }

    pub fn kind(&self) -> TxKind {
        match self {
            TxInput::NewOrder(_) => TxKind::NewOrder,
            TxInput::Payment(_) => TxKind::Payment,
            TxInput::OrderStatus(_) => TxKind::OrderStatus,
            TxInput::Delivery(_) => TxKind::Delivery,
            TxInput::StockLevel(_) => TxKind::StockLevel,
        }
    }
}

/// The home warehouse and Stock-Level district of terminal `id` (from 0):
/// terminals go round the warehouses, then round their districts.
pub fn home_of(id: usize, warehouses: u64) -> (i64, i64) {
    let w = warehouses.max(1) as usize;
    ((id % w) as i64 + 1, ((id / w) % 10) as i64 + 1)
}

/// Creates the terminals of a run.
pub struct TpccFactory {
    pub cfg: Arc<TpccConfig>,
    /// The warehouses the run covers (1..=warehouses).
    pub warehouses: u64,
    pub connect: ConnectOptions,
    pub ignore: IgnoreList,
    pub seed: u64,
    pub nu: NuConstants,
    /// The run-wide number of the first terminal (under `--shard`, the
    /// terminals of the shards before this one): home warehouses go round
    /// from there.
    pub first_terminal: usize,
}

// One per terminal and long-lived: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Mode {
    Client {
        tx: TxStmts,
        new_order: new_order::Stmts,
        payment: payment::Stmts,
        order_status: order_status::Stmts,
        delivery: delivery::Stmts,
        stock_level: stock_level::Stmts,
    },
    Procedures {
        calls: procedures::Calls,
        rollback: dbmeter_db::StmtId,
    },
}

pub struct Terminal {
    conn: Connection,
    mode: Mode,
    inputs: Gen,
    deck: Deck,
    cfg: Arc<TpccConfig>,
    ignore: IgnoreList,
    /// The transaction to retry after a retryable error.
    pending: Option<TxInput>,
    /// The next transaction, drawn when its keying time was waited.
    next: Option<TxKind>,
    /// The last transaction done, whose think time comes next.
    last: Option<TxKind>,
    in_tx: bool,
    rows: Vec<Option<Value>>,
}

impl UserFactory for TpccFactory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let mut conn = Connection::connect_nth(&self.connect, user_id).map_err(|e| e.message)?;
        let mode = if self.cfg.procedures {
            Mode::Procedures {
                calls: procedures::register(&mut conn),
                rollback: conn.register("ROLLBACK"),
            }
        } else {
            Mode::Client {
                tx: TxStmts::register(&mut conn),
                new_order: new_order::register(&mut conn),
                payment: payment::register(&mut conn),
                order_status: order_status::register(&mut conn),
                delivery: delivery::register(&mut conn),
                stock_level: stock_level::register(&mut conn),
            }
        };
        if !self.cfg.procedures
            && let Some(sql) = session_setup(conn.dialect())
        {
            conn.execute(sql).map_err(|e| e.message)?;
        }
        let (home, district) = home_of(self.first_terminal + user_id, self.warehouses);
        Ok(Box::new(Terminal {
            conn,
            mode,
            inputs: Gen {
                r: TpccRand::new(derive_seed(self.seed, user_id as u64)),
                nu: self.nu,
                warehouses: self.warehouses as i64,
                home,
                district,
                all_warehouses: self.cfg.all_warehouses,
            },
            deck: Deck::new(),
            cfg: self.cfg.clone(),
            ignore: self.ignore.clone(),
            pending: None,
            next: None,
            last: None,
            in_tx: false,
            rows: Vec::with_capacity(64),
        }))
    }
}

impl Terminal {
    fn execute(&mut self, input: &TxInput, tally: &mut Tally) -> Result<Ended, DbError> {
        let mut x = Exec {
            conn: &mut self.conn,
            tally,
            rows: &mut self.rows,
        };
        match &self.mode {
            Mode::Procedures { calls, .. } => procedures::call(&mut x, calls, input),
            Mode::Client {
                tx,
                new_order,
                payment,
                order_status,
                delivery,
                stock_level,
            } => {
                let read_only = matches!(input, TxInput::OrderStatus(_) | TxInput::StockLevel(_));
                if let Some(b) = if read_only {
                    tx.begin_read
                } else {
                    tx.begin_write
                } {
                    x.run(b, &[])?;
                }
                self.in_tx = true;
                let ended = match input {
                    TxInput::NewOrder(i) => new_order::run(&mut x, new_order, i)?,
                    TxInput::Payment(i) => payment::run(&mut x, payment, i)?,
                    TxInput::OrderStatus(i) => order_status::run(&mut x, order_status, i)?,
                    TxInput::Delivery(i) => delivery::run(&mut x, delivery, tx, i)?.0,
                    TxInput::StockLevel(i) => stock_level::run(&mut x, stock_level, i)?,
                };
                let end = match ended {
                    Ended::Committed => tx.commit,
                    Ended::RolledBack => tx.rollback,
                };
                x.run(end, &[])?;
                self.in_tx = false;
                Ok(ended)
            }
        }
    }

    /// Rolls back what an error left open and tells the engine what to do.
    fn fail(&mut self, e: DbError, input: TxInput) -> EventError {
        let rollback = match &self.mode {
            Mode::Client { tx, .. } => self.in_tx.then_some(tx.rollback),
            // A procedure rolls back itself, except where a lock wait
            // timeout leaves its transaction open.
            Mode::Procedures { rollback, .. } => Some(*rollback),
        };
        self.in_tx = false;
        if let Some(r) = rollback
            && !matches!(e.kind, ErrorKind::ConnectionLost)
        {
            let _ = self.conn.run(r, &[]);
        }
        match e.kind {
            ErrorKind::Interrupted => EventError::Cancelled,
            ErrorKind::Timeout => EventError::TimedOut { code: e.code },
            ErrorKind::ConnectionLost => {
                self.pending = Some(input);
                EventError::ConnectionLost {
                    code: e.code,
                    message: e.message,
                }
            }
            _ if self.ignore.contains(&e.code) => {
                self.pending = Some(input);
                EventError::Ignorable { code: e.code }
            }
            _ => EventError::Fatal {
                message: format!(
                    "{} error {} in {}: {}",
                    self.conn.dialect_name(),
                    e.code,
                    input.kind().name(),
                    e.message
                ),
                code: e.code,
            },
        }
    }
}

/// A think time: negative exponential with mean `mean`, at most 10 means.
fn think(r: &mut TpccRand, mean: f64) -> f64 {
    let u = r.unit().max(1e-12);
    (-u.ln() * mean).min(10.0 * mean)
}

impl User for Terminal {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        let input = match self.pending.take() {
            Some(i) => i,
            None => {
                let kind = match self.next.take() {
                    Some(k) => k,
                    None => self.deck.draw(&mut self.inputs.r),
                };
                TxInput::generate(kind, &mut self.inputs)
            }
        };
        let kind = input.kind();
        tally.kind = kind as usize;
        match self.execute(&input, tally) {
            Ok(ended) => {
                tally.rolled_back = ended == Ended::RolledBack;
                self.last = Some(kind);
                Ok(Flow::Continue)
            }
            Err(e) => Err(self.fail(e, input)),
        }
    }

    fn pause(&mut self) -> Duration {
        if self.pending.is_some() || (self.cfg.keying == 0.0 && self.cfg.think == 0.0) {
            return Duration::ZERO;
        }
        let mut s = 0.0;
        if let Some(prev) = self.last.take()
            && self.cfg.think > 0.0
        {
            s += think(&mut self.inputs.r, prev.think_mean_s() * self.cfg.think);
        }
        let next = self.deck.draw(&mut self.inputs.r);
        self.next = Some(next);
        s += next.keying_s() * self.cfg.keying;
        Duration::from_secs_f64(s)
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.in_tx = false;
        self.conn.reconnect().map_err(|e| e.message)?;
        if matches!(self.mode, Mode::Client { .. })
            && let Some(sql) = session_setup(self.conn.dialect())
        {
            self.conn.execute(sql).map_err(|e| e.message)?;
        }
        Ok(())
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.conn.interrupter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(warehouses: i64) -> Gen {
        Gen {
            r: TpccRand::new(11),
            nu: NuConstants::for_run(11),
            warehouses,
            home: 1,
            district: 1,
            all_warehouses: false,
        }
    }

    #[test]
    fn homes_go_round_warehouses_then_districts() {
        assert_eq!(home_of(0, 2), (1, 1));
        assert_eq!(home_of(1, 2), (2, 1));
        assert_eq!(home_of(2, 2), (1, 2));
        assert_eq!(home_of(25, 1), (1, 6));
    }

    /// About 1% of New-Orders roll back, about 1% of their lines are
    /// remote, and 15% of Payments and 60% of customers by name.
    #[test]
    fn shares_of_rollbacks_remote_lines_and_names() {
        let mut g = inputs(4);
        let n = 200_000;
        let (mut rollbacks, mut lines, mut remote) = (0, 0, 0);
        for _ in 0..n {
            let i = new_order::Input::generate(&mut g);
            rollbacks += usize::from(i.rollback);
            assert_eq!(i.rollback, i.lines.last().unwrap().i_id == 100_001);
            assert!((5..=15).contains(&i.lines.len()));
            lines += i.lines.len();
            remote += i.lines.iter().filter(|l| l.supply_w_id != i.w_id).count();
            assert_eq!(i.all_local, i.lines.iter().all(|l| l.supply_w_id == 1));
        }
        let share = rollbacks as f64 / n as f64;
        assert!((0.009..0.011).contains(&share), "rollbacks {share}");
        let share = remote as f64 / lines as f64;
        assert!((0.009..0.011).contains(&share), "remote lines {share}");
        let (mut remote, mut by_name) = (0, 0);
        for _ in 0..n {
            let p = payment::Input::generate(&mut g);
            remote += usize::from(p.c_w_id != p.w_id);
            by_name += usize::from(matches!(p.customer, payment::Customer::ByName(_)));
            assert!((100..=500_000).contains(&p.amount));
        }
        let share = remote as f64 / n as f64;
        assert!((0.145..0.155).contains(&share), "remote payments {share}");
        let share = by_name as f64 / n as f64;
        assert!((0.595..0.605).contains(&share), "by name {share}");
    }

    #[test]
    fn one_warehouse_has_nothing_remote() {
        let mut g = inputs(1);
        for _ in 0..20_000 {
            let i = new_order::Input::generate(&mut g);
            assert!(i.all_local);
            let p = payment::Input::generate(&mut g);
            assert_eq!(p.c_w_id, 1);
            assert_eq!(p.c_d_id, p.d_id);
        }
    }

    #[test]
    fn other_warehouse_is_never_home() {
        let mut g = inputs(3);
        for _ in 0..10_000 {
            let o = g.other_warehouse(2);
            assert!(o == 1 || o == 3);
        }
    }

    #[test]
    fn think_times_are_capped() {
        let mut r = TpccRand::new(1);
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let t = think(&mut r, 12.0);
            assert!((0.0..=120.0).contains(&t));
            sum += t;
        }
        let mean = sum / 100_000.0;
        assert!((11.5..12.5).contains(&mean), "{mean}");
    }
}
