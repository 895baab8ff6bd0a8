//! Fuzz target `continue_token`: list continue tokens and the list options table.
//! The body, and the properties it checks, is `shardline::fuzzing::continue_token`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::continue_token(data));
