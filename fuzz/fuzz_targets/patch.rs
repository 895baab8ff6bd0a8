//! Fuzz target `patch`: patch::apply and types::schema::unknown_fields.
//! The body, and the properties it checks, is `shardline::fuzzing::patch`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::patch(data));
