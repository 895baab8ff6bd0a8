//! Fuzz target `route`: api::route::parse.
//! The body, and the properties it checks, is `shardline::fuzzing::route`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::route(data));
