//! Help pages, the man page and shell completions, all made from one
//! description of each command ([`Page`]) and the option tables the
//! parser uses (the general options, each benchmark's own, and each
//! page's [`Opt`]s), so that none of them can drift from what dbmeter
//! accepts.
//!
//! - `page.rs`: what a page is made of;
//! - `render.rs`: a page as text, wrapped to the terminal's width;
//! - `pages.rs`: every command's page, and `dbmeter help TOPIC`;
//! - `man.rs`: the man page (roff);
//! - `completions.rs`: bash, zsh and fish completion scripts;
//! - `sysbench.rs`: sysbench's own `--help` and `TEST help`, for `dbmeter sysbench`.

mod completions;
mod man;
mod page;
pub(crate) mod pages;
mod render;
pub mod sysbench;

pub use completions::completions;
pub use man::man_page;
pub use page::{Example, Opt, Page, Section, Sub, flag, opt};
pub use pages::{general_help, help_request, print_page, workload_help};
pub use render::width;
