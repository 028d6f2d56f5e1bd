//! `porep-2k params`: generates the Groth16 parameters of the 2 KiB PoRep
//! circuit once (about 10 minutes and 5 GiB on 2 cores; a 1.1 GB file) into
//! the cache directory (`$SUPRASEAL_C2_FIL_PARAMS`, default
//! `~/.cache/supraseal-c2/filecoin-params`). It writes into a staging folder
//! and renames the finished files into place, so an interrupted run leaves
//! nothing half-written behind. Build it WITHOUT the `supraseal` feature.
//!
//! `porep-2k c2`: seals a 2 KiB sector and times `seal_commit_phase2` with the
//! prover of this build (without `supraseal`: bellperson's own CPU prover),
//! twice (cold: params loaded; warm: params cached in memory), and verifies.

use anyhow::{bail, ensure, Context, Result};
use porep_2k::*;

fn params() -> Result<()> {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir)?;
    // Where the files end up (the path layout does not depend on the dir).
    use_cache_dir(&dir)?;
    let config = porep_config();
    let (params, vk) = param_paths(&config)?;
    if params.exists() && vk.exists() {
        println!("params already present: {}", params.display());
        return Ok(());
    }
    if cfg!(feature = "supraseal") {
        bail!("build `porep-2k params` without the `supraseal` feature");
    }
    let staging = dir.join(format!(".staging-{}", std::process::id()));
    std::fs::create_dir_all(&staging)?;
    // filecoin-proofs reads the cache location once, on first use: point it at
    // the staging folder before anything is generated there.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &staging);
    let t = std::time::Instant::now();
    println!("generating Groth16 params for the 2 KiB PoRep circuit into {} ...", staging.display());
    let (sp, svk) = generate_params(&config, &mut rand::rngs::OsRng)?;
    let secs = t.elapsed().as_secs_f64();
    let f = facts(&config)?;
    println!("facts: {f}");
    println!("RESULT param_gen_secs={secs:.1}");
    std::fs::rename(&svk, &vk).with_context(|| format!("moving {} to {}", svk.display(), vk.display()))?;
    std::fs::rename(&sp, &params).with_context(|| format!("moving {} to {}", sp.display(), params.display()))?;
    std::fs::remove_dir_all(&staging).ok();
    println!("wrote {} and {}", params.display(), vk.display());
    Ok(())
}

fn c2() -> Result<()> {
    let dir = cache_dir();
    use_cache_dir(&dir)?;
    let config = porep_config();
    let (params, vk) = param_paths(&config)?;
    ensure!(params.exists() && vk.exists(), "{} missing: run `porep-2k params` first", params.display());
    let prover = if cfg!(feature = "supraseal") { "supraseal-c2 (this repo)" } else { "bellperson 0.27 CPU" };
    println!("machine: {}", machine());
    println!("facts: {}", facts(&config)?);
    let sealed = seal_to_c1(&config, &mut rand::thread_rng())?;
    println!("add_piece + PC1 + PC2 + C1: {:.3} s", sealed.seal_secs);
    let (proof, cold) = sealed.c2()?;
    let (proof2, warm) = sealed.c2()?;
    ensure!(sealed.verify(sealed.seed, &proof)?, "verify_seal false for the first proof");
    ensure!(sealed.verify(sealed.seed, &proof2)?, "verify_seal false for the second proof");
    println!("verify_seal: true (both proofs, {} bytes each)", proof.len());
    println!("C2 {prover}: cold {:.1} s (includes loading params), warm {:.1} s", cold.as_secs_f64(), warm.as_secs_f64());
    let tag = if cfg!(feature = "supraseal") { "ours" } else { "bellperson" };
    println!("RESULT c2_{tag}_cold_secs={:.1} c2_{tag}_warm_secs={:.1}", cold.as_secs_f64(), warm.as_secs_f64());
    Ok(())
}

/// `porep-2k value-mix`: the share of aux values that are 0, 1 or other in
/// each MSM of a real 2 KiB PoRep C2 partition (needs no Groth16 params).
fn value_mix() -> Result<()> {
    use_cache_dir(&cache_dir())?;
    let config = porep_config();
    println!("machine: {}", machine());
    for (k, m) in porep_2k::value_mix(&config, &mut rand::thread_rng())?.iter().enumerate() {
        println!(
            "partition {k}: constraints {} (input constraints included), inputs {}, aux {}, popcounts A-aux {} B-input {} B-aux {}",
            m.constraints, m.inputs, m.aux, m.a_aux_popcount, m.b_inp_popcount, m.b_aux_popcount
        );
        println!("  L (all aux):      {}", m.l);
        println!("  A (aux, A-dense): {}", m.a_aux);
        println!("  B (aux, B-dense): {}", m.b_aux);
    }
    Ok(())
}

fn main() -> Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("params") => params(),
        Some("c2") => c2(),
        Some("value-mix") => value_mix(),
        _ => bail!("usage: porep-2k params | c2 | value-mix"),
    }
}
