//! `wireprobe proxy`: traffic between a real client and a real server, forwarded unchanged
//! and judged on both sides by the protocol's whole checker (issue 23). This layer sits beside
//! the runner: it knows no protocol detail, only the [`crate::protocol::Protocol`] trait.

pub mod session;

pub use session::{Live, ProxySession};
