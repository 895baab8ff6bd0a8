//! Fuzz target `field_selector`: types::selector::parse_field_selector, Selector::matches.
//! The body, and the properties it checks, is `shardline::fuzzing::field_selector`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::field_selector(data));
