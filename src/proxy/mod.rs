//! `wireprobe proxy`: traffic between a real client and a real server, forwarded unchanged
//! and judged on both sides by the protocol's whole checker (issue 23). This layer sits beside
//! the runner: it knows no protocol detail, only the [`crate::protocol::Protocol`] trait.

pub mod network;
pub mod session;
pub mod sessions;
pub mod stdio;

pub use network::{carry, Carried, Plan};
pub use session::{Live, ProxySession};
pub use sessions::Sessions;
pub use stdio::{stand_in, Host, StoodIn};
