//! Fuzz target `body`: api::object::{decode_body, check_type_meta}.
//! The body, and the properties it checks, is `shardline::fuzzing::body`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::body(data));
