//! Fuzz target `credentials`: auth::authn::{TokenFile::parse, bearer_token, certificate_user}.
//! The body, and the properties it checks, is `shardline::fuzzing::credentials`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::credentials(data));
