//! Fuzz target `encode_stored`: cache::encode_stored.
//! The body, and the properties it checks, is `shardline::fuzzing::encode_stored`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::encode_stored(data));
