//! Defaults of the kinds of the smaller groups (coordination, networking,
//! policy, storage, scheduling, discovery, events, autoscaling, ...).

use crate::strategy::Object;

pub fn apply(_group: &str, _kind: &str, _object: &mut Object) {}
