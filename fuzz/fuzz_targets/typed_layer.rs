//! Fuzz target `typed_layer`: strategy::{decode_and_default, create, update, finish}.
//! The body is `shardline::fuzzing::typed_layer`; in addition, whatever the
//! layer accepts must decode into the k8s-openapi type a typed client uses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    shardline::fuzzing::typed_layer(data);
    if let Some((info, object)) = shardline::fuzzing::typed_layer_accepted(data) {
        if let Err(e) = shardline_fuzz::decode_typed(&info.api_version(), &info.kind, object.clone()) {
            panic!("the typed layer accepted a {} a typed client cannot decode: {e}\n{object}", info.kind);
        }
    }
});
