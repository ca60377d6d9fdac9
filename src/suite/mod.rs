//! Declarative suites: the case model, the TOML loader, case filters and the runner.

mod copied;
pub mod describe;
pub mod filter;
mod link;
pub mod loader;
pub mod model;
mod probe;
pub mod runner;
mod steps;
mod tokens;
mod verdicts;
mod waits;
pub mod writer;

pub use loader::{load_bundled, load_path, SuiteError};
pub use model::{Case, Suite};
