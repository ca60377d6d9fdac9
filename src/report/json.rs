//! The JSON report (schema in ARCHITECTURE.md; keep it stable).

use super::Report;

pub fn render(report: &Report) -> String {
    let mut text =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}
