//! Fuzz target `fieldmanager`: FieldsV1 decoding, managedFields recording and server-side apply.
//! The body, and the properties it checks, is `shardline::fuzzing::fieldmanager`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::fieldmanager(data));
