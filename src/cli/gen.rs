//! `wireprobe gen`: generated events as NDJSON.

use super::target;
use super::{protocol_named, EXIT_OK};
use anyhow::{anyhow, Result};

/// `wireprobe gen`: generated events as NDJSON on stdout, reproducible from the seed (which is
/// printed to stderr when it was not given).
pub(super) fn gen(
    id: &str,
    kind: Option<&str>,
    count: Option<u64>,
    seed: Option<u64>,
    role: Option<&str>,
) -> Result<u8> {
    use wireprobe::fuzz::gen::{self as generate, Kind};
    let p = protocol_named(id)?;
    let role = target::chosen_role(p, role)?;
    let profile = p
        .fuzzing_as(role.as_deref())
        .ok_or_else(|| anyhow!("{} has no generators yet", p.id()))?;
    let count = usize::try_from(count.unwrap_or(10))
        .ok()
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| anyhow!("--count is at most 1000000"))?;
    let seed = seed.unwrap_or_else(|| {
        let seed = uuid::Uuid::new_v4().as_u64_pair().0;
        eprintln!("wireprobe: --seed {seed}");
        seed
    });
    match Kind::parse(kind.unwrap_or("valid")) {
        Kind::Valid => {
            for event in generate::valid(profile, count, seed)? {
                say!("{event}");
            }
        }
        Kind::Invalid => {
            for m in generate::invalid(profile, None, count, seed)? {
                say!("{}", generate::render(&m));
            }
        }
        Kind::Mutator(name) => {
            for m in generate::invalid(profile, Some(&name), count, seed)? {
                say!("{}", generate::render(&m));
            }
        }
    }
    Ok(EXIT_OK)
}
