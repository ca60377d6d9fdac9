//! Declarative suites: the case model, the TOML loader, case filters and the runner.

mod arrival;
mod config;
mod connect;
mod copied;
pub mod filter;
mod link;
pub mod loader;
pub mod model;
mod opening;
mod outcome;
mod probe;
pub mod runner;
mod serving;
pub mod slots;
mod steps;
mod tokens;
mod verdicts;
pub mod vocabulary;
mod waits;
pub mod writer;

pub use loader::{load_bundled, load_bundled_client, load_path, SuiteError};
pub use model::{Case, Suite};
pub use serving::{client_address, relay_command};

/// The JSON Schema of a suite file, derived from the types the loader reads: an editor's TOML
/// language server given it completes and checks a suite as it is written.
pub fn file_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(model::SuiteFile).to_value();
    without_null(&mut schema);
    schema
}

/// `schema` without the null an optional field's schema allows: TOML has no null, an optional
/// key is left out.
fn without_null(schema: &mut serde_json::Value) {
    use serde_json::Value;
    let Value::Object(object) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(without_null);
        }
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(alternatives)) = object.get_mut("anyOf") {
        alternatives.retain(|a| a.get("type").is_none_or(|t| t != "null"));
        if let [only] = alternatives.as_slice() {
            let only = only.clone();
            object.remove("anyOf");
            if let Value::Object(only) = only {
                object.extend(only);
            }
        }
    }
    object.values_mut().for_each(without_null);
}
