//! Every cargo-fuzz target's body runs over every corpus and seed file, whole, cut short at a
//! few points, and with bytes flipped: the deterministic part of what `scripts/fuzz-smoke.sh`
//! does with libFuzzer, so a target that panics on known input fails `cargo test`.

use std::path::Path;
use wireprobe::fuzz::targets::ALL;

/// The input itself, a few prefixes, and copies with one byte flipped.
fn variations(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![data.to_vec()];
    for cut in [
        1,
        2,
        data.len() / 3,
        data.len() / 2,
        data.len().saturating_sub(1),
    ] {
        out.push(data[..cut.min(data.len())].to_vec());
    }
    for at in [
        0,
        data.len() / 4,
        data.len() / 2,
        data.len().saturating_sub(2),
    ] {
        if let Some(b) = data.get(at) {
            let mut flipped = data.to_vec();
            flipped[at] = b ^ 0x5a;
            out.push(flipped);
        }
    }
    out
}

#[test]
fn every_target_survives_the_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = Vec::new();
    inputs.extend(crate::common::files_under(&root.join("corpus"), ""));
    inputs.extend(crate::common::files_under(&root.join("fuzz/seeds"), ""));
    assert!(inputs.len() > 50, "the corpus is there");
    for path in &inputs {
        let data = std::fs::read(path).expect("corpus file");
        for input in variations(&data) {
            for (name, target) in ALL {
                let caught = std::panic::catch_unwind(|| target(&input));
                assert!(
                    caught.is_ok(),
                    "{name} panicked on {} ({} bytes)",
                    path.display(),
                    input.len()
                );
            }
        }
    }
}
