//! Fuzz target `params`: api::params::Params::parse.
//! The body, and the properties it checks, is `shardline::fuzzing::params`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::params(data));
