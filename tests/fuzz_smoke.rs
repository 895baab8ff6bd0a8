//! The fuzz targets' bodies (`shardline::fuzzing`) run without a fuzzer, so
//! `cargo test` (and CI) exercises every parser the way `scripts/fuzz.sh` does:
//! each target runs over its committed seed corpus (`fuzz/corpus/TARGET/`,
//! where fixed crash inputs also go), a list of hostile inputs shared by all
//! targets, and a fixed number of inputs mutated from those by a seeded
//! xorshift generator. Bounded by count, not by clock: every run is the same
//! run, and a failure prints the target, the case number and the input.
//!
//! It also checks that the fuzz crate and `fuzzing::TARGETS` agree, so a
//! target cannot be added on one side only.

use shardline::fuzzing::{Target, TARGETS};

#[path = "../fuzz/typed_clients.rs"]
mod typed_clients;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Mutated inputs per target. About 0.2 s per target in a debug build.
const MUTATED_CASES: usize = 4_000;
/// The generator's seed; change it to explore, keep it fixed in the tree.
const SEED: u64 = 0x5eed_f022_2026_0001;
/// The longest mutated input, in bytes.
const INPUT_BYTES_MAX: usize = 4_096;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn corpus(target: &Target) -> Vec<Vec<u8>> {
    let dir = fuzz_dir().join("corpus").join(target.name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("corpus entry").path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).expect("corpus file")).collect()
}

/// Inputs that have broken parsers before, in any project: empty, huge,
/// unbalanced, NUL, invalid UTF-8, multi-byte characters at cut points,
/// maximal varints and integers.
fn hostile() -> Vec<Vec<u8>> {
    let mut inputs: Vec<Vec<u8>> = [
        &b""[..],
        b"\x00",
        b"\xff",
        b"\xff\xfe\xfd",
        b",",
        b",,,",
        b"(",
        b")",
        b"((((((((((",
        b"))))",
        b"!",
        b"!=",
        b"==",
        b"=",
        b"\\",
        b"a\\",
        b"a in (",
        b"a notin ()",
        b" in ",
        b"/",
        b"//",
        b"/api/v1/namespaces//pods",
        b"%",
        b"%zz&=&&=%",
        b"limit=-9223372036854775808",
        b"limit=18446744073709551616",
        b"gracePeriodSeconds=-9223372036854775808",
        b";q=nan,*/*;q=NaN,a/b;q=inf,c/d;q=-1,e/f;q=1e39",
        b"k8s\x00",
        b"k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        b"k8s\x00\x12\xff\xff\xff\xff\x0f",
        b"k8s\x00\x0b",
        b"{",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        b"\x00\x00{\"metadata\":{}}",
        b"\x00\x00{\"metadata\":[]}",
        b"\x00\x00{\"metadata\":{\"resourceVersion\":1},\"kind\":7}",
        b"\x01{\"metadata\":{\"labels\":null}}",
        b"/registry/",
        b"/registry////",
        b"/registry/core/pods/ns/a/b",
        "é".as_bytes(),
        "aé-".as_bytes(),
        "-é-".as_bytes(),
        "\u{202e}\u{2028}\u{1}".as_bytes(),
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect();
    inputs.push(vec![b'a'; 70_000]);
    inputs.push("ǅ".repeat(400).into_bytes());
    inputs.push(b"a=b,".repeat(2_000));
    inputs.push(b"(".repeat(5_000));
    inputs
}

/// xorshift64*: tiny, fixed, and enough to drive mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that mean something to at least one of the parsers.
const TOKENS: &[&[u8]] = &[
    b"=",
    b"==",
    b"!=",
    b"!",
    b",",
    b"(",
    b")",
    b" in ",
    b" notin ",
    b"\\",
    b"/",
    b"&",
    b"%",
    b"%2C",
    b";",
    b";q=0",
    b"*/*",
    b"application/json",
    b";as=Table",
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"null",
    b"\x00",
    b"\x80",
    b"\xff",
    b"\x0a",
    b"\x12",
    b"\x1a",
    b"k8s\x00",
    "é".as_bytes(),
    b"namespaces",
    b"watch",
];

fn mutate(rng: &mut Rng, pool: &[Vec<u8>]) -> Vec<u8> {
    let mut input = pool[rng.below(pool.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] ^= 1 << rng.below(8);
            }
            1 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] = rng.next() as u8;
            }
            2 => {
                let end = (at + 1 + rng.below(8)).min(input.len());
                input.drain(at.min(end)..end);
            }
            3 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                input.splice(at..at, token.iter().copied());
            }
            4 => input.truncate(at),
            5 => {
                let other = &pool[rng.below(pool.len())];
                let from = rng.below(other.len() + 1);
                input.splice(at..at, other[from..].iter().copied());
            }
            _ => {
                let n = rng.below(16);
                let random: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                input.splice(at..at, random);
            }
        }
        input.truncate(INPUT_BYTES_MAX);
    }
    input
}

fn run_one(target: &Target, case: &str, input: &[u8], extra: &dyn Fn(&[u8])) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| {
        (target.run)(input);
        extra(input);
    })) {
        eprintln!(
            "fuzz_smoke: target {} failed on {case} (seed {SEED:#x}); input {:?}\n  replay: write these bytes to a file and run `cargo fuzz run {} FILE` in fuzz/",
            target.name,
            String::from_utf8_lossy(input),
            target.name
        );
        std::panic::resume_unwind(panic);
    }
}

fn smoke(name: &str) {
    smoke_with(name, &|_| {});
}

/// `smoke`, with one more check of each input after the target's own.
fn smoke_with(name: &str, extra: &dyn Fn(&[u8])) {
    let target = TARGETS.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no target {name}"));
    let seeds = corpus(target);
    assert!(seeds.len() >= 3, "{name}: the seed corpus has only {} inputs", seeds.len());
    for (i, input) in seeds.iter().enumerate() {
        run_one(target, &format!("corpus file #{i}"), input, extra);
    }
    let hostile = hostile();
    for (i, input) in hostile.iter().enumerate() {
        run_one(target, &format!("hostile input #{i}"), input, extra);
    }
    let pool: Vec<Vec<u8>> =
        seeds.into_iter().chain(hostile.into_iter().filter(|h| h.len() <= INPUT_BYTES_MAX)).collect();
    // A different stream per target, the same stream on every run.
    let mut rng = Rng(
        SEED ^ name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    );
    for case in 0..MUTATED_CASES {
        let input = mutate(&mut rng, &pool);
        run_one(target, &format!("mutated case #{case}"), &input, extra);
    }
}

#[test]
fn label_selector() {
    smoke("label_selector");
}

#[test]
fn field_selector() {
    smoke("field_selector");
}

#[test]
fn params() {
    smoke("params");
}

#[test]
fn route() {
    smoke("route");
}

#[test]
fn accept() {
    smoke("accept");
}

#[test]
fn protobuf() {
    smoke("protobuf");
}

#[test]
fn body() {
    smoke("body");
}

#[test]
fn object_key() {
    smoke("object_key");
}

#[test]
fn validation() {
    smoke("validation");
}

#[test]
fn encode_stored() {
    smoke("encode_stored");
}

#[test]
fn representations() {
    smoke("representations");
}

#[test]
fn continue_token() {
    smoke("continue_token");
}

#[test]
fn log_record() {
    smoke("log_record");
}

#[test]
fn patch() {
    smoke("patch");
}

#[test]
fn custom_resource() {
    smoke("custom_resource");
}

/// The typed layer never panics, is idempotent, and stores only what a typed
/// client (k8s-openapi's types) decodes.
#[test]
fn typed_layer() {
    smoke_with("typed_layer", &|input| {
        if let Some((info, object)) = shardline::fuzzing::typed_layer_accepted(input) {
            if let Err(e) = typed_clients::decode_typed(&info.api_version(), &info.kind, object.clone()) {
                panic!("the typed layer accepted a {} a typed client cannot decode: {e}\n{object}", info.kind);
            }
        }
    });
}

#[test]
fn fieldmanager() {
    smoke("fieldmanager");
}

#[test]
fn service_account_token() {
    smoke("service_account_token");
}

#[test]
fn admission_review() {
    smoke("admission_review");
}

/// Every target in `fuzzing::TARGETS` has a smoke test above, a target file
/// calling its body, a `[[bin]]` in `fuzz/Cargo.toml` and a corpus folder;
/// and the fuzz crate has no target that `TARGETS` lacks.
#[test]
fn fuzz_crate_matches_targets() {
    let this_file = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_smoke.rs")).unwrap();
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for t in TARGETS {
        let smoked = this_file.contains(&format!("smoke(\"{}\")", t.name))
            || this_file.contains(&format!("smoke_with(\"{}\"", t.name));
        assert!(smoked, "{}: no smoke test", t.name);
        let file = fuzz_dir().join("fuzz_targets").join(format!("{}.rs", t.name));
        let source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            source.contains(&format!("shardline::fuzzing::{}(data)", t.name)),
            "{} does not call its body",
            file.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"\npath = \"fuzz_targets/{}.rs\"", t.name, t.name)),
            "{}: no [[bin]]",
            t.name
        );
        assert!(fuzz_dir().join("corpus").join(t.name).is_dir(), "{}: no corpus folder", t.name);
    }
    for entry in std::fs::read_dir(fuzz_dir().join("fuzz_targets")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(TARGETS.iter().any(|t| t.name == stem), "fuzz/fuzz_targets/{stem}.rs is not in fuzzing::TARGETS");
    }
}

#[test]
fn credentials() {
    smoke("credentials");
}
