//! Fuzz target `custom_resource`: types::crd (definitions, status, served resources), types::crd_schema (pruning, validation).
//! The body, and the properties it checks, is `shardline::fuzzing::custom_resource`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::custom_resource(data));
