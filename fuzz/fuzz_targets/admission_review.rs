//! Fuzz target `admission_review`: strategy::admission::webhook (answers, patches, denials, configurations, matchConditions).
//! The body, and the properties it checks, is `shardline::fuzzing::admission_review`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::admission_review(data));
