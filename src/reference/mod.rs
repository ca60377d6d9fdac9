//! Reference targets.
