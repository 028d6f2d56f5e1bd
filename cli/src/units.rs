//! Sizes and rates as the tool prints them: binary units throughout (GiB,
//! MiB, MiB/s), as the progress bars show them.

/// Bytes in GiB (two decimals), MiB below 1 GiB, KiB below 1 MiB.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// `bytes` in `secs` as a rate: `1.75 GiB/s`, `6.7 MiB/s`.
pub fn per_second(bytes_done: u64, secs: f64) -> String {
    format!("{}/s", bytes((bytes_done as f64 / secs.max(1e-9)) as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn binary_units() {
        assert_eq!(super::bytes(47_373_928_632), "44.12 GiB");
        assert_eq!(super::bytes(1_355_544), "1.3 MiB");
        assert_eq!(super::bytes(2048), "2.0 KiB");
        assert_eq!(super::per_second(3 << 30, 2.0), "1.50 GiB/s");
    }
}
