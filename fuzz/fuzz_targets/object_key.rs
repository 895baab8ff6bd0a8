//! Fuzz target `object_key`: types::key::ObjectKey::decode.
//! The body, and the properties it checks, is `shardline::fuzzing::object_key`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::object_key(data));
