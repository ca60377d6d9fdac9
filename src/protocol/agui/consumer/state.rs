//! The state a client should hold after a run, followed three ways from the same events: as
//! the spec has it (a snapshot replaces, a patch applies whole or not at all), as a client that
//! keeps a failing patch's first operations holds it, and as one that merges a snapshot into
//! what it had. The next input's state is read against all three, so a wrong value is named by
//! the rule it breaks (AGUI-CLI-011, -012, -013).

use super::super::patches::{apply, apply_partial};
use crate::matcher::same_json;
use serde_json::Value;

/// One thread's state along the three readings.
#[derive(Debug, Clone, Default)]
pub struct Followed {
    /// What the spec makes of the events.
    pub agreed: Value,
    /// What a client holds that keeps the operations of a failing patch before the failure.
    pub partial: Value,
    /// What a client holds that merges a snapshot into its prior object.
    pub merged: Value,
    /// A state event came since the input: the next input's state is judged.
    pub touched: bool,
}

/// How the next input's state reads against what was followed.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// What the events left behind, or nothing to judge.
    Agreed,
    /// The first operations of a patch that failed were kept.
    Partial,
    /// A snapshot was merged into the prior state.
    Merged,
    /// Something else.
    Other,
}

impl Followed {
    /// The state an input starts its run from (its reading makes an absent one the empty
    /// object).
    pub fn starting(state: Value) -> Followed {
        Followed {
            agreed: state.clone(),
            partial: state.clone(),
            merged: state,
            touched: false,
        }
    }

    /// A STATE_SNAPSHOT of the run.
    pub fn snapshot(&mut self, snapshot: &Value) {
        self.touched = true;
        self.agreed = snapshot.clone();
        self.partial = snapshot.clone();
        match (&mut self.merged, snapshot) {
            (Value::Object(had), Value::Object(new)) => {
                for (k, v) in new {
                    had.insert(k.clone(), v.clone());
                }
            }
            (merged, _) => *merged = snapshot.clone(),
        }
    }

    /// A STATE_DELTA of the run.
    pub fn delta(&mut self, delta: &Value) {
        self.touched = true;
        // A failing patch leaves the value as it was (json_patch undoes what it applied).
        let _ = apply(&mut self.agreed, delta);
        let _ = apply(&mut self.merged, delta);
        apply_partial(&mut self.partial, delta);
    }

    /// Whether the next input's state is judged: a state event came, and left a value that can
    /// travel back (a null snapshot cannot: an input's state is never null).
    pub fn judged(&self) -> bool {
        self.touched && !self.agreed.is_null()
    }

    /// A client that keeps a failing patch's first operations would hold another value than
    /// the spec's: the next state can tell whether this client is one.
    pub fn partial_differs(&self) -> bool {
        !same_json(&self.partial, &self.agreed)
    }

    /// A client that merges a snapshot would hold another value than the spec's.
    pub fn merged_differs(&self) -> bool {
        !same_json(&self.merged, &self.agreed)
    }

    /// How `sent` (the next input's state; absent is the empty object) reads.
    pub fn read(&self, sent: Option<&Value>) -> Reading {
        let empty = Value::Object(Default::default());
        let sent = sent.unwrap_or(&empty);
        // Numbers by value: a JavaScript client writes a state's `2.0` back as `2`.
        if !self.judged() || same_json(sent, &self.agreed) {
            Reading::Agreed
        } else if same_json(sent, &self.partial) {
            Reading::Partial
        } else if same_json(sent, &self.merged) {
            Reading::Merged
        } else {
            Reading::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_reading_names_the_value_a_client_of_that_kind_holds() {
        let mut f = Followed::starting(json!({"a": 1}));
        f.snapshot(&json!({"b": 2}));
        assert_eq!(f.read(Some(&json!({"b": 2}))), Reading::Agreed);
        assert_eq!(f.read(Some(&json!({"a": 1, "b": 2}))), Reading::Merged);
        // Add c, then a test that fails: nothing of the patch stays.
        f.delta(&json!([{"op": "add", "path": "/c", "value": 3},
            {"op": "test", "path": "/b", "value": 99}]));
        assert_eq!(f.read(Some(&json!({"b": 2}))), Reading::Agreed);
        assert_eq!(f.read(Some(&json!({"b": 2, "c": 3}))), Reading::Partial);
        // An unrecognised operation is dropped and the rest applies.
        f.delta(&json!([{"op": "frobnicate", "path": "/x"},
            {"op": "add", "path": "/d", "value": 4}]));
        assert_eq!(f.read(Some(&json!({"b": 2, "d": 4}))), Reading::Agreed);
        assert_eq!(f.read(None), Reading::Other);
        // Without a state event, nothing is judged.
        assert_eq!(
            Followed::starting(json!({})).read(Some(&json!({"z": 1}))),
            Reading::Agreed
        );
    }

    #[test]
    fn a_number_carried_back_is_read_by_its_value() {
        let mut f = Followed::starting(json!({}));
        f.snapshot(&json!({"n": 2.0, "list": [1.5, 3]}));
        assert_eq!(
            f.read(Some(&json!({"n": 2, "list": [1.5, 3.0]}))),
            Reading::Agreed
        );
        assert_eq!(
            f.read(Some(&json!({"n": 2.5, "list": [1.5, 3]}))),
            Reading::Other
        );
    }
}
