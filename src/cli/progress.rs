//! A progress bar on stderr when stderr is a terminal, hidden otherwise (CI logs get plain
//! lines only). `run` and `fuzz` share it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar over `len` items called `unit` (a spinner when `len` is unknown).
pub fn bar(len: Option<u64>, unit: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (bar, template) = match len {
        Some(len) => (
            ProgressBar::new(len),
            format!("  {{bar:30}} {{pos}}/{{len}} {unit}  {{msg}}"),
        ),
        None => (
            ProgressBar::new_spinner(),
            format!("  {{spinner}} {{pos}} {unit}  {{msg}}"),
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}
