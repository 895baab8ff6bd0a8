//! Fuzz target `accept`: api::negotiate::{parse_accept, for_objects, for_discovery}.
//! The body, and the properties it checks, is `shardline::fuzzing::accept`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::accept(data));
