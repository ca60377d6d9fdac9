//! wireprobe: conformance suites and fuzzing for agent<->UI event protocols.
//!
//! The crate is layered as `../shared/ARCHITECTURE.md` describes: [`transport`] moves frames,
//! [`protocol`] knows each spec's rules, [`suite`] runs declarative cases through the
//! [`protocol::Protocol`] trait, [`report`] renders the results, and [`reference`] holds a
//! correct target for every protocol with named faults.

pub mod auth;
pub mod check;
pub mod citation;
pub mod fuzz;
pub mod fuzz_profile;
pub mod judge;
pub mod matcher;
pub mod ndjson;
pub mod protocol;
pub mod proxy;
pub mod reference;
pub mod report;
pub mod results;
pub mod rules;
pub mod shard;
pub mod show;
pub mod suite;
pub mod transcript;
pub mod transport;
pub mod verdict;
pub mod workers;

/// The version written into every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
