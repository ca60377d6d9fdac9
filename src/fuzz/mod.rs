//! Fuzzing campaigns: runs generated from a seed against a live target, each judged, a
//! failure confirmed by its replays, shrunk and written as a case (`engine`), and the
//! cargo-fuzz targets' bodies (`targets`). What a protocol gives the fuzzer is
//! `crate::fuzz_profile`, below the protocols; it is re-exported here, where users of the
//! library find it.

pub mod aim;
pub mod campaign_report;
pub mod case;
pub mod company;
mod config;
mod confirm;
pub mod coverage;
pub mod engine;
mod failure;
mod finding;
pub mod replays;
mod shrink;
pub mod targets;

pub use crate::fuzz_profile::*;
