//! The HTTP side: a blocking server (`tiny_http`) on a thread of its
//! own that answers `GET /metrics` with the exposition text. It polls
//! for requests with a short timeout so that it notices when it is to
//! stop; a scrape waits for nothing but the state's lock.

use crate::BindError;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use tiny_http::{Header, Method, Response};

/// Prometheus' text format, version 0.0.4.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often the serving thread looks whether it is to stop.
const POLL: Duration = Duration::from_millis(100);

pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `addr` and answers scrapes with what `render` makes.
    pub fn start(
        addr: SocketAddr,
        render: impl Fn() -> String + Send + 'static,
    ) -> Result<Server, BindError> {
        let http = tiny_http::Server::http(addr)
            .map_err(|e| BindError(format!("cannot listen on {addr}: {e}")))?;
        let bound = http.server_addr().to_ip().unwrap_or(addr);
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("prometheus".into())
            .spawn(move || serve(&http, &stopping, &render))
            .map_err(|e| BindError(format!("cannot start the metrics thread: {e}")))?;
        Ok(Server {
            addr: bound,
            stop,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn serve(http: &tiny_http::Server, stop: &AtomicBool, render: &dyn Fn() -> String) {
    while !stop.load(Ordering::Relaxed) {
        let request = match http.recv_timeout(POLL) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => break,
        };
        let path = request.url().split('?').next().unwrap_or("");
        let get = matches!(request.method(), Method::Get | Method::Head);
        let response = match (get, path) {
            (true, "/metrics") => {
                let mut r = Response::from_string(render());
                if let Some(h) = header("Content-Type", CONTENT_TYPE) {
                    r = r.with_header(h);
                }
                r
            }
            (true, "/") => Response::from_string(
                "dbmeter: the metrics are at /metrics (Prometheus' text format)\n",
            ),
            (true, _) => Response::from_string("not found: the metrics are at /metrics\n")
                .with_status_code(404),
            (false, _) => {
                Response::from_string("only GET /metrics is served\n").with_status_code(405)
            }
        };
        // A scraper that went away is no concern of the run.
        let _ = request.respond(response);
    }
}
