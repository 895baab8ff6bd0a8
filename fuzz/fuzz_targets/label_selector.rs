//! Fuzz target `label_selector`: types::selector::parse_label_selector, Selector::matches.
//! The body, and the properties it checks, is `shardline::fuzzing::label_selector`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::label_selector(data));
