//! create_SRS rejects every malformed params file with the right code and a
//! message naming the file, the section and the byte offset; the cache
//! shares, evicts and bounds its entries.

mod common;

use std::path::{Path, PathBuf};

use blstrs::{Fp, G1Affine};
use ff::Field;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{AbiError, Params};

const EINVAL: i32 = libc::EINVAL;

fn valid_file() -> Vec<u8> {
    std::fs::read(common::keys(Kind::Mimc, 8).path).unwrap()
}

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("srs-errors");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn open_err(path: &Path) -> AbiError {
    match Params::open(path, false) {
        Ok(_) => panic!("{} should be rejected", path.display()),
        Err(e) => e,
    }
}

#[track_caller]
fn expect(e: AbiError, code: i32, needles: &[&str]) {
    assert_eq!(e.code, code, "{}", e.message);
    for n in needles {
        assert!(e.message.contains(n), "message {:?} should contain {n:?}", e.message);
    }
}

/// Byte offsets of each section of a params file: (name, offset of its
/// first byte, offset of its first point).
fn layout(bytes: &[u8]) -> Vec<(&'static str, usize, usize)> {
    let mut out = vec![];
    let mut pos = 0;
    for (name, len) in [("alpha_g1", 96), ("beta_g1", 96), ("beta_g2", 192), ("gamma_g2", 192), ("delta_g1", 96), ("delta_g2", 192)] {
        out.push((name, pos, pos));
        pos += len;
    }
    for (name, len) in [("ic", 96), ("h", 96), ("l", 96), ("a", 96), ("b_g1", 96), ("b_g2", 192)] {
        let count = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        out.push((name, pos, pos + 4));
        pos += 4 + count * len;
    }
    assert_eq!(pos, bytes.len());
    out
}

#[test]
fn missing_file_is_enoent_and_names_the_path() {
    let e = open_err(Path::new("/nonexistent/dir/x.params"));
    expect(e, libc::ENOENT, &["/nonexistent/dir/x.params"]);
}

#[test]
fn directory_and_empty_file_are_rejected() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let e = open_err(&dir);
    assert_ne!(e.code, 0);
    assert!(e.message.contains(&*dir.to_string_lossy()), "{}", e.message);
    expect(open_err(&scratch("empty.params", &[])), EINVAL, &["empty"]);
}

#[test]
fn a_file_of_another_kind_is_not_a_params_file() {
    // A text file (such as /etc/passwd), longer and shorter than the first point.
    let text = "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1:bin:/bin:/usr/sbin/nologin\n".repeat(30);
    for (name, bytes) in [("passwd", text.as_bytes()), ("short.txt", &b"hello\n"[..])] {
        let path = scratch(name, bytes);
        let e = open_err(&path);
        expect(e.clone(), EINVAL, &["not a params file", "section alpha_g1 at byte offset 0"]);
        assert!(e.message.starts_with(&format!("create_SRS: {}: not a params file", path.display())), "{}", e.message);
        assert_eq!(e.message.matches(&*path.to_string_lossy()).count(), 1, "the path once: {}", e.message);
    }
}

#[test]
fn truncation_inside_every_section_is_rejected_with_its_name() {
    let bytes = valid_file();
    for (name, start, points) in layout(&bytes) {
        // Inside the count (vectors) or inside the first point.
        let cut = if points > start { start + 2 } else { start + 50 };
        let p = scratch(&format!("cut-{name}.params"), &bytes[..cut]);
        expect(open_err(&p), EINVAL, &[&format!("section {name} at byte offset"), "truncated", "cut-"]);
        // Inside the points of a vector section.
        if points > start {
            let p = scratch(&format!("cutpts-{name}.params"), &bytes[..points + 10]);
            let e = open_err(&p);
            assert_eq!(e.code, EINVAL);
            assert!(e.message.contains(&format!("section {name}")), "{}", e.message);
        }
    }
}

#[test]
fn a_count_that_overflows_the_file_is_rejected_before_allocating() {
    let mut bytes = valid_file();
    let (_, h_at, _) = layout(&bytes).into_iter().find(|s| s.0 == "h").unwrap();
    bytes[h_at..h_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = open_err(&scratch("huge-count.params", &bytes));
    expect(e, EINVAL, &["section h", &format!("byte offset {h_at}"), "count 4294967295"]);
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut bytes = valid_file();
    bytes.extend_from_slice(&[0; 7]);
    expect(open_err(&scratch("trailing.params", &bytes)), EINVAL, &["7 unexpected trailing bytes"]);
}

#[test]
fn point_off_the_curve_is_rejected_with_its_offset() {
    let mut bytes = valid_file();
    let (_, _, l_at) = layout(&bytes).into_iter().find(|s| s.0 == "l").unwrap();
    let at = l_at + 96; // point 1 of l
    bytes[at + 95] ^= 1; // last byte of y
    let e = open_err(&scratch("offcurve.params", &bytes));
    expect(e, EINVAL, &["section l", &format!("byte offset {at}"), "point 1", "not on the curve"]);
}

#[test]
fn point_outside_the_subgroup_is_rejected() {
    // A point on y² = x³ + 4 that is (with overwhelming probability) not in G1.
    let mut rng = common::rng();
    let (x, y) = loop {
        let x = Fp::random(&mut rng);
        let rhs = x.square() * x + Fp::from(4u64);
        if let Some(y) = Option::<Fp>::from(rhs.sqrt()) {
            break (x, y);
        }
    };
    let p = G1Affine::from_raw_unchecked(x, y, false);
    assert!(bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()));
    let mut enc = [0u8; 96];
    enc[..48].copy_from_slice(&x.to_bytes_be());
    enc[48..].copy_from_slice(&y.to_bytes_be());
    let mut bytes = valid_file();
    let (_, _, a_at) = layout(&bytes).into_iter().find(|s| s.0 == "a").unwrap();
    bytes[a_at..a_at + 96].copy_from_slice(&enc);
    let e = open_err(&scratch("subgroup.params", &bytes));
    expect(e, EINVAL, &["section a", &format!("byte offset {a_at}"), "not in the prime-order subgroup"]);
}

#[test]
fn wrong_encoding_flags_are_rejected() {
    let mut bytes = valid_file();
    bytes[96] |= 0x80; // compression flag on beta_g1's uncompressed encoding
    expect(open_err(&scratch("flags.params", &bytes)), EINVAL, &["section beta_g1 at byte offset 96", "bad encoding"]);
    let mut inf = valid_file();
    inf[0] = 0x40; // infinity flag with non-zero coordinates
    expect(open_err(&scratch("infflag.params", &inf)), EINVAL, &["section alpha_g1 at byte offset 0", "bad encoding"]);
}

#[test]
fn cache_shares_evicts_and_keeps_at_most_four_entries() {
    let bytes = valid_file();
    let paths: Vec<PathBuf> = (0..5).map(|i| scratch(&format!("cache-{i}.params"), &bytes)).collect();
    let a = Params::open(&paths[0], true).unwrap();
    let b = Params::open(&paths[0], true).unwrap();
    let ptr = |p: &Params| unsafe { (*p.raw()).ptr };
    assert_eq!(ptr(&a), ptr(&b), "cache = true shares one key per path");
    let fresh = Params::open(&paths[0], false).unwrap();
    assert_ne!(ptr(&a), ptr(&fresh), "cache = false always loads");

    a.evict();
    let c = Params::open(&paths[0], true).unwrap();
    assert_ne!(ptr(&a), ptr(&c), "after evict_SRS the path is loaded again");
    let cloned = c.clone();
    assert_eq!(ptr(&cloned), ptr(&c));
    drop(a);
    drop(b);

    // Four more paths push paths[0] out of the LRU.
    let others: Vec<Params> = paths[1..].iter().map(|p| Params::open(p, true).unwrap()).collect();
    let d = Params::open(&paths[0], true).unwrap();
    assert_ne!(ptr(&d), ptr(&c), "the least recently used entry was dropped");
    let again = Params::open(&paths[4], true).unwrap();
    assert_eq!(ptr(&again), ptr(&others[3]), "recent entries stay cached");
}

fn key_ptr(p: &Params) -> *const std::ffi::c_void {
    unsafe { (*p.raw()).ptr }
}

#[test]
fn a_cached_file_rewritten_in_place_is_loaded_again() {
    let path = scratch("rewritten.params", &valid_file());
    let first = Params::open(&path, true).unwrap();
    // Same path, same inode, other contents (another circuit's key).
    let other = std::fs::read(common::keys(Kind::Mimc, 9).path).unwrap();
    std::fs::write(&path, &other).unwrap();
    let second = Params::open(&path, true).unwrap();
    assert_ne!(key_ptr(&first), key_ptr(&second), "the stale entry was served");
}

#[test]
fn evict_finds_the_entry_after_the_symlink_it_was_loaded_through_moved() {
    let a = scratch("evict-target-a.params", &valid_file());
    let b = scratch("evict-target-b.params", &valid_file());
    let link = a.with_file_name("evict-link.params");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let h = Params::open(&link, true).unwrap();
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&b, &link).unwrap();
    h.evict();
    let again = Params::open(&a, true).unwrap();
    assert_ne!(key_ptr(&h), key_ptr(&again), "evict_SRS left the entry of the file it was loaded from");
}

#[test]
fn simultaneous_first_loads_of_one_file_share_one_key() {
    let path = scratch("simultaneous.params", &valid_file());
    let barrier = std::sync::Barrier::new(4);
    let ptrs: Vec<usize> = std::thread::scope(|s| {
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let p = Params::open(&path, true).unwrap();
                    key_ptr(&p) as usize
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(ptrs.windows(2).all(|w| w[0] == w[1]), "loaded more than once: {ptrs:?}");
}

#[test]
fn sockets_and_unmappable_files_are_refused_with_params_file_errors() {
    let sock = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("srs-sock-{}", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    expect(open_err(&sock), EINVAL, &["not a regular file", "socket"]);
    std::fs::remove_file(&sock).unwrap();
    // /proc files that report size 0 and cannot be read.
    let e = open_err(Path::new("/proc/self/mem"));
    assert_eq!(e.code, EINVAL, "{}", e.message);
    assert!(e.message.contains("not a params file") && !e.message.contains("is empty"), "{}", e.message);
}

#[test]
fn evict_through_an_uncached_handle_drops_the_cached_entry_of_its_file() {
    let path = scratch("evict-uncached.params", &valid_file());
    let cached = Params::open(&path, true).unwrap();
    let uncached = Params::open(&path, false).unwrap();
    uncached.evict();
    let again = Params::open(&path, true).unwrap();
    assert_ne!(key_ptr(&cached), key_ptr(&again), "evict_SRS of any handle of a file drops its cache entry");
}

/// Uncompressed big-endian encoding of a G1 or G2 point, as in the file.
fn encode_g1(p: &G1Affine) -> Vec<u8> {
    p.to_uncompressed().to_vec()
}

/// A point outside the subgroup (a subgroup point plus a point of each prime
/// order of the cofactor) in every section, at a random index: each file is
/// refused by the batched check with the section, the point and its offset.
#[test]
fn torsion_of_every_prime_order_in_every_section_is_rejected_naming_the_point() {
    use rand::Rng;
    use supraseal_c2::srs::subgroup::testing::{g1_with_torsion, g2_with_torsion, G1_PRIMES, G2_PRIMES};
    let mut rng = common::rng();
    let base = valid_file();
    let sections = layout(&base);
    let count = |name: &str| {
        let (_, at, _) = sections.iter().find(|s| s.0 == name).unwrap();
        u32::from_be_bytes(base[*at..*at + 4].try_into().unwrap()) as usize
    };
    let mut cases = 0;
    for (name, which_max) in [("h", G1_PRIMES), ("l", G1_PRIMES), ("a", G1_PRIMES), ("b_g1", G1_PRIMES), ("b_g2", G2_PRIMES)] {
        for which in 0..which_max {
            let (_, _, first) = *sections.iter().find(|s| s.0 == name).unwrap();
            let k = rng.gen_range(0..count(name));
            let (enc, size) = if name == "b_g2" {
                (g2_with_torsion(which, &mut rng).0.to_uncompressed().to_vec(), 192)
            } else {
                (encode_g1(&g1_with_torsion(which, &mut rng).0), 96)
            };
            let at = first + k * size;
            let mut bytes = base.clone();
            bytes[at..at + size].copy_from_slice(&enc);
            let e = open_err(&scratch(&format!("torsion-{name}-{which}.params"), &bytes));
            expect(e, EINVAL, &[&format!("section {name} at byte offset {at}"), &format!("point {k}:"), "not in the prime-order subgroup"]);
            cases += 1;
        }
    }
    assert_eq!(cases, 4 * G1_PRIMES + G2_PRIMES);
}

/// A file truncated, or rewritten in place, while it is being loaded is an
/// error (EIO), never a SIGBUS: the loader reads with pread, not a mapping.
#[test]
fn a_file_truncated_or_rewritten_during_the_load_is_an_error() {
    use supraseal_c2::srs::{LoadOptions, Srs};
    let bytes = valid_file();
    let path = scratch("shrinks.params", &bytes);
    let once = std::sync::Once::new();
    let shrink = |_: u64, _: u64| once.call_once(|| std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(1000).unwrap());
    let e = Srs::load_with(&path, &LoadOptions { threads: Some(1), progress: Some(&shrink), ..Default::default() }).unwrap_err();
    assert_eq!(e.code, libc::EIO, "{}", e.message);
    assert!(e.message.contains("truncated or replaced during the load"), "{}", e.message);

    let path = scratch("rewritten-during-load.params", &bytes);
    let once = std::sync::Once::new();
    let rewrite = |_: u64, _: u64| {
        once.call_once(|| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::write(&path, &bytes).unwrap();
        })
    };
    let e = Srs::load_with(&path, &LoadOptions { threads: Some(1), progress: Some(&rewrite), ..Default::default() }).unwrap_err();
    assert_eq!(e.code, libc::EIO, "{}", e.message);
    assert!(e.message.contains("changed while it was being loaded"), "{}", e.message);
    // The same rewrite with the modification time put back: the inode change time still moves.
    let path = scratch("rewritten-same-mtime.params", &bytes);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let once = std::sync::Once::new();
    let rewrite_keep_mtime = |_: u64, _: u64| {
        once.call_once(|| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            std::io::Write::write_all(&mut &f, &bytes).unwrap();
            f.set_modified(mtime).unwrap();
        })
    };
    let e = Srs::load_with(&path, &LoadOptions { threads: Some(1), progress: Some(&rewrite_keep_mtime), ..Default::default() }).unwrap_err();
    assert_eq!(e.code, libc::EIO, "{}", e.message);
    // Untouched, the same file loads.
    assert!(Srs::load_with(&path, &LoadOptions { threads: Some(2), progress: None, ..Default::default() }).is_ok());
}

#[test]
fn the_check_demanded_on_a_gpu_is_enodev_without_one_whatever_the_file_size() {
    use supraseal_c2::config::CheckOn;
    use supraseal_c2::srs::{LoadOptions, Srs};
    // A small file: every vector under 2^16 points, which `auto` checks on the CPU.
    let path = scratch("small-gpu-check.params", &valid_file());
    let loaded = Srs::load_with(&path, &LoadOptions { check_on: Some(CheckOn::Gpu), ..Default::default() });
    match supraseal_c2::gpu::subgroup_device().unwrap() {
        None => {
            let Err(e) = loaded else { panic!("check_on gpu without a usable GPU must fail") };
            assert_eq!(e.code, libc::ENODEV, "{}", e.message);
            assert!(e.message.contains("no GPU is usable") && e.message.contains("small-gpu-check.params"), "{}", e.message);
        }
        Some(_) => {
            let (_, report) = loaded.unwrap();
            assert_eq!(report.device, None, "vectors under 2^16 points are checked on the CPU");
        }
    }
    let (_, report) = Srs::load_with(&path, &LoadOptions { check_on: Some(CheckOn::Auto), ..Default::default() }).unwrap();
    assert_eq!(report.device, None);
}
