//! Legal-but-different behaviours of the reference target (`--variant NAME`): each one does
//! something the spec allows that the default does not, so the suite is shown to judge the
//! protocol's structure rather than this implementation's habits.

use crate::reference::Variant;

pub static VARIANTS: &[Variant] = &[];
