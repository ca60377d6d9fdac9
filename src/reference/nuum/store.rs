//! The reference agent's database: one SQLite file holds the agent's identity, so the same
//! database gives the same `session_id` on every start ("one database = one agent identity").

use rusqlite::{Connection, OptionalExtension};
use std::path::Path;

/// Why the database could not give a session id.
#[derive(Debug, thiserror::Error)]
#[error("database {path}: {source}")]
pub struct StoreError {
    path: String,
    source: rusqlite::Error,
}

/// The stable session id stored in `path` (created on first use), or a fresh one kept in
/// memory when no path is given.
pub fn session_id(path: Option<&Path>) -> Result<String, StoreError> {
    let shown = path.map_or(":memory:".to_owned(), |p| p.display().to_string());
    let wrap = |source| StoreError {
        path: shown.clone(),
        source,
    };
    let conn = match path {
        Some(p) => Connection::open(p),
        None => Connection::open_in_memory(),
    }
    .map_err(wrap)?;
    // Cases run in parallel may share a database when the command names no {tmp}.
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(wrap)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS agent (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    )
    .map_err(wrap)?;
    let fresh = fresh_session_id();
    conn.execute(
        "INSERT OR IGNORE INTO agent (key, value) VALUES ('session_id', ?1)",
        [&fresh],
    )
    .map_err(wrap)?;
    let stored: Option<String> = conn
        .query_row(
            "SELECT value FROM agent WHERE key = 'session_id'",
            [],
            |row| row.get(0),
        )
        .optional()
        .map_err(wrap)?;
    Ok(stored.unwrap_or(fresh))
}

/// A new session id in Nuum's style (`nuum_` and 26 characters).
pub fn fresh_session_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string().to_uppercase();
    format!("nuum_{}", &hex[..26])
}
