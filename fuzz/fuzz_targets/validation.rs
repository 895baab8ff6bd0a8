//! Fuzz target `validation`: types::validation name, label and annotation validators.
//! The body, and the properties it checks, is `shardline::fuzzing::validation`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::validation(data));
