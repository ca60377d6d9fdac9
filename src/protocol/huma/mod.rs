//! HUMA Event Protocol v0.2.0 (`000_9be7860959b3b922.txt`): wireprobe plays the client
//! application; the target is a HUMA server reached over Socket.IO.
//!
//! In progress (issue 3): the rule catalogue and the event validator are here; the client
//! session, lifecycle checker, reference target and suite follow, and the profile is registered
//! in [`crate::protocol::all`] once they are.

pub mod rules;
pub mod validate;

/// The spec file every HUMA rule cites.
pub const SPEC_FILE: &str = "000_9be7860959b3b922.txt";
