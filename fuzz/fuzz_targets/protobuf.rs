//! Fuzz target `protobuf`: api::protobuf::{decode_envelope, decode_object}.
//! The body, and the properties it checks, is `shardline::fuzzing::protobuf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::protobuf(data));
