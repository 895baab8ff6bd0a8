//! Small helpers over JSON objects that the core defaults and rules share:
//! "set when unset" in the three senses Go's defaulters use (a nil pointer,
//! an empty string, a zero number), and safe descent into nested objects and
//! lists. Invariant: none of them panics, whatever shape the input has; a
//! field of the wrong JSON type is left alone (decoding refuses it first).

use crate::strategy::Object;
use serde_json::Value;

/// The object at `key`, if it is one.
pub fn object_mut<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    object.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `key`, created empty when absent or null.
pub fn object_entry<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    if object.get(key).is_none_or(Value::is_null) {
        object.insert(key.into(), Value::Object(Object::new()));
    }
    object_mut(object, key)
}

/// Every object in the list at `key` (non-objects skipped).
pub fn each_mut<'a>(object: &'a mut Object, key: &str) -> impl Iterator<Item = &'a mut Object> {
    object.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

/// The string at `key` ("" when absent or not a string).
pub fn str_of<'a>(object: &'a Object, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A pointer field (`*T` in Go): set when absent or null.
pub fn default_ptr(object: &mut Object, key: &str, value: Value) {
    if object.get(key).is_none_or(Value::is_null) {
        object.insert(key.into(), value);
    }
}

/// A string field (`string` in Go, `if x == ""`): set when absent, null or
/// empty.
pub fn default_str(object: &mut Object, key: &str, value: &str) {
    if object.get(key).is_none_or(|v| v.is_null() || v.as_str() == Some("")) {
        object.insert(key.into(), Value::String(value.into()));
    }
}

/// A number field (`int32` in Go, `if x == 0`): set when absent, null or 0.
pub fn default_int(object: &mut Object, key: &str, value: i64) {
    if object.get(key).is_none_or(|v| v.is_null() || v.as_i64() == Some(0)) {
        object.insert(key.into(), Value::from(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn defaults_follow_go_zero_values() {
        let mut o = object(json!({"a": "", "b": 0, "c": null, "d": "x", "e": 0}));
        default_str(&mut o, "a", "A");
        default_int(&mut o, "b", 5);
        default_ptr(&mut o, "c", json!(true));
        default_str(&mut o, "d", "D");
        // A pointer that is set, even to zero, is kept.
        default_ptr(&mut o, "e", json!(7));
        assert_eq!(Value::Object(o), json!({"a": "A", "b": 5, "c": true, "d": "x", "e": 0}));
    }

    #[test]
    fn wrong_shapes_are_left_alone() {
        let mut o = object(json!({"list": "not a list", "obj": 3}));
        assert_eq!(each_mut(&mut o, "list").count(), 0);
        assert!(object_mut(&mut o, "obj").is_none());
        assert!(object_entry(&mut o, "obj").is_none());
        assert!(object_entry(&mut o, "new").is_some());
        assert_eq!(o.get("new"), Some(&json!({})));
    }
}
