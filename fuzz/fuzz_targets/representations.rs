//! Fuzz target `representations`: api::cbor, api::yaml, api::protobuf_encode.
//! The body, and the properties it checks, is `shardline::fuzzing::representations`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::representations(data));
