//! Fuzz target `service_account_token`: auth::serviceaccount (verify, sign, from_pem),
//! handlers::review::protobuf_{eviction,token_request}.
//! The body, and the properties it checks, is `shardline::fuzzing::service_account_token`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shardline::fuzzing::service_account_token(data));
