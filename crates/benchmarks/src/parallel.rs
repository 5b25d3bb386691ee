//! Work spread over OS threads, one database connection each: the loaders
//! and the index builders. The drivers block, so each worker needs a
//! thread of its own to keep its statement in flight.

use dbmeter_db::{ConnectOptions, Connection, DbError};

/// Runs `work` on `workers` threads at once and returns their results in
/// worker order, or the first error. Worker 0 gets `first` (a connection
/// the caller already holds), the others open their own.
pub fn on_connections<T: Send>(
    opts: &ConnectOptions,
    workers: usize,
    first: Option<&mut Connection>,
    work: &(dyn Fn(usize, &mut Connection) -> Result<T, DbError> + Sync),
) -> Result<Vec<T>, DbError> {
    let workers = workers.max(1);
    let mut first = first;
    let results: Vec<Result<T, DbError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                let given = if i == 0 { first.take() } else { None };
                std::thread::Builder::new()
                    .name(format!("dbmeter-load-{i}"))
                    .spawn_scoped(s, move || match given {
                        Some(conn) => work(i, conn),
                        None => {
                            let mut conn = Connection::connect(opts)?;
                            work(i, &mut conn)
                        }
                    })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(DbError::other("thread", "a loader thread panicked"))),
                Err(e) => Err(DbError::other(
                    "thread",
                    format!("cannot start a loader thread: {e}"),
                )),
            })
            .collect()
    });
    results.into_iter().collect()
}
