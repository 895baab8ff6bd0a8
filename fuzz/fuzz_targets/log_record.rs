//! Fuzz target `log_record`: the log's segment and snapshot decoders.
//! The body, and the properties it checks, is `shardline::fuzzing::log_record`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::log_record(data));
